"""JSONL export and import: lossless backups and git-based sync of a registry.

Each line is one JSON object with a `kind`:
- `fact`: a fact with every version (samples, conditions, raw output) and every verification, as exported;
- `decision`, `correction`: decision records and corrections, as exported;
- `record` (or no kind): one new measurement in the shape of `factreg record`'s options — the
  reviewable format of hand-written data such as the case study in `facts/`.
Export → import into an empty registry → export gives identical bytes. A version's provenance travels with it
(`recorded_by`, `origin`, `source`, `registry_id`, `trust`); an imported method runs only once this registry trusts
it (registry/provenance.py).

The package, one module per job: `export` (the lines written), `parse` (JSONL text read strictly), `lines` (each
kind of line checked as the command that writes it checks it) and `importing` (the lines written in one
transaction). Callers use the names below, `from factreg.registry import jsonl`.
"""

from __future__ import annotations

from factreg.registry.jsonl.export import dumps, export, export_lines
from factreg.registry.jsonl.importing import import_files, import_lines
from factreg.registry.jsonl.lines import record_line
from factreg.registry.jsonl.parse import LINE_KINDS, MAX_LINE, is_line, parse_text, read_lines

__all__ = ["LINE_KINDS", "MAX_LINE", "dumps", "export", "export_lines", "import_files", "import_lines", "is_line",
           "parse_text", "read_lines", "record_line"]
