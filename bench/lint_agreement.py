"""How far two people labelling by the same policy agree: the ceiling for `docs lint` on real sentences.

Samples of 200 sentences of a batch of tests/data/claims-real/corpus.jsonl (100 English, 100 Korean, drawn with a
seed of 7) were labelled a second time, by a second labeller who saw the policy (the README's "Labelling policy")
and the sentences with their sources, never the first labels: tests/data/claims-real/agreement/
second_labels.tsv (`fresh2`) and second_labels_fresh6.tsv (`fresh6`), lines `id<TAB>kind<TAB>spans<TAB>note`,
kind C/T/N. Reported per batch and language: agreement and Cohen's kappa on the three kinds and on claim / not a
claim, and the second labeller scored as if it were the lint (precision and recall of its claim sentences against
the first labels, Wilson 95% intervals).
Run: `python bench/lint_agreement.py` (writes bench/results/lint_agreement.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, write_section  # noqa: E402
from lint_real import ratio  # noqa: E402

DATA = ROOT / "tests" / "data" / "claims-real"
KIND = {"claim": "C", "target": "T", "none": "N"}


def kappa(pairs: list[tuple[object, object]]) -> tuple[float, float]:
    """Observed agreement and Cohen's kappa of two labellings."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    cats = {a for a, _ in pairs} | {b for _, b in pairs}
    chance = sum((sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n) for c in cats)
    return observed, (observed - chance) / (1 - chance) if chance < 1 else 1.0


def main() -> None:
    rows = {r["id"]: r for r in map(json.loads, (DATA / "corpus.jsonl").read_text(encoding="utf-8").splitlines())}
    files = sorted((DATA / "agreement").glob("second_labels*.tsv"))
    lines = [
        "## Lint on real sentences: how far two labellers agree",
        "",
        "| batch | language | sentences | same kind (C/T/N) | kappa | same claim / not | kappa | second labeller's "
        "precision [95% CI] | recall [95% CI] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for path in files:
        second = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        lines += _rows(rows, second)
    text = "\n".join(lines) + "\n"
    write_section("lint_agreement", text)
    print(text)


def _rows(rows: dict[str, dict], second: list[list[str]]) -> list[str]:
    """The table's rows for one second labelling (one per language)."""
    out = []
    batch = rows[second[0][0]]["split"]
    for lang in ("en", "ko"):
        pairs = [(KIND[rows[s[0]]["kind"]], s[1]) for s in second if rows[s[0]]["lang"] == lang]
        claim = [(a == "C", b == "C") for a, b in pairs]
        same, k3 = kappa(pairs)  # type: ignore[arg-type]
        same2, k2 = kappa(claim)  # type: ignore[arg-type]
        tp = sum(a and b for a, b in claim)
        said = sum(b for _, b in claim)
        truth = sum(a for a, _ in claim)
        out.append(
            f"| `{batch}` | {lang} | {len(pairs)} | {same:.3f} | {k3:.3f} | {same2:.3f} | {k2:.3f} | {ratio(tp, said)} "
            f"| {ratio(tp, truth)} |"
        )
    return out


if __name__ == "__main__":
    main()
