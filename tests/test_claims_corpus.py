"""Integrity of the real-sentence claim corpus, tests/data/claims-real/corpus.jsonl (see its README.md).

Every row has its fields, a source, spans that are substrings of its text, a split that follows from its id; the
corpus meets the size the benchmark needs (≥ 600 sentences, ≥ 200 Korean, ≥ 100 sentences with claims per
language in the unseen third); and the JSONL is exactly what the label files in work/ build.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from factreg.docs.lint import lint_text
from tests.lint_support import claims_build

DIR = Path(__file__).parent / "data" / "claims-real"
CORPUS = DIR / "corpus.jsonl"
FIELDS: dict[str, type] = {
    "id": str,
    "lang": str,
    "text": str,
    "source": str,
    "title": str,
    "kind": str,
    "claim": bool,
    "spans": list,
    "targets": list,
    "split": str,
}
HANGUL = re.compile(r"[\uac00-\ud7a3]")
MIN_TOTAL = 600
MIN_KOREAN = 200
MIN_UNSEEN_CLAIMS = 100  # sentences with claims, per language, in the unseen split


LATER = claims_build().LATER  # the later batches' names, kept once in work/build.py


def load(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _in_order(text: str, subs: list[str]) -> str | None:
    """The first substring that cannot be found (left to right, as the benchmark locates spans), or None."""
    pos = 0
    for sub in subs:
        i = text.find(sub, pos)
        if i < 0:
            i = text.find(sub)
        if i < 0 or not sub:
            return sub
        pos = i + len(sub)
    return None


def row_problems(rows: list[dict]) -> list[str]:
    out: list[str] = []
    ids: set[str] = set()
    texts: set[str] = set()
    for n, r in enumerate(rows, 1):
        where = f"row {n} ({r.get('id', '?')})"
        for name, typ in FIELDS.items():
            if not isinstance(r.get(name), typ):
                out.append(f"{where}: field {name!r} missing or not {typ.__name__}")
        if any(not isinstance(r.get(name), typ) for name, typ in FIELDS.items()):
            continue
        text = r["text"]
        if not text.strip() or "\n" in text or "\t" in text:
            out.append(f"{where}: text empty or not one line")
        if not r["source"].startswith(("https://", "http://")) or not r["title"].strip():
            out.append(f"{where}: no source URL or title")
        lang = "ko" if HANGUL.search(text) else "en"
        if r["lang"] != lang:
            out.append(f"{where}: lang {r['lang']!r}, text says {lang!r}")
        if r["id"] != f"{lang}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}":
            out.append(f"{where}: id does not follow from the text")
        split = "unseen" if int(hashlib.sha256(r["id"].encode()).hexdigest(), 16) % 3 == 0 else "tune"
        if r["split"] != split and r["split"] not in LATER:  # later batches, work/BATCH_*
            out.append(f"{where}: split {r['split']!r}, the hash of the id says {split!r}")
        if r["kind"] not in ("claim", "target", "none"):
            out.append(f"{where}: kind {r['kind']!r}")
        if r["claim"] != (r["kind"] == "claim") or r["claim"] != bool(r["spans"]):
            out.append(f"{where}: claim, kind and spans disagree")
        if r["kind"] == "none" and r["targets"]:
            out.append(f"{where}: a 'none' sentence with targets")
        if r.get("table", "markdown") not in ("markdown", "html", "code", "none", "unreadable"):
            out.append(f"{where}: table {r['table']!r}")
        if "header" in r and (not isinstance(r["header"], str) or "|" not in r["header"] or "\n" in r["header"]):
            out.append(f"{where}: header {r['header']!r} is not one pipe row")
        if not all(isinstance(s, str) for s in r["spans"] + r["targets"]):
            out.append(f"{where}: a span is not a string")
            continue
        for what in ("spans", "targets"):
            bad = _in_order(text, r[what])
            if bad is not None:
                out.append(f"{where}: {what[:-1]} {bad!r} is not in the text")
        if r["id"] in ids or text in texts:
            out.append(f"{where}: duplicate")
        ids.add(r["id"])
        texts.add(text)
    return out


def count_problems(rows: list[dict]) -> list[str]:
    out: list[str] = []
    if len(rows) < MIN_TOTAL:
        out.append(f"{len(rows)} sentences, fewer than {MIN_TOTAL}")
    korean = [r for r in rows if r.get("lang") == "ko"]
    if len(korean) < MIN_KOREAN:
        out.append(f"{len(korean)} Korean sentences, fewer than {MIN_KOREAN}")
    for lang in ("en", "ko"):
        sel = [r for r in rows if r.get("lang") == lang]
        unseen_claims = sum(1 for r in sel if r.get("split") == "unseen" and r.get("claim"))
        if unseen_claims < MIN_UNSEEN_CLAIMS:
            out.append(f"{lang}: {unseen_claims} sentences with claims in the unseen split, fewer than 100")
        for batch in LATER:  # each later batch (once it has rows) is scored once as a held-out set of its own
            if not any(r.get("split") == batch for r in rows):
                continue
            fresh_claims = sum(1 for r in sel if r.get("split") == batch and r.get("claim"))
            if fresh_claims < MIN_UNSEEN_CLAIMS:
                out.append(f"{lang}: {fresh_claims} sentences with claims in the {batch} batch, fewer than 100")
        first = [r for r in sel if r.get("split") in ("tune", "unseen")]  # the first batch, split a third by hash
        if first:
            share = sum(1 for r in first if r.get("split") == "unseen") / len(first)
            if not 0.25 <= share <= 0.42:
                out.append(f"{lang}: the unseen split is {share:.0%} of the sentences, not about a third")
            negatives = sum(1 for r in sel if not r.get("claim")) / len(sel)
            if not 0.3 <= negatives <= 0.7:
                out.append(f"{lang}: {negatives:.0%} of the sentences hold no claim, not about half")
    return out


def test_every_row_is_well_formed() -> None:
    assert row_problems(load()) == []


def test_corpus_meets_the_minimum_counts() -> None:
    assert count_problems(load()) == []


def _claim_row(rows: list[dict]) -> dict:
    return copy.deepcopy(next(r for r in rows if r["claim"] and r["targets"]))


@pytest.mark.parametrize(
    "break_it, expected",
    [
        (lambda r: r.update(spans=[*r["spans"][:-1], r["spans"][-1] + " zzz"]), "is not in the text"),
        (lambda r: r.update(targets=["no such number"]), "target 'no such number' is not in the text"),
        (lambda r: r.update(source=""), "no source URL"),
        (lambda r: r.pop("title"), "field 'title' missing"),
        (lambda r: r.update(split="tune" if r["split"] == "unseen" else "unseen"), "the hash of the id says"),
        (lambda r: r.update(claim=False), "claim, kind and spans disagree"),
        (lambda r: r.update(spans=[]), "claim, kind and spans disagree"),
        (lambda r: r.update(lang="ko" if r["lang"] == "en" else "en"), "text says"),
        (lambda r: r.update(text=r["text"] + "\tmore"), "not one line"),
        (lambda r: r.update(kind="maybe"), "kind 'maybe'"),
    ],
)
def test_row_checks_catch_a_broken_row(break_it, expected: str) -> None:
    row = _claim_row(load())
    break_it(row)
    found = row_problems([row])
    assert any(expected in p for p in found), found


def test_row_checks_catch_a_duplicate() -> None:
    rows = load()
    assert any("duplicate" in p for p in row_problems([rows[0], copy.deepcopy(rows[0])]))


def test_count_checks_catch_a_small_or_lopsided_corpus() -> None:
    rows = load()
    assert any("fewer than 600" in p for p in count_problems(rows[:500]))
    english = [r for r in rows if r["lang"] == "en"]
    assert any("Korean sentences" in p for p in count_problems(english))
    no_unseen_claims = [r for r in rows if not (r["split"] == "unseen" and r["claim"] and r["lang"] == "ko")]
    assert any("ko:" in p and "unseen split" in p for p in count_problems(no_unseen_claims))


def test_corpus_is_what_the_label_files_build() -> None:
    build = claims_build()
    rows, errors = build.build()
    assert errors == []
    assert build.render(rows) == CORPUS.read_text(encoding="utf-8"), "rebuild with work/build.py"


@pytest.mark.parametrize("name", [f"final{n}" for n in range(32, 86)])
def test_the_final_batch_is_what_its_label_files_build_and_new(name: str) -> None:
    """finalNN.jsonl (issue 31's final batches): rebuilt from work/finalNN/, well formed, at least 600 sentences in
    both languages, and none of its texts or repositories quoted in the corpus or an earlier final batch."""
    build = claims_build()
    rows, errors = build.build(build.HERE / name, name)
    assert errors == []
    assert build.render(rows) == (CORPUS.parent / f"{name}.jsonl").read_text(encoding="utf-8"), (
        f"rebuild with work/build.py --final {name}"
    )
    assert {r["split"] for r in rows} == {name}
    assert [p for p in row_problems(rows) if "the hash of the id says" not in p] == []  # split: the batch's own
    assert len(rows) >= 600 and {r["lang"] for r in rows} == {"en", "ko"}
    earlier = load() + [r for n in range(31, int(name[5:])) for r in load(CORPUS.parent / f"final{n}.jsonl")]

    def repo(url: str) -> str:
        return url.split("/blob/")[0]

    assert not {r["text"] for r in rows} & {r["text"] for r in earlier}
    assert not {repo(r["source"]) for r in rows} & {repo(r["source"]) for r in earlier}


# --- the lint on the tune split ---------------------------------------------------------------------------------
# Sentence level, as bench/lint_real.py scores it (a sentence is flagged when the lint reports a claim in it). The
# floors are the scores the rules reached on the tune split when they were last changed, minus 0.03; the unseen
# split is not scored here (it is measured by the benchmark, rarely, so that it stays unseen).
TUNE_FLOORS = {"en": (0.938, 0.954), "ko": (0.932, 0.932)}  # (precision, recall); reached 0.968/0.984, 0.962/0.962
# share of target sentences with a finding of kind "target" when targets are asked for (reached 0.84, 0.78)
TARGET_FLOORS = {"en": 0.81, "ko": 0.75}


def _tune(lang: str) -> list[dict]:
    return [r for r in load() if r["split"] == "tune" and r["lang"] == lang]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_tune_split_scores_do_not_regress(lang: str) -> None:
    rows = _tune(lang)
    flagged = {r["id"] for r in rows if lint_text(r["text"] + "\n")}
    positives = {r["id"] for r in rows if r["claim"]}
    tp = len(flagged & positives)
    precision, recall = tp / len(flagged), tp / len(positives)
    floor_p, floor_r = TUNE_FLOORS[lang]
    wrong = sorted(r["text"] for r in rows if (r["id"] in flagged) != r["claim"])
    assert precision >= floor_p and recall >= floor_r, (precision, recall, wrong)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_targets_are_reported_as_targets(lang: str) -> None:
    rows = [r for r in _tune(lang) if r["kind"] == "target"]
    reported = [r for r in rows if any(f.kind == "target" for f in lint_text(r["text"] + "\n", targets=True))]
    assert len(reported) / len(rows) >= TARGET_FLOORS[lang], sorted(r["text"] for r in rows if r not in reported)


def test_a_tables_caption_attaches_to_its_row_and_sits_above_its_table_when_linted(tmp_path: Path) -> None:
    build = claims_build()
    rows = [{"id": "en-1", "text": "| i7-4770 | 3401 | 5729 |"}, {"id": "en-2", "text": "| i5 | 12 | 9 |"}]
    tables = tmp_path / "tables_a.tsv"
    tables.write_text(
        "en-1\tmarkdown\t| Processor | Plain enc | Plain dec |\tAll times in seconds, lower is better.\n"
        "en-2\tmarkdown\t| Processor | Plain enc | Plain dec |\t\n",
        encoding="utf-8",
    )
    assert build.add_headers(rows, [tables]) == []
    assert rows[0]["caption"] == "All times in seconds, lower is better." and "caption" not in rows[1]
    saved = list(sys.path)  # bench/lint_real.py adds the project and bench/ to the path: put it back after
    sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
    try:
        from lint_real import document
    finally:
        sys.path[:] = saved

    text, line = document(rows[0])
    assert text.splitlines()[line - 1] == rows[0]["text"] and text.startswith("All times in seconds")
    assert [(f.text, f.rule) for f in lint_text(text) if f.line == line] == [("3401", "FR154"), ("5729", "FR154")]
    text, line = document(rows[1])
    assert line == 3 and not [f for f in lint_text(text) if f.line == line]


def test_table_headers_attach_to_their_rows_and_bad_lines_are_refused(tmp_path: Path) -> None:
    build = claims_build()
    rows = [
        {"id": "en-1", "text": "| 7B | 12.5 |"},
        {"id": "en-2", "text": "| 13B | 9.1 |"},
        {"id": "en-3", "text": "a"},
    ]
    good = tmp_path / "tables_a.tsv"
    good.write_text("en-1\tmarkdown\t| model | t/s |\nen-2\tunreadable\t\n", encoding="utf-8")
    assert build.add_headers(rows, [good]) == []
    assert rows[0]["header"] == "| model | t/s |" and rows[0]["table"] == "markdown"
    assert rows[1] == {"id": "en-2", "text": "| 13B | 9.1 |", "table": "unreadable"}
    assert "table" not in rows[2]
    bad = tmp_path / "tables_b.tsv"
    bad.write_text(
        "en-9\tmarkdown\t| a |\n"  # no such sentence
        "en-3\tmarkdown\t\n"  # no header
        "en-3\tnone\t| a |\n"  # a header where none is expected
        "en-3\tpicture\t\n"  # unknown how
        "en-3\tmarkdown\n",  # two fields
        encoding="utf-8",
    )
    problems = build.add_headers(rows, [bad, good])
    assert [p.split(": ", 1)[1] for p in problems] == [
        "no sentence 'en-9'",
        "no header",
        "a header with how 'none'",
        "how 'picture'",
        "2 fields, not 3 or 4",
        "en-1 given twice",
        "en-2 given twice",
    ]
