"""Each lint rule's precision on the labelled real sentences, the default set chosen from it, and the scores of the
default set and of every rule (`--all`) per split and language, with Wilson 95% intervals.

Splits (issue 31): `tune` — every batch of tests/data/claims-real/corpus.jsonl the rules were tuned on (`tune`,
`unseen`, `fresh` … `fresh5`); `select` — the batch `fresh6` and the earlier final batches (final31.jsonl up to the
one before NEWEST, each scored once and since then read to split rules by context), on which each rule's precision
decides whether it is in the default set (a rule below 0.95 is a preview rule; with fewer than 5 findings there, the
tune split decides); `final` — the newest final batch (finalNN.jsonl, NN = NEWEST), labelled before the lint ran on
it and scored once with the final rules (`--final`; without it the final batch is neither linted nor shown). A new
round moves NEWEST on by one.

Span level, as bench/lint_real.py: a finding is right when it overlaps a labelled claim span; a span is found when
a finding overlaps it. Table cells: the claim spans of sentences that are table rows.
Run: `python bench/lint_rules_select.py [--final]`.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from lint_real import document, load, overlaps, wilson  # noqa: E402

from factreg.docs.lint import lint_text  # noqa: E402
from factreg.docs.lint.rules import all_rules, selected  # noqa: E402
from tests.lint_support import label_spans  # noqa: E402

# The rules whose precision's Wilson lower bound reaches 0.90 on the select split (on the tune split when they have
# fewer than 5 findings there): a review gate's `[lint] select` that wants the bound as well, scored beside the
# default set.
STRICT = frozenset(
    {"FR101", "FR104", "FR111", "FR114", "FR115", "FR116", "FR117", "FR121", "FR122", "FR131", "FR151", "FR153", "FR155"}
)  # with final45 in the select split (FR142's 16 of 16 and FR157's 22 of 22 have lower bounds of 0.81 and 0.85)

DATA = ROOT / "tests" / "data" / "claims-real"
NEWEST = 86  # the final batch not yet scored: final86; every one before it, from final31, is in the select split
FINAL = DATA / f"final{NEWEST}.jsonl"
# issue 31's earlier final batches: each scored once, then part of the select split
SCORED = tuple(DATA / f"final{n}.jsonl" for n in range(31, NEWEST))
SELECT = ("fresh6", *(path.stem for path in SCORED))


def split_of(r: dict) -> str:
    return "final" if r["split"] == FINAL.stem else "select" if r["split"] in SELECT else "tune"


def findings(rows: list[dict]) -> dict[str, list[tuple[int, int, str]]]:
    """(start, end, rule) of each claim the lint (every rule) finds on each sentence."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for r in rows:
        text, line = document(r)
        found = []
        for f in lint_text(text):
            if f.line == line:
                found.append((f.col - 1, f.col - 1 + len(f.text), f.rule))
        out[r["id"]] = found
    return out


def fmt(k: int, n: int) -> str:
    if n == 0:
        return "–"
    lo, hi = wilson(k, n)
    return f"{k / n:.3f} ({k}/{n}) [{lo:.2f}, {hi:.2f}]"


def is_row(r: dict) -> bool:
    return r["text"].lstrip().startswith("|") or bool(r.get("table"))


def score(rows: list[dict], found: dict, rules: frozenset[str]) -> dict[str, tuple[int, int]]:
    right = n_find = spans = hit = cells = cells_hit = 0
    for r in rows:
        got = [(a, b) for a, b, rule in found[r["id"]] if rule in rules]
        claims = label_spans(r["text"], r["spans"])
        n_find += len(got)
        right += sum(any(overlaps(g, c) for c in claims) for g in got)
        spans += len(claims)
        k = sum(any(overlaps(g, c) for g in got) for c in claims)
        hit += k
        if is_row(r):
            cells += len(claims)
            cells_hit += k
    return {"precision": (right, n_find), "recall": (hit, spans), "table recall": (cells_hit, cells)}


def per_rule(rows: list[dict], found: dict) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        claims = label_spans(r["text"], r["spans"])
        for a, b, rule in found[r["id"]]:
            out[rule][1] += 1
            out[rule][0] += any(overlaps((a, b), c) for c in claims)
    return {k: (v[0], v[1]) for k, v in out.items()}


def main() -> None:
    rows = load() + [r for path in SCORED for r in load(path)]
    if "--final" in sys.argv:
        if not FINAL.exists():
            print(f"Error: no final batch yet ({FINAL.relative_to(ROOT)}; build it with work/build.py --final"
                  f" {FINAL.stem})", file=sys.stderr)
            raise SystemExit(2)
        final = load(FINAL)
        if len(final) < 600:  # a final batch is scored once, and only once it is whole (issue 31)
            print(f"Error: {FINAL.relative_to(ROOT)} holds {len(final)} sentences; a final batch needs 600 before it"
                  " is scored", file=sys.stderr)
            raise SystemExit(2)
        rows += final
    found = findings(rows)
    splits = ["tune", "select"] + (["final"] if "--final" in sys.argv else [])
    print("## Each rule's precision (span level), per split\n")
    print("| rule | set | " + " | ".join(splits) + " |")
    print("|---|---|" + "---|" * len(splits))
    by_split = {s: per_rule([r for r in rows if split_of(r) == s], found) for s in splits}
    for rule in all_rules():
        if rule.kind != "claim":
            continue
        cells = [fmt(*by_split[s].get(rule.id, (0, 0))) for s in splits]
        print(f"| {rule.id} {rule.name} | {'preview' if rule.preview else 'default'} | " + " | ".join(cells) + " |")
    print("\n## The default set and every rule (`--all`), per split and language\n")
    print("| split | language | set | span precision | span recall | table-cell recall |")
    print("|---|---|---|---|---|---|")
    for s in splits:
        for lang in ("en", "ko"):
            part = [r for r in rows if split_of(r) == s and r["lang"] == lang]
            for name, rules in (("default", selected()), ("--all", selected(preview=True)), ("strict", STRICT)):
                sc = score(part, found, rules)
                print(
                    f"| {s} | {lang} | {name} | {fmt(*sc['precision'])} | {fmt(*sc['recall'])} "
                    f"| {fmt(*sc['table recall'])} |"
                )


if __name__ == "__main__":
    main()
