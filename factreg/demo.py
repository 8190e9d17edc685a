"""The demo: the case study (facts/case-study.jsonl) replayed on a temporary registry."""

from __future__ import annotations

import sys
import tempfile
from importlib import resources
from pathlib import Path

from factreg import facts, fmt, jsonl
from factreg.store import Registry


def case_study_file(name: str) -> Path:
    """A file of the embedded case study (shipped as the package `factreg.casestudy`)."""
    return Path(str(resources.files("factreg.casestudy").joinpath(name)))


def say(text: str = "") -> None:
    print(text, file=sys.stdout)


def run(directory: Path | None = None, live: bool | None = None) -> Path:
    """Replay the story; return the folder it worked in."""
    work = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="factreg-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    reg = Registry(f"sqlite:///{work / 'registry.db'}")
    counts = jsonl.import_files(reg, [case_study_file("case-study.jsonl")])
    say(f"Recorded the case study: {counts['versions']} facts in {work / 'registry.db'}")
    for f in facts.list_facts(reg):
        say(f"  {f['id']:<30} {f['metric']:<12} {fmt.value(f['value'], f['spread'], f['unit']):>18}  "
            f"{', '.join(f['flags'])}")
    return work
