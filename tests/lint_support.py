"""Scoring `docs lint` against the labelled corpus (tests/data/lint_corpus.jsonl); used by tests and the bench.

Matching is claim-level, by span overlap. Each labelled claim is located in its sentence as the exact text given
(left to right, so a claim written twice is two spans). A predicted claim spans [col - 1, col - 1 + len(text)).

- A prediction is a true positive when it overlaps at least one labelled span, else a false positive.
- A label is found when at least one prediction overlaps it, else it is missed.
- precision = true positives / predictions; recall = found labels / labels; F1 their harmonic mean.

Overlap (not exact equality) because where a claim starts and ends is a matter of taste (`~4 s` or `4 s`,
`30초에서 60초` as one range or two durations); whether a number is flagged at all is what matters. Exact-span
agreement is reported alongside.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from factreg.docs.lint import lint_text

CORPUS = Path(__file__).parent / "data" / "lint_corpus.jsonl"
CLAIMS_BUILD = Path(__file__).parent / "data" / "claims-real" / "work" / "build.py"


def claims_build() -> ModuleType:
    """tests/data/claims-real/work/build.py, loaded afresh: the real-sentence corpus's builder, where the batches'
    names and order live once (used by tests/test_claims_corpus.py and the bench/ scripts that score the corpus)."""
    spec = importlib.util.spec_from_file_location("claims_real_build", CLAIMS_BUILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def label_spans(text: str, claims: list[str]) -> list[tuple[int, int]]:
    """Each labelled claim's (start, end) in `text`, left to right. A claim that begins or ends with a digit is
    first looked for where it is a whole number (`38321` in `| 383219 | 38321 |` is the second cell, not the first
    five digits of the other one; `300` is not the end of `1,300`), then anywhere."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for claim in claims:
        whole = re.compile(
            ("(?<![\\d.,])" if claim[:1].isdigit() else "")
            + re.escape(claim)
            + ("(?![\\d])(?![.,]\\d)" if claim[-1:].isdigit() else "")
        )
        m = whole.search(text, pos) or whole.search(text)
        i = m.start() if m else text.find(claim, pos)
        if i < 0:
            i = text.find(claim)
        if i < 0:
            raise ValueError(f"labelled claim {claim!r} is not in {text!r}")
        spans.append((i, i + len(claim)))
        pos = i + len(claim)
    return spans


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@dataclass
class Score:
    sentences: int = 0
    with_claims: int = 0
    labels: int = 0
    predictions: int = 0
    true_positives: int = 0
    found: int = 0
    exact: int = 0
    errors: list[dict] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.true_positives / self.predictions if self.predictions else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.labels if self.labels else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score(rows: list[dict]) -> Score:
    s = Score()
    for row in rows:
        text = row["text"]
        labels = label_spans(text, row["claims"])
        preds = [(f.col - 1, f.col - 1 + len(f.text)) for f in lint_text(text)]
        s.sentences += 1
        s.with_claims += bool(labels)
        s.labels += len(labels)
        s.predictions += len(preds)
        tp = [p for p in preds if any(_overlaps(p, lab) for lab in labels)]
        found = [lab for lab in labels if any(_overlaps(p, lab) for p in preds)]
        s.true_positives += len(tp)
        s.found += len(found)
        s.exact += len(set(preds) & set(labels))
        if len(tp) != len(preds) or len(found) != len(labels):
            s.errors.append({"text": text, "want": row["claims"], "got": [text[a:b] for a, b in preds]})
    return s


def sample(items: list, every: int = 4) -> list:
    """Every `every`-th item (all of them with FACTREG_FULL_CORPUS=1): the equivalence tests compare the lint's fast
    and reference paths on a quarter of each corpus; bench/lint_equivalence.py runs them on the whole."""
    import os

    return list(items) if os.environ.get("FACTREG_FULL_CORPUS") == "1" else list(items)[::every]
