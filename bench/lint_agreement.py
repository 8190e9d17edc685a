"""How far two people labelling by the same policy agree: the ceiling for `docs lint` on real sentences.

200 sentences of the `fresh2` batch of tests/data/claims-real/corpus.jsonl (100 English, 100 Korean, drawn with
`random.seed(7)`) were labelled a second time, by a second labeller who saw the policy (the README's "Labelling
policy") and the sentences with their sources, never the first labels: tests/data/claims-real/agreement/
second_labels.tsv (`id<TAB>kind<TAB>spans<TAB>note`, kind C/T/N). Reported per language: agreement and Cohen's
kappa on the three kinds and on claim / not a claim, and the second labeller scored as if it were the lint
(precision and recall of its claim sentences against the first labels, Wilson 95% intervals).
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
    second = [
        line.split("\t") for line in (DATA / "agreement" / "second_labels.tsv").read_text(encoding="utf-8").splitlines()
    ]
    lines = [
        "## Lint on real sentences: how far two labellers agree",
        "",
        "| language | sentences | same kind (C/T/N) | kappa | same claim / not | kappa | second labeller's precision "
        "[95% CI] | recall [95% CI] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for lang in ("en", "ko"):
        pairs = [(KIND[rows[s[0]]["kind"]], s[1]) for s in second if rows[s[0]]["lang"] == lang]
        claim = [(a == "C", b == "C") for a, b in pairs]
        same, k3 = kappa(pairs)  # type: ignore[arg-type]
        same2, k2 = kappa(claim)  # type: ignore[arg-type]
        tp = sum(a and b for a, b in claim)
        said = sum(b for _, b in claim)
        truth = sum(a for a, _ in claim)
        lines.append(
            f"| {lang} | {len(pairs)} | {same:.3f} | {k3:.3f} | {same2:.3f} | {k2:.3f} | {ratio(tp, said)} "
            f"| {ratio(tp, truth)} |"
        )
    text = "\n".join(lines) + "\n"
    write_section("lint_agreement", text)
    print(text)


if __name__ == "__main__":
    main()
