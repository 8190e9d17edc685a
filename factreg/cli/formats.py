"""Findings in the formats CI systems read: GitHub workflow commands and SARIF 2.1.0 (`--format github|sarif`).

One shape, `Finding`, for what `docs check`, `docs lint`, `status` and `verify` report; each command keeps its own
text and JSON output and turns its records into findings for these two. GitHub: one `::error|warning|notice
file=…,line=…,col=…,title=…::message` line per finding, data escaped (`%`, CR, LF) and properties escaped (also
`:` and `,`) as GitHub's toolkit does. SARIF: one run of the `factreg` tool, one rule per finding kind (with its
fix as help text), results with physical locations (a path relative to the repository root, as given) or a logical
one (a fact id) when the finding is about a fact rather than a line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from factreg.errors import UsageError

FORMATS = ("text", "json", "github", "sarif")
LEVELS = ("error", "warning", "note")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/factreg/factreg"


@dataclass(frozen=True)
class Finding:
    """One thing to show in review: a rule (the finding's kind), where, how bad, what, and how to fix it."""

    rule: str
    message: str
    path: str | None = None
    line: int = 0  # 1-based; 0: the file (or fact) as a whole
    col: int = 0  # 1-based; 0: unknown
    level: str = "error"  # error | warning | note
    fix: str = ""
    fact_id: str | None = None
    title: str | None = None


def choose(fmt: str | None, json_flag: bool) -> str:
    """The output format from `--format` and the `--json` short form; UsageError when they disagree."""
    if fmt is None:
        return "json" if json_flag else "text"
    fmt = fmt.strip().lower()
    if fmt not in FORMATS:  # a plugin's format, else refused (plugins are looked for only now)
        from factreg import plugins

        if plugins.output_format(fmt) is None:
            known = ", ".join(plugins.loaded().output_formats)
            raise UsageError(f"--format must be one of {known}, got {fmt!r}")
    if json_flag and fmt != "json":
        raise UsageError(f"--json is --format json: give one of them, not --json with --format {fmt}")
    return fmt


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does (`%`, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped as GitHub's toolkit does (`%`, CR, LF, `:`, `,`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def github(findings: Iterable[Finding], rules: Mapping[str, str] | None = None,
           properties: Mapping[str, Any] | None = None) -> str:
    """One workflow command per finding (annotations on the pull request's changed files); a renderer's `rules`
    and `properties` (SARIF's) have no place in them."""
    lines = []
    for f in findings:
        props: list[tuple[str, str]] = []
        if f.path:
            props.append(("file", PurePath(f.path).as_posix()))
            if f.line > 0:
                props.append(("line", str(f.line)))
                if f.col > 0:
                    props.append(("col", str(f.col)))
        props.append(("title", f.title or (f"{f.rule}: {f.fact_id}" if f.fact_id else f.rule)))
        head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
        message = f.message + (f"\nfix: {f.fix}" if f.fix else "")
        lines.append(f"::{_GITHUB_LEVEL.get(f.level, 'error')} {head}::{escape_data(message)}\n")
    return "".join(lines)


def _uri(path: str) -> dict[str, Any]:
    """A path as a SARIF artifact URI: its bytes percent-encoded (a name that is not UTF-8 included, `%FF`)."""
    p = Path(path)
    raw = os.fsencode(p.as_posix())
    if p.is_absolute():
        return {"uri": "file://" + quote(raw, safe="/")}
    return {"uri": quote(raw, safe="/"), "uriBaseId": "%SRCROOT%"}


def sarif(
    findings: Iterable[Finding],
    rules: Mapping[str, str] | None = None,
    properties: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run; `rules` describes each finding kind (its short description)."""
    from factreg import __version__

    found = list(findings)
    kinds: list[str] = []
    helps: dict[str, str] = {}
    for f in found:
        if f.rule not in kinds:
            kinds.append(f.rule)
            helps[f.rule] = f.fix
    driver: dict[str, Any] = {
        "name": "factreg",
        "version": str(__version__),
        "informationUri": INFO_URI,
        "rules": [
            {
                "id": kind,
                "name": "".join(w.capitalize() for w in kind.replace("-", "_").split("_")),
                "shortDescription": {"text": (rules or {}).get(kind) or kind.replace("_", " ")},
                **({"help": {"text": helps[kind]}} if helps[kind] else {}),
            }
            for kind in kinds
        ],
    }
    results = []
    for f in found:
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": kinds.index(f.rule),
            "level": f.level if f.level in LEVELS else "error",
            "message": {"text": f.message},
        }
        if f.path:
            physical: dict[str, Any] = {"artifactLocation": _uri(f.path)}
            if f.line > 0:
                physical["region"] = {"startLine": f.line, **({"startColumn": f.col} if f.col > 0 else {})}
            result["locations"] = [{"physicalLocation": physical}]
        elif f.fact_id:
            result["locations"] = [{"logicalLocations": [{"fullyQualifiedName": f.fact_id, "kind": "fact"}]}]
        props = {k: v for k, v in (("fix", f.fix), ("factId", f.fact_id)) if v}
        if props:
            result["properties"] = props
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
        "results": results,
    }
    if properties:
        run["properties"] = dict(properties)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
