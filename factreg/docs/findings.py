"""What `docs lint` reports: one unsourced claim (or target) in a document, apart from the rules that find it
(factreg.docs.lint), so that findings kept in the document cache are shown without loading those rules."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One unsourced claim: where it is, its text, the number(s) as written and the normalised unit."""

    path: str  # as given
    line: int  # 1-based
    col: int  # 1-based, in characters
    text: str  # e.g. "28 tok/s", "30~60초", "3.1× slower", "11.9 ± 7.2 tok/s"
    value: str  # e.g. "28", "30~60", "3.1", "11.9 ± 7.2"
    unit: str  # e.g. "tok/s", "s", "ms", "×", "min", "%", "" (a bare spread)
    kind: str = "claim"  # "claim", "target" (a target, limit or setting) or "vetoed"; only claims fail the lint
    by: str = "rules"  # "rules"; "model" only from bench/claimmodel.py, an experiment that vetoes or adds
    rule: str = ""  # the id of the rule that reports it (factreg.docs.lint.rules): "FR101", …
