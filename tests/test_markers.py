"""Citation markers: parsing, rendering, code blocks and front matter left alone, broken markers as problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from factreg.docs import markers as mk
from factreg.errors import UsageError

FACT = {
    "id": "gamebox/a3b/tg32",
    "value": 11.9,
    "spread": 7.2,
    "unit": "tok/s",
    "n": 5,
    "measured_at": "2026-10-26T02:30:00Z",
    "stats": {"median": 11.5, "mean": 11.9, "min": 4.0, "max": 21.0, "ci95": [3.0, 20.8]},
}


def test_parse_marker_with_position_and_options() -> None:
    text = 'Decode: <!-- fact: gamebox/a3b/tg32 format="{value:.1f} {unit}" asof -->28 tok/s<!-- /fact --> ok\n'
    markers, problems = mk.parse(text)
    assert problems == []
    (m,) = markers
    assert (m.fact_id, m.format, m.asof, m.text, m.line, m.col) == (
        "gamebox/a3b/tg32",
        "{value:.1f} {unit}",
        True,
        "28 tok/s",
        1,
        9,
    )
    assert text[m.text_start : m.text_end] == "28 tok/s"
    assert text[m.id_start : m.id_end] == "gamebox/a3b/tg32"
    assert text[m.start : m.end].startswith("<!--") and text[m.start : m.end].endswith("<!-- /fact -->")


def test_line_numbers_count_from_the_top_including_front_matter() -> None:
    text = "---\nname: x\n---\n\n# T\n\nA <!-- fact: a/b -->1<!-- /fact -->\r\nB <!-- fact: c -->2<!-- /fact -->\n"
    markers, _ = mk.parse(text)
    assert [(m.fact_id, m.line, m.col) for m in markers] == [("a/b", 7, 3), ("c", 8, 3)]


def test_front_matter_and_code_are_not_citations() -> None:
    text = (
        "---\ndescription: cites <!-- fact: in/front -->1<!-- /fact -->\n---\n"
        "Write `<!-- fact: in/span -->x<!-- /fact -->` to cite.\n\n"
        "```markdown\n<!-- fact: in/fence -->x<!-- /fact -->\n```\n\n"
        "    <!-- fact: in/indented -->x<!-- /fact -->\n\n"
        "- item\n\n    continued <!-- fact: in/list -->y<!-- /fact -->\n\n"
        "Real <!-- fact: real -->z<!-- /fact -->\n"
    )
    markers, problems = mk.parse(text)
    assert problems == []
    assert [m.fact_id for m in markers] == ["in/list", "real"]
    assert mk.front_matter_end(text) == text.index("Write")


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("a\n<!-- fact: x -->open", 2, "unclosed"),
        ("<!-- fact: a -->1 <!-- fact: b -->2<!-- /fact --><!-- /fact -->", 1, "nested"),
        ("text <!-- /fact -->", 1, "without an opening"),
        ("<!-- fact: Bad/ID -->1<!-- /fact -->", 1, "invalid fact id"),
        ("<!-- fact: ../etc -->1<!-- /fact -->", 1, "invalid fact id"),
        ("<!-- fact: a colour -->1<!-- /fact -->", 1, "unknown marker option 'colour'"),
        ('<!-- fact: a format="{value.__class__}" -->1<!-- /fact -->', 1, "format field"),
        ('<!-- fact: a format="{value" -->1<!-- /fact -->', 1, "bad format string"),
        ("<!-- fact: -->1<!-- /fact -->", 1, "without a fact id"),
    ],
)
def test_broken_markers_are_problems_not_crashes(text: str, line: int, needle: str) -> None:
    markers, problems = mk.parse(text)
    assert markers == []
    assert problems, text
    assert problems[0].line == line
    assert needle in problems[0].message


def test_nested_marker_keeps_later_markers_usable() -> None:
    text = "<!-- fact: a -->1 <!-- fact: b -->2<!-- /fact --> <!-- /fact -->\n<!-- fact: c -->3<!-- /fact -->\n"
    markers, problems = mk.parse(text)
    assert [m.fact_id for m in markers] == ["c"]
    assert [p.message.split(":")[0] for p in problems] == [
        "nested marker",
        "closing <!-- /fact --> without an opening marker",
    ]


def test_render_default_format_and_asof() -> None:
    assert mk.render(FACT) == "11.9 ± 7.2 tok/s"
    assert mk.render(FACT, asof=True) == "11.9 ± 7.2 tok/s (as of 2026-10-26)"
    assert mk.render(FACT, "{value:.0f}–{max:.0f} {unit}, n={n}, median {median}") == "12–21 tok/s, n=5, median 11.5"
    assert (
        mk.render(FACT, "[{ci_lo:.1f}, {ci_hi:.1f}] on {date} ({id})") == "[3.0, 20.8] on 2026-10-26 (gamebox/a3b/tg32)"
    )


def test_render_refuses_a_format_the_fact_cannot_fill() -> None:
    with pytest.raises(UsageError, match="has no spread"):
        mk.render({**FACT, "spread": None}, "{value:.1f} ± {spread:.1f}")


def test_korean_text_and_utf8_offsets() -> None:
    text = "디코딩 속도는 <!-- fact: a -->초당 28 토큰<!-- /fact -->입니다.\n"
    (m,), _ = mk.parse(text)
    assert m.text == "초당 28 토큰" and m.col == 9
    assert mk.replace_spans(text, [(m.text_start, m.text_end, "11.9 ± 7.2 tok/s")]) == (
        "디코딩 속도는 <!-- fact: a -->11.9 ± 7.2 tok/s<!-- /fact -->입니다.\n"
    )


def test_find_citations_across_folders(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "SKILL.md").write_text("x <!-- fact: f/one -->1<!-- /fact -->\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "\n\n<!-- fact: f/one -->1<!-- /fact --> <!-- fact: f/two -->2<!-- /fact -->\n", encoding="utf-8"
    )
    (tmp_path / "notes.txt").write_text("<!-- fact: f/one -->1<!-- /fact -->\n", encoding="utf-8")
    found = mk.find_citations([tmp_path], "f/one")
    assert [(c.path.relative_to(tmp_path).as_posix(), c.line) for c in found] == [
        ("README.md", 3),
        ("a/b/c/SKILL.md", 1),
    ]
    assert {c.fact_id for c in mk.find_citations([tmp_path])} == {"f/one", "f/two"}


# Format strings are bounded: width ≤ MAX_WIDTH, precision ≤ MAX_PRECISION, refused before anything is formatted.
# Over the cap, but small enough that formatting them anyway (without the cap) costs at most ~100 KB here; the
# gigabyte-sized ones run in a memory-limited process (test_docs_check.py::test_huge_format_is_a_finding_...).
OVER_CAP = [
    "{value:>65}",
    "{value:0100000}",
    "{value:x^100000}",
    "{value:.21f}",
    "{value:.100000f}",
    "{value:>64.100000e}",
    "{id:.100000}",
    "{value:,.99999999999999999999999999999999999999999999999999999999999999999999999999}",
]


@pytest.mark.parametrize("template", OVER_CAP)
def test_format_width_and_precision_are_capped(template: str) -> None:
    import tracemalloc

    text = f'x <!-- fact: a/b format="{template}" -->1<!-- /fact -->\n'
    tracemalloc.start()
    try:
        markers, problems = mk.parse(text)
        with pytest.raises(UsageError, match="over the limit of"):
            mk.render(FACT, template)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert markers == []
    assert len(problems) == 1 and "over the limit of" in problems[0].message, problems
    assert peak < 64_000  # the refusal comes before formatting: no padded or zero-filled string was made


def test_format_within_the_caps_still_renders() -> None:
    assert mk.render(FACT, "{value:>64.20f}") == f"{11.9:>64.20f}"
    assert mk.render(FACT, "{value:x<+#010,.3f}|{n:_>5d}|{id:.4}") == f"{11.9:x<+#010,.3f}|{5:_>5d}|game"
    assert mk.check_format("{value:q}") is not None  # not a format spec: a marker problem, not a render error


HOSTILE = [
    "tok<!-- /fact -->",
    "<!-- fact: a/b -->",
    "-->",
    "<!-->",
    "`x",
    "a\n\n```\ncode",
    "back\\",
]


@pytest.mark.parametrize("unit", HOSTILE)
def test_rendered_text_cannot_hold_marker_syntax(unit: str) -> None:
    fact = {**FACT, "unit": unit}
    rendered = mk.render(fact)
    doc = f"p <!-- fact: a/b -->{rendered}<!-- /fact --> `tail`\n"
    markers, problems = mk.parse(doc)
    assert problems == [] and [m.text for m in markers] == [rendered]
    assert mk.inert(rendered) == rendered
    assert "<!--" not in rendered and "-->" not in rendered and "`" not in rendered and "\n" not in rendered
