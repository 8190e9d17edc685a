"""Quality of `factreg docs lint` on real sentences by other authors: tests/data/claims-real/corpus.jsonl.

Each sentence is written as a one-paragraph Markdown file and the whole folder is linted with `lint_paths`, the
function `factreg docs lint` calls, with its default options. Scores, per language and per split (`tune`,
`unseen`, `fresh` when the corpus has it, and `all`), with Wilson 95% intervals:

- sentence level: a sentence is predicted positive when the lint reports anything in it; precision and recall
  against the `claim` label;
- span level: a finding is right when it overlaps a labelled claim span, a labelled span is found when a finding
  overlaps it (as in tests/lint_support.py); "exact" counts findings with exactly a labelled span's start and end;
- targets: how many `target` sentences get a finding, and how many target numbers (`targets`, in any sentence)
  a finding overlaps — targets and settings reported as claims.

Splits: `tune` and `unseen` (a third of the first batch, by a hash of the id), then the later batches, oldest first
(`LATER` in tests/data/claims-real/work/build.py, label files `work/BATCH_*`): `fresh`, `fresh2` … `fresh5` have each
been scored once (bench/results/lint_real_fresh*.md), so the rules may be tuned on them; the newest, `fresh6`, is
kept for scoring rules that never saw it.

Table rows: a sentence that is a table row whose source gives the table's header (`header`, from
work/tables_*.tsv) is linted under that header and a separator row, as the lint reads a table in a document; pass
`--no-headers` to lint every sentence alone as a one-line paragraph (how every batch up to `fresh5` was first
scored).

Prints the tables and writes bench/results/lint_real_baseline.md (pass `--out NAME` for another file name under
bench/results/). Disagreements are listed for every split but the newest, whose sentences are never shown.
Run: `python bench/lint_real.py`; while changing the rules, `python bench/lint_real.py --tune-only [--quiet]`
scores every sentence but the newest batch's (those are neither linted nor shown), lists their disagreements
(unless `--quiet`) and writes nothing.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import machine, write_section  # noqa: E402

from factreg.docs.lint import lint_paths  # noqa: E402
from tests.lint_support import claims_build, label_spans  # noqa: E402  (labelled substrings → offsets, one rule)

BUILD = claims_build()  # the batches' names and order, kept once in tests/data/claims-real/work/build.py

CORPUS = ROOT / "tests" / "data" / "claims-real" / "corpus.jsonl"
Span = tuple[int, int]


def load(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def overlaps(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for k successes out of n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


HEADERS = "--no-headers" not in sys.argv  # table rows under the header row their source gives them


def document(r: dict) -> tuple[str, int]:
    """The Markdown document a sentence is linted as, and the line the sentence is on. A table row whose source's
    header is known (`header`, tests/data/claims-real/work/tables_*.tsv) sits under that header and a separator
    row, as the lint reads it in a document, below the caption its source gives (`caption`), if any; every other
    sentence is a one-line paragraph."""
    header = r.get("header") if HEADERS else None
    if not header:
        return r["text"] + "\n", 1
    cells = max(1, header.strip().strip("|").count("|") + 1)
    caption = r.get("caption")  # the line naming the table's unit, a paragraph above it
    above = f"{caption}\n\n" if caption else ""
    return f"{above}{header}\n|{'---|' * cells}\n{r['text']}\n", 5 if caption else 3


def run_lint(rows: list[dict]) -> dict[str, list[tuple[int, int, str]]]:
    """Findings of `docs lint` for each sentence id: (start, end, text) on the sentence (findings in a table's
    header, which is not the labelled sentence, are left out)."""
    found: dict[str, list[tuple[int, int, str]]] = {r["id"]: [] for r in rows}
    line_of: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="factreg-lint-real-") as tmp:
        folder = Path(tmp)
        for r in rows:
            text, line_of[r["id"]] = document(r)
            (folder / f"{r['id']}.md").write_text(text, encoding="utf-8")
        for f in lint_paths([folder]):
            id_ = Path(f.path).stem
            if f.line != line_of[id_]:
                continue
            start = f.col - 1
            found[id_].append((start, start + len(f.text), f.text))
    return found


@dataclass
class Score:
    sentences: int = 0
    positives: int = 0  # sentences labelled claim
    predicted: int = 0  # sentences with a finding
    tp: int = 0  # labelled claim and predicted
    labels: int = 0  # claim spans
    found: int = 0  # claim spans overlapped by a finding
    findings: int = 0
    right: int = 0  # findings overlapping a claim span
    exact: int = 0
    targets: int = 0  # target sentences
    targets_flagged: int = 0
    target_spans: int = 0
    target_spans_flagged: int = 0
    none: int = 0  # sentences labelled none
    none_flagged: int = 0
    misses: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)


def score(rows: list[dict], preds: dict[str, list[tuple[int, int, str]]]) -> Score:
    s = Score()
    for r in rows:
        text = r["text"]
        got = preds[r["id"]]
        got_spans = [(a, b) for a, b, _ in got]
        claims = label_spans(text, r["spans"])
        targets = label_spans(text, r.get("targets", []))
        s.sentences += 1
        s.positives += r["claim"]
        s.predicted += bool(got)
        s.tp += bool(got) and r["claim"]
        s.labels += len(claims)
        s.found += sum(any(overlaps(g, c) for g in got_spans) for c in claims)
        s.findings += len(got)
        s.right += sum(any(overlaps(g, c) for c in claims) for g in got_spans)
        s.exact += len(set(got_spans) & set(claims))
        s.target_spans += len(targets)
        s.target_spans_flagged += sum(any(overlaps(g, t) for g in got_spans) for t in targets)
        if r["kind"] == "target":
            s.targets += 1
            s.targets_flagged += bool(got)
        if r["kind"] == "none":
            s.none += 1
            s.none_flagged += bool(got)
        missed = [text[a:b] for a, b in claims if not any(overlaps(g, (a, b)) for g in got_spans)]
        extra = [t for a, b, t in got if not any(overlaps((a, b), c) for c in claims)]
        if missed:
            s.misses.append(f"`{_md(text)}` — missed {', '.join(repr(m) for m in missed)}")
        if extra:
            s.extras.append(f"`{_md(text)}` ({r['kind']}) — reported {', '.join(repr(e) for e in extra)}")
    return s


def _md(text: str) -> str:
    return text.replace("`", "'").replace("|", "\\|")


def ratio(k: int, n: int) -> str:
    if n == 0:
        return "— (0)"
    lo, hi = wilson(k, n)
    return f"{k / n:.3f} [{lo:.3f}–{hi:.3f}] ({k}/{n})"


def f1(p_k: int, p_n: int, r_k: int, r_n: int) -> str:
    if not p_n or not r_n:
        return "—"
    p, r = p_k / p_n, r_k / r_n
    return f"{2 * p * r / (p + r):.3f}" if p + r else "0.000"


SPLITS = BUILD.SPLITS
FRESH = BUILD.NEWEST  # the newest batch, kept for scoring once: its sentences are never linted while tuning nor listed
SEEN = "seen"  # every split but the newest batch: what the rules may be tuned on


def parts(rows: list[dict]) -> list[tuple[str, str]]:
    """(language, split) pairs to report: every split present (fresh only when the corpus has it), then all."""
    present = [split for split in SPLITS if any(r["split"] == split for r in rows)]
    return [(lang, split) for lang in ("en", "ko", "all") for split in (*present, "all")]


def select(rows: list[dict], lang: str, split: str) -> list[dict]:
    if split == SEEN:
        return [r for r in rows if lang in ("all", r["lang"]) and r["split"] != FRESH]
    return [r for r in rows if lang in ("all", r["lang"]) and split in ("all", r["split"])]


def tables(results: list[tuple[str, str, Score]]) -> str:
    sent = [
        "| language | split | sentences | with claims | flagged | precision [95% CI] | recall [95% CI] | F1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    span = [
        "| language | split | claim spans | findings | precision [95% CI] | recall [95% CI] | F1 | exact spans |",
        "|---|---|---|---|---|---|---|---|",
    ]
    tgt = [
        "| language | split | target sentences flagged | target numbers flagged | `none` sentences flagged |",
        "|---|---|---|---|---|",
    ]
    for lang, split, s in results:
        sent.append(
            f"| {lang} | {split} | {s.sentences} | {s.positives} | {s.predicted} | {ratio(s.tp, s.predicted)} "
            f"| {ratio(s.tp, s.positives)} | {f1(s.tp, s.predicted, s.tp, s.positives)} |"
        )
        span.append(
            f"| {lang} | {split} | {s.labels} | {s.findings} | {ratio(s.right, s.findings)} "
            f"| {ratio(s.found, s.labels)} | {f1(s.right, s.findings, s.found, s.labels)} | {s.exact}/{s.labels} |"
        )
        tgt.append(
            f"| {lang} | {split} | {ratio(s.targets_flagged, s.targets)} "
            f"| {ratio(s.target_spans_flagged, s.target_spans)} | {ratio(s.none_flagged, s.none)} |"
        )
    return (
        "Sentence level (a sentence is flagged when the lint reports anything in it):\n\n"
        + "\n".join(sent)
        + "\n\nSpan level (overlap matching):\n\n"
        + "\n".join(span)
        + "\n\nTargets and settings reported as claims, and claim-free sentences flagged:\n\n"
        + "\n".join(tgt)
        + "\n"
    )


def tune_only(rows: list[dict]) -> None:
    """Score every sentence but the newest batch's and list their disagreements; nothing of the newest batch is
    linted or shown."""
    rows = [r for r in rows if r["split"] != FRESH]
    preds = run_lint(rows)
    results = [(lang, SEEN, score(select(rows, lang, SEEN), preds)) for lang in ("en", "ko", "all")]
    print(tables(results))
    if "--quiet" in sys.argv:
        return
    for lang, _, s in results[:2]:
        print(f"\n#### {lang}: {len(s.misses)} sentences with missed claims\n")
        print("".join(f"- {m}\n" for m in s.misses))
        print(f"\n#### {lang}: {len(s.extras)} sentences with findings that are not claims\n")
        print("".join(f"- {e}\n" for e in s.extras))


def main() -> None:
    name = "lint_real_baseline"
    if "--out" in sys.argv:
        name = sys.argv[sys.argv.index("--out") + 1]
    rows = load()
    if "--tune-only" in sys.argv:
        tune_only(rows)
        return
    preds = run_lint(rows)
    results = [(lang, split, score(select(rows, lang, split), preds)) for lang, split in parts(rows)]
    body = tables(results)
    print(body)
    errors = ""
    for lang in ("en", "ko"):
        s = score(select(rows, lang, SEEN), preds)  # never the newest batch's sentences
        errors += (
            f"\n#### {lang}, every split but {FRESH}: {len(s.misses)} sentences with missed claims\n\n"
            + "".join(f"- {m}\n" for m in s.misses)
            + f"\n#### {lang}, every split but {FRESH}: {len(s.extras)} sentences with findings that are not claims\n\n"
            + "".join(f"- {e}\n" for e in s.extras)
        )
    title = "baseline, before tuning" if name == "lint_real_baseline" else "after tuning on the tune split"
    doc = (
        f"## Lint on real sentences ({title})\n\n"
        f"Machine: {machine()}.\n\n"
        "Corpus: `tests/data/claims-real/corpus.jsonl` — sentences quoted from public READMEs, docs, GitHub "
        "issues and pull requests, benchmark write-ups and blogs by other authors, English and Korean, labelled "
        "by hand against the policy in `tests/data/claims-real/README.md` before the lint was run on them. "
        "A third of the sentences (by a hash of the id) is the `unseen` split, kept for measuring the rules after "
        "they are tuned on the `tune` split; later batches, the splits "
        + ", ".join(f"`{b}`" for b in BUILD.LATER)
        + " (when present), are "
        "each scored once with rules that never saw them; the newest batch's sentences are never listed. Each sentence is linted as a one-paragraph Markdown document (a table row under its source's header when known) with "
        "`lint_paths` (what `factreg docs lint` calls), default options. Intervals are Wilson 95%. Produced by "
        "`python bench/lint_real.py`.\n\n"
        + (
            ""
            if name == "lint_real_baseline"
            else "The rules were changed looking at the tune split only (`--tune-only`); the unseen split was scored "
            "once, with the final rules (see tests/data/claims-real/README.md). Before the changes: "
            "`bench/results/lint_real_baseline.md`.\n\n"
        )
        + body
        + "\n### Disagreements on every split but the newest batch\n\n"
        f"The `{FRESH}` split's sentences are never listed.\n" + errors
    )
    out = write_section(name, doc)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
