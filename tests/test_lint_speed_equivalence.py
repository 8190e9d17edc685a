"""The lint's shortcuts change no finding: the literal pre-tests (factreg.docs.literals: a line flag or a window
search is skipped when the text holds none of the literals every match of its pattern holds), the line kept from
one number to the next and the clauses read once per number. `literals.ENABLED = False` turns every shortcut off,
the reference the fast path is compared with, finding by finding, on the real and the regression corpora, on
documents like the benchmark's trees and on random text made of the literals the patterns look for.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest

from factreg.docs import lint, literals
from factreg.docs.lint import patterns as lazy_patterns
from factreg.docs.lint import vocab
from tests.lint_support import sample

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]


def run(text: str, include_code: bool, targets: bool, fast: bool) -> list[lint.Finding]:
    saved = literals.ENABLED
    literals.ENABLED = fast
    try:
        return lint.lint_text(text, "x.md", include_code, targets)
    finally:
        literals.ENABLED = saved


def same(text: str, include_code: bool = False, targets: bool = True) -> list[lint.Finding]:
    fast = run(text, include_code, targets, True)
    reference = run(text, include_code, targets, False)
    assert fast == reference, repr(text[:300])
    return fast


def corpus(name: str) -> list[str]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


def screened_patterns() -> dict[str, re.Pattern[str]]:
    """Every pattern the lint pre-tests: the line flags and the window searches."""
    out = {f"flag {name}": lazy_patterns.compiled(rx) for name, rx in vocab._LINE_FLAGS.items()}
    for module in sys.modules.values():
        if module is not None and module.__name__.startswith("factreg.docs.lint."):
            for name, value in vars(module).items():
                if isinstance(value, lazy_patterns.Lazy) and value._screened:
                    out[name] = value.compiled()
    for rx, hint in vocab._EXTRA:  # run only over the windows that hold a literal of each group
        out[f"extra {hint}"] = rx
    return out


def test_the_shortcuts_are_in_use() -> None:
    patterns = screened_patterns()
    assert len(patterns) > 20
    with_literals = [name for name, rx in patterns.items() if literals.screen(rx).needs is not None]
    assert len(with_literals) > 20  # most patterns have literals to look for: the pre-test is not a no-op


def test_folding_matches_what_re_matches_ignoring_case() -> None:
    """Every character `re` matches with an ASCII letter when ignoring case is folded to that letter, and no other
    character is changed by folding (checked over every code point)."""
    letter = re.compile(r"(?i)[a-z]")
    folded_by_re = {}
    for cp in range(0x110000):
        ch = chr(cp)
        if letter.fullmatch(ch) and not "a" <= ch <= "z":
            folded_by_re[ch] = next(c for c in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(f"(?i){c}", ch))
    expected = {chr(c): chr(c).lower() for c in range(ord("A"), ord("Z") + 1)} | literals.FOLD_EXTRA
    assert folded_by_re == expected
    sample = "".join(chr(cp) for cp in range(0x20, 0x3000)) + "İıſ\u212a한국어"
    folded = literals.fold(sample)
    assert len(folded) == len(sample)
    assert {a: b for a, b in zip(sample, folded, strict=True) if a != b} == expected


def pieces() -> list[str]:
    """The literals of every pre-tested pattern, in capitals and with look-alikes too, and what numbers, units
    and Markdown are made of."""
    out = set()
    for rx in screened_patterns().values():
        for s in literals.screen(rx).needs or ():
            out |= {s, s.upper(), s.title(), s.replace("i", "İ"), s.replace("i", "ı"), s.replace("s", "ſ"),
                    s.replace("k", "\u212a")}
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from test_lint_prefilter import PIECES  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(Path(__file__).parent))
    return sorted(out) + list(PIECES) * 3


@pytest.mark.slow
def test_a_pre_test_never_rejects_a_text_its_pattern_matches() -> None:
    rnd = random.Random(11)
    parts = pieces()
    patterns = screened_patterns()
    matched = 0
    for _ in range(1500):
        text = "".join(rnd.choice(parts) for _ in range(rnd.randint(1, 12)))
        folded = literals.fold(text)
        for name, rx in patterns.items():
            if rx.search(text) is not None:
                matched += 1
                assert literals.screen(rx).may_match(folded), (name, text)
                assert literals.screen(rx).may_match_all(folded), (name, text)
                assert literals.Screened(rx).search(text) is not None, (name, text)
    assert matched > 1500


# Numbers with units, so that the random texts hold claims whose words the shortcuts read.
CLAIMS = [
    "28 tok/s", "3.75 s", "500ms", "1.2초", "30~60초", "5 min", "2 hours", "2시간", "3.1× slower", "4.1x 향상", "20%",
    "-17%", "+50%", "11.9 ± 7.2 tok/s", "10 fps", "6m58s", "15분", "200 ms", "| 0.13 s |", "| 60% 감소 |",
    "초당 28토큰", "x2.88", "pp512 560", "3 times faster", "50 RPS",
]


def test_same_findings_on_random_text() -> None:
    rnd = random.Random(2027)
    words = pieces()
    found = 0
    for _ in range(1500):
        text = "".join(
            rnd.choice(CLAIMS) if rnd.random() < 0.25 else rnd.choice(words) + rnd.choice(("", " ", " ", "\n"))
            for _ in range(rnd.randint(1, 40))
        )
        for include_code in (False, True):
            found += len(same(text, include_code))
    assert found > 500


@pytest.mark.parametrize("name", ["claims-real/corpus.jsonl", "lint_corpus.jsonl"])
@pytest.mark.parametrize(("include_code", "targets"), [(False, False), (False, True), (True, True)])
def test_same_findings_on_the_corpora(name: str, include_code: bool, targets: bool) -> None:
    sentences = corpus(name)
    assert len(sentences) > 300
    sentences = sample(sentences)  # the whole corpus: bench/lint_equivalence.py
    n = sum(len(same(text + "\n", include_code, targets)) for text in sentences)
    assert n > 50
    for sep in ("\n\n", "\n", " | ", "\n- "):
        assert len(same(sep.join(sentences), include_code, targets)) > 50


@pytest.mark.parametrize("share", [0.03, 0.27])
def test_same_findings_on_documents_like_the_benchmark_trees(share: float) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_docs import render_doc  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    rnd = random.Random(26)
    found = 0
    for i in range(150):
        text = render_doc(rnd, i, [("m1/model/tg32", "12.3 ± 0.4 tok/s")] if i % 10 == 0 else [], share)
        found += len(same(text))
    assert found > 150
