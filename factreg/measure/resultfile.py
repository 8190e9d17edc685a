"""Which format a file to import is in, recognised by its content (`factreg import FILE` without a format name).

factreg JSONL (an export, or record lines), llama-bench output (JSON, JSONL, CSV, Markdown tables, SQL text or a
SQLite database), `vllm bench serve --save-result` JSON, AIPerf's profile_export_aiperf.json and llama-benchy's
JSON. Each tool's signature lives with its reader (`llamabench_output.sniff` and `is_result`,
`serving_import.SIGNATURES`, `registry/jsonl.is_line`); this module only asks them, in an order where no two can
claim one file. A file none of them claims is offered to the importers of installed plugins (`recognise(path)`,
factreg/plugins/), and refused with one line naming the formats factreg and its plugins know when none claims it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import textfile
from factreg.errors import BadInput

if TYPE_CHECKING:
    from factreg import plugins

HEAD_BYTES = 1 << 20  # how much of a file the first look reads (a JSON document is read whole when it must be)
SQLITE = b"SQLite format 3\0"


@dataclass(frozen=True)
class Recognised:
    """A file's format (an importer's name) and, for llama-bench output, which of its formats (`json`, `md`, …)."""

    format: str
    variant: str | None = None

    def describe(self) -> str:
        """`llama-bench output (JSON)`, `factreg JSONL`."""
        if self.format == "llama-bench":
            return f"llama-bench output ({(self.variant or '').upper() if self.variant != 'md' else 'Markdown'})"
        names = known()
        return names[self.format] if self.format in names else known(discover=True)[self.format]


def known(discover: bool = False) -> dict[str, str]:
    """The formats `import` names (the built-ins', and with `discover` the plugins'), and how a message names each."""
    from factreg import plugins

    return {name: i.description for name, i in plugins.loaded(discover).importers.items()}


class Unrecognised(BadInput):
    """No reader claims the file."""


def unknown(path: Path | str, why: str = "") -> BadInput:
    """The one line for a file no reader claims."""
    names = known(discover=True)
    return Unrecognised(f"{path}: not a format factreg recognises{f' ({why})' if why else ''}; it reads "
                        f"{'; '.join(names.values())} — name one to be sure: factreg import {'|'.join(names)} FILE")


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError as exc:
        raise BadInput(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _one_object(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # nested past Python's limit: not a line a reader claims by its shape
        return None
    return value if isinstance(value, dict) else None


def recognise(path: Path) -> Recognised:
    """The format of `path` by its content; BadInput (one line naming the known formats) when no reader claims it."""
    try:
        return _builtin(path)
    except Unrecognised:
        from factreg import plugins

        for name, importer in plugins.loaded().importers.items():
            if importer.recognise is not None and _claims(importer.recognise, path):
                return Recognised(name)
        raise


def _claims(recognise: plugins.Ref, path: Path) -> bool:
    """Whether a plugin's recogniser claims the file; one that raises claims nothing."""
    from factreg import plugins

    try:
        return bool(plugins.load(recognise)(path))
    except Exception:  # noqa: BLE001 - a plugin's bug must not stop the others from being asked
        return False


def _builtin(path: Path) -> Recognised:
    """The built-in format of `path`, asked of each reader's signature in an order where no two claim one file."""
    from factreg.measure import llamabench_output as lbo
    from factreg.measure import serving_import, serving_values
    from factreg.registry import jsonl

    head = _head(path)
    if not head.strip():
        raise BadInput(f"{path}: the file is empty")
    if head.startswith(SQLITE):
        return Recognised("llama-bench", "sqlite")
    if b"\0" in head:
        raise unknown(path, "a binary file")
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff")
    stripped = text.lstrip()
    first = stripped.split("\n", 1)[0].strip()
    if stripped.startswith("{"):
        obj = _one_object(first)
        if obj is not None:  # an object on its first line: JSONL, or a one-line JSON document
            if lbo.is_result(obj):
                return Recognised("llama-bench", "jsonl")
            if jsonl.is_line(obj):
                return Recognised("jsonl")  # its reader judges every line (a broken one later is its error)
            data: Any = obj
        else:  # a JSON document over several lines: read whole, as its reader will
            try:
                data = serving_values.load_json(path)
            except BadInput:  # not JSON as a whole either: lines of JSON, one broken; the JSONL reader says where
                return Recognised("jsonl")
        for tool, signature in serving_import.SIGNATURES.items():
            if signature(data):
                return Recognised(tool)
        raise unknown(path, "JSON that no reader claims")
    if stripped.startswith("["):
        try:
            data = json.loads(textfile.decode(textfile.read_bytes(path, max_bytes=lbo.MAX_INPUT_BYTES), str(path)))
        except (ValueError, RecursionError):
            raise unknown(path, "not valid JSON") from None
        if isinstance(data, list) and data and lbo.is_result(data[0]):
            return Recognised("llama-bench", "json")
        raise unknown(path, "a JSON array that is not llama-bench results")
    whole = textfile.decode(textfile.read_bytes(path, max_bytes=lbo.MAX_INPUT_BYTES), str(path))
    try:
        variant = lbo.sniff(whole)
    except BadInput:
        raise unknown(path) from None
    return Recognised("llama-bench", variant)
