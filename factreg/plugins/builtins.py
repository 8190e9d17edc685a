"""factreg's own verifiers, importers, output formats and notifiers, registered through the plugin hooks like any
plugin's (`factreg plugins` lists them as `factreg`). References, not imports: nothing here imports what it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from factreg.plugins import Importer, Notifier, OutputFormat, Verifier
from factreg.plugins.hookspecs import hookimpl


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(Verifier("llama-bench", "factreg.measure.llamabench:remeasure", measures="tg_rate, pp_rate (tok/s)",
                      conditions="the build, model file and hash, backend and threads llama-bench reports"))
    register(Verifier("probe", "factreg.measure.probe:remeasure",
                      measures="ttft, e2e, decode_rate and their percentiles",
                      conditions="the served model and build (/v1/models, /props), thinking observed"))
    register(Verifier("sweep", "factreg.measure.sweep:remeasure", measures="capacity (goodput under SLOs)",
                      conditions="as the probe's"))


@hookimpl
def register_importers(register: Callable[[Any], None]) -> None:
    register(Importer("jsonl", "factreg JSONL", "factreg.registry.jsonl:import_files"))
    register(Importer("llama-bench", "llama-bench output (JSON, JSONL, CSV, Markdown, SQL, SQLite)",
                      "factreg.measure.llamabench_facts:import_files"))
    register(Importer("vllm-bench", "vLLM bench serve JSON", "factreg.measure.serving_import:import_files"))
    register(Importer("aiperf", "AIPerf profile_export_aiperf.json", "factreg.measure.serving_import:import_files"))
    register(Importer("llama-benchy", "llama-benchy JSON", "factreg.measure.serving_import:import_files"))


@hookimpl
def register_output_formats(register: Callable[[Any], None]) -> None:
    register(OutputFormat("text", "for people (each command's own)"))
    register(OutputFormat("json", "JSON (each command's own; as --json)", produces="json"))
    register(OutputFormat("github", "GitHub workflow commands: annotations on a pull request",
                          "factreg.cli.formats:github"))
    register(OutputFormat("sarif", "SARIF 2.1.0, for code scanning", "factreg.cli.formats:sarif", produces="json"))


@hookimpl
def register_notifiers(register: Callable[[Any], None]) -> None:
    register(Notifier("webhook", "an HTTP POST of JSON with a Slack/Mattermost-compatible `text` field",
                      "factreg.notify.channels:webhook"))
    register(Notifier("smtp", "e-mail over SMTP with STARTTLS (credentials from the environment, by name)",
                      "factreg.notify.channels:smtp"))
    register(Notifier("command", "a program run with the message on its standard input",
                      "factreg.notify.channels:command"))
