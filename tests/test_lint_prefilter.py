"""The lint's prefilter (only the lines `_PREFILTER` matches are searched for claims) changes no finding: the same
findings, in the same order, as running every pattern over the whole text, on the real and the regression
corpora, on documents like the benchmark's trees, and on random text built from the characters claims are made of.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from factreg.docs.lint import engine, prefilter
from tests.lint_support import sample

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]


def both(text: str, include_code: bool = False, targets: bool = True) -> tuple[list, list]:
    return (
        engine._lint(text, "x.md", include_code, targets, prefilter=True),
        engine._lint(text, "x.md", include_code, targets, prefilter=False),
    )


def corpus(name: str) -> list[str]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


@pytest.mark.parametrize("name", ["claims-real/corpus.jsonl", "lint_corpus.jsonl"])
@pytest.mark.parametrize("include_code", [False, True])
def test_same_findings_on_the_corpora(name: str, include_code: bool) -> None:
    sentences = corpus(name)
    assert len(sentences) > 300
    sentences = sample(sentences)  # the whole corpus: bench/lint_equivalence.py
    n = 0
    for text in sentences:  # each sentence as a document, as bench/lint_real.py lints them
        filtered, full = both(text + "\n", include_code)
        assert filtered == full, text
        n += len(full)
    assert n > 50  # the corpora hold claims: the comparison is not between two empty lists
    # and all of them in one document, as paragraphs, in a table row, and in a list
    for sep in ("\n\n", "\n", " | ", "\n- "):
        filtered, full = both(sep.join(sentences), include_code)
        assert filtered == full
        assert len(full) > 50


def bench_documents(share: float, n: int) -> list[str]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_docs import render_doc  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    rnd = random.Random(7)
    return [render_doc(rnd, i, [("m1/model/tg32", "12.3 ± 0.4 tok/s")] if i % 10 == 0 else [], share) for i in range(n)]


@pytest.mark.parametrize("share", [0.03, 0.27])
def test_same_findings_on_documents_like_the_benchmark_trees(share: float) -> None:
    docs = bench_documents(share, 120)
    found = 0
    skipped_lines = 0
    for text in docs:
        filtered, full = both(text)
        assert filtered == full
        found += len(full)
        kept = sum(hi - lo for lo, hi in prefilter._windows(text))
        skipped_lines += kept < len(text) // 2
    assert found > 100
    assert skipped_lines == len(docs)  # the prefilter does pass over most of each document


# What claims, non-claims and the traps between them are made of: digits (ASCII and others), units and their look-
# alikes (`ſ`, the Kelvin sign), signs, spaces, separators, Korean syllables, Markdown and newlines.
RAW_PIECES = (
    "0¦1¦2¦3¦4¦5¦6¦7¦8¦9¦١¦３¦.¦,¦:¦-¦+¦~¦→¦->¦±¦+/-¦%¦×¦x¦X¦*¦**¦_¦__¦|¦(¦)¦/¦\"¦'¦`¦```\n¦<!-- ¦ -->¦"
    "<!-- fact: a/b -->¦<!-- /fact -->¦ ¦  ¦\t¦\u00a0¦\u2009¦\n¦\n\n¦\r\n¦s¦S¦ſ¦\u212a¦ms¦sec¦seconds¦"
    "min¦minutes¦hours¦days¦tok/s¦t/s¦tokens¦ per second¦tokens/s¦tg¦pp¦tg128¦pp512¦it/s¦files/sec¦RPS¦"
    "fps¦GB/s¦TFLOPS¦TOPS¦µs¦us¦m58s¦faster¦slower¦times¦a¦b¦e¦t¦k¦o¦p¦the ¦to ¦and ¦초¦초당¦밀리초¦분¦시간¦배¦토큰¦"
    "토큰/초¦빠름¦향상¦감소¦이하¦목표¦timeout ¦target ¦✅¦[ ] ¦RTX ¦v1.¦#¦@¦$¦\\¦(s): ¦-second¦-minute¦Xfaster¦3X¦"
    "x2.88¦latency ¦TTFT ¦https://h/¦<code>¦</code>¦---\n"
)
PIECES = RAW_PIECES.split("¦")


def test_same_findings_on_random_text() -> None:
    rnd = random.Random(2026)
    found = 0
    for _ in range(4000):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 40)))
        for include_code in (False, True):
            filtered, full = both(text, include_code)
            assert filtered == full, repr(text)
            found += len(full)
    assert found > 500


@pytest.mark.parametrize(
    "text",
    [
        "Decoding runs at 28 tok/s.",
        "TTFT went from 3.75 s to 0.13 s (28× faster).",
        "첫 토큰까지 1.2초, 디코딩은 초당 28토큰.",
        "| pp512 560 -> 180 |",
        "Benchmark duration (s):\n19.08",
        "speed-up x2.88 over the baseline",
        "It took 6m58s.",
        "Decoding got 3Xfaster.",
        "It is 3Xslower now.",
        "The build takes 30-second now.",
        "Load takes 2-minute on this box.",
        "It runs at 11.9 ± 7.2 and 15T/s.",
        "It runs 28 tokens per second.",
        "Peak:8000pp t/s",
        "디코딩은 초당 28토큰",
        "디코딩은 초당 12개의 토큰을 만든다.",
    ],
)
def test_every_kind_of_claim_passes_the_prefilter(text: str) -> None:
    filtered, full = both(text)
    assert full and filtered == full


def test_lines_without_a_claim_are_passed_over() -> None:
    text = "On 2026-11-05 the team met.\n\nThe context window is 32768 tokens; 3 people, m3 server, 14:30.\n"
    assert prefilter._windows(text) == []
    assert prefilter._windows(text + "It runs at 28 tok/s.\n") == [(len(text), len(text) + 20)]


def test_a_small_file_compiles_only_the_line_flags_and_extra_patterns_its_numbers_ask() -> None:
    # each line flag's pre-test and each extra pattern's is worked out (compiling its pattern) when a number first
    # needs it, not all of them on the first lint (which compiled ~35 patterns a one-claim file never uses)
    import subprocess
    import sys

    code = (
        "from factreg.docs.lint import lint_text, prefilter\n"
        "from factreg.docs.lint.vocab import _LINE_FLAGS\n"
        "lint_text('Decoding took 1.2 s and runs at 11.9 tok/s.')\n"
        "flags = sum(rx._rx is not None for rx in _LINE_FLAGS.values())\n"
        "extra = sum(rx._rx is not None for rx in prefilter._extra_hints())\n"
        "print(len(_LINE_FLAGS), flags, len(prefilter._extra_hints()), extra)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    n_flags, flags, n_extra, extra = map(int, run.stdout.split())
    assert flags < n_flags // 2 and extra < n_extra


def test_a_lazy_patterns_pre_test_is_its_compiled_patterns_and_compiles_nothing() -> None:
    # literals.screen reads a lazy pattern's text and declared flags (a pre-test that rules a line out then costs
    # no compile); inline flags such as (?i) come from the parsed tree, as the compiled pattern has them
    import re

    import factreg.docs.lint.rules  # noqa: F401  (every rule module's patterns)
    from factreg.docs import literals
    from factreg.docs.lint import base, patterns, prefilter, vocab

    found = [v for m in (vocab, base, prefilter) for v in vars(m).values() if isinstance(v, patterns.Lazy)]
    found += [v for v in vocab._LINE_FLAGS.values() if isinstance(v, patterns.Lazy)]
    found += [patterns.Lazy("(?i)took (\\d+) ms"), patterns.Lazy("TOOK", re.IGNORECASE)]
    assert len(found) > 40
    for rx in found:
        fresh = patterns.Lazy(rx.pattern, rx.declared_flags)
        assert literals.screen(fresh) == literals.screen(re.compile(rx.pattern, rx.declared_flags)), rx.pattern
        assert fresh._rx is None


# The patterns read a thin space (U+2009) and a narrow no-break space (U+202F) as a no-break space (vocab.MATCHABLE):
# a finding's text and value stay as the document writes them, at the document's own offsets.
@pytest.mark.parametrize("space", ["\u2009", "\u202f"])
def test_a_thin_space_is_a_space_and_is_kept_as_written(space: str) -> None:
    text = f"Decode ran at 28{space}tok/s and the reply took between 0.4 and{space}0.9{space}s.\n"
    found = [(f.col, f.text, f.value, f.unit, f.rule) for f in engine.lint_text(text)]
    assert found == [
        (15, f"28{space}tok/s", "28", "tok/s", "FR111"),
        (51, f"0.4 and{space}0.9{space}s", f"0.4 and{space}0.9", "s", "FR101"),
    ]
    filtered, full = both(text)
    assert filtered == full == engine.lint_text(text, "x.md")


@pytest.mark.parametrize("space", ["\u2009", "\u202f"])
def test_thin_spaces_find_what_no_break_spaces_find_on_the_corpora(space: str) -> None:
    """Every sentence with its spaces made thin finds what it finds with no-break spaces, in the same places;
    bench/lint_thin_spaces.py compares the lint before and after the translation on every corpus sentence."""
    n = 0
    for text in sample(corpus("claims-real/corpus.jsonl") + corpus("lint_corpus.jsonl")):
        thin = [(f.line, f.col, f.text, f.value, f.unit, f.kind, f.rule)
                for f in engine.lint_text(text.replace(" ", space) + "\n", targets=True)]
        nbsp = [(f.line, f.col, f.text.replace("\u00a0", space), f.value.replace("\u00a0", space), f.unit, f.kind,
                 f.rule) for f in engine.lint_text(text.replace(" ", "\u00a0") + "\n", targets=True)]
        assert thin == nbsp, text
        n += len(thin)
    assert n > 300
