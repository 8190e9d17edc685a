"""The shape of the command line in tables: which help panel each command sits in, the metavar of each option,
and the lines `factreg` prints with no arguments.

A new command adds one line to PANELS (tests/test_cli_shape.py fails on a command that belongs to no panel).
This module imports nothing but the standard library: the completion entry point (factreg/completion.py) reads
the command names from here without importing typer.
"""

from __future__ import annotations

# The panels of `factreg --help`, in the order they are shown.
MEASURE, READ, CHECK, PUBLISH, SETUP = "Measure", "Read", "Check", "Publish", "Set up"
PANEL_ORDER = (MEASURE, READ, CHECK, PUBLISH, SETUP)

# command name -> panel
PANELS: dict[str, str] = {
    "record": MEASURE,
    "bench": MEASURE,
    "probe": MEASURE,
    "import": MEASURE,
    "method": MEASURE,
    "sweep": MEASURE,
    "show": READ,
    "list": READ,
    "history": READ,
    "verify": CHECK,
    "status": CHECK,
    "compare": CHECK,
    "docs": CHECK,
    "changes": CHECK,
    "cite": CHECK,
    "correct": PUBLISH,
    "retract": PUBLISH,
    "rm": PUBLISH,
    "mv": PUBLISH,
    "report": PUBLISH,
    "decision": PUBLISH,
    "init": SETUP,
    "env": SETUP,
    "metrics": SETUP,
    "plugins": SETUP,
    "export": SETUP,
    "prune": SETUP,
    "demo": SETUP,
    "completion": SETUP,
    "mcp": SETUP,
}

# The commands of the command groups (shell completion offers them without importing the CLI).
SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "docs": ("check", "sync", "cites", "lint", "coverage"),
    "decision": ("add", "list", "show", "revert", "supersede"),
}

# Commands whose first argument(s) are fact ids (shell completion offers the registry's ids there).
TAKES_FACT_IDS = frozenset({"record", "show", "history", "verify", "compare", "changes", "correct", "retract",
                            "cite", "cites", "method", "rm", "mv"})
# Options whose value is a fact id (by command), and options whose value is a metric name.
FACT_ID_OPTIONS: dict[str, frozenset[str]] = {"correct": frozenset({"--by"})}
METRIC_OPTIONS = frozenset({"--metric", "-m"})
# Short options that take a value (the long ones are the keys of METAVARS).
SHORT_VALUE_OPTIONS = frozenset({"-m", "-c", "-i", "-o", "-H"})

# `factreg` with no arguments: five lines to start from.
START_HERE = """\
factreg: performance facts for local LLM servers, each with its conditions, re-verified (--help: every command).
  factreg demo                                  replay the case study in a temporary folder, no server needed
  factreg init                                  create .factreg/ here: a registry and its config.toml
  factreg record ID -m METRIC --value V -c K=V  record a measurement as a fact with its conditions
  factreg docs check                            check the facts your Markdown cites are still fresh
"""

# Readable metavars by option name (the first long name); any option not named here gets one from its type.
METAVARS: dict[str, str] = {
    "--db": "URL|FILE",
    "--metric": "METRIC",
    "--value": "NUMBER",
    "--samples": "X,Y,...",
    "--unit": "UNIT",
    "--spread": "NUMBER",
    "--n": "N",
    "--warmup": "N",
    "--cond": "KEY=VALUE",
    "--info": "KEY=VALUE",
    "--expect": "KEY=VALUE",
    "--header": "NAME:VALUE",
    "--subject": "SUBJECT",
    "--measured-at": "DATE",
    "--server-started-at": "DATE",
    "--since": "DATE",
    "--date": "DATE",
    "--review-by": "DATE",
    "--warn-after": "DURATION",
    "--error-after": "DURATION",
    "--budget": "DURATION",
    "--tolerance": "FRACTION",
    "--alpha": "P",
    "--direction": "higher|lower",
    "--note": "TEXT",
    "--because": "REASON",
    "--cause": "TEXT",
    "--context": "TEXT",
    "--outcome": "TEXT",
    "--status": "STATUS",
    "--body": "FILE",
    "--timeout": "SECONDS",
    "--min-uptime": "SECONDS",
    "--spacing": "SECONDS",
    "--api-key-env": "VAR",
    "--record": "PREFIX",
    "--id-prefix": "PREFIX",
    "--id": "PREFIX",
    "--allow-different": "KEY",
    "--cites": "ID[@V],...",
    "--driver": "COMPARISON",
    "--against": "URL",
    "--probe": "URL",
    "--verification": "N",
    "--version": "N",
    "--llama-bench": "FILE",
    "--out": "FILE",
    "--dir": "DIR",
    "--templates": "DIR",
    "--limit": "N",
    "--sort": "FIELD",
    "--columns": "FIELD,...",
    "--min-segment": "N",
}
# By the value's python type when the option is not in METAVARS.
TYPE_METAVARS: dict[str, str] = {"str": "TEXT", "int": "N", "float": "NUMBER", "Path": "FILE", "bool": "",
                                 "datetime": "DATE"}
