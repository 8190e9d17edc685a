"""docs lint --suggest / --fix and factreg cite: from an unsourced claim to a citation that keeps the author's text."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from factreg.demo.story import case_study_file
from factreg.docs import markers as mk
from factreg.docs import suggest as sg
from factreg.docs.lint import lint_text

BODY = "474bd59c69796ebd852ea9efeb66d86c8b352300999286f17d786d92f7ec95ef"


def fact(fid: str, metric: str, unit: str, value: float, **over: Any) -> dict[str, Any]:
    """A current fact as `docs check`'s index holds it (status included)."""
    base: dict[str, Any] = {
        "id": fid,
        "subject": fid.rsplit("/", 1)[0],
        "metric": metric,
        "unit": unit,
        "value": value,
        "spread": None,
        "n": 5,
        "stats": {"ci95": None},
        "flags": [],
        "conditions": {"identity": {"model": "35B-A3B", "machine": "gamebox"}, "info": {}},
        "status": "fresh",
        "status_reason": "measured or confirmed 1d ago",
        "superseded_by": None,
        "tolerance": None,
        "measured_at": "2026-10-26T14:00:00Z",
    }
    base.update(over)
    return base


def strip_markers(text: str) -> str:
    return re.sub(r"<!-- /?fact[^>]*-->", "", text)


# --- suggestions --------------------------------------------------------------------------------------------------


def test_suggest_ranks_facts_by_unit_value_and_the_words_that_name_them() -> None:
    facts = [
        fact("gamebox/a3b/ttft", "ttft", "s", 0.13),
        fact("studio/27b/ttft", "ttft", "s", 0.131, conditions={"identity": {"model": "27B"}, "info": {}}),
        fact("gamebox/a3b/tg32", "tg_rate", "tok/s", 0.13),  # same number, other unit: never a candidate
        fact("gamebox/a3b/e2e", "e2e", "s", 2.5),  # same unit, value far off
    ]
    (s,) = sg.suggest_text("On gamebox the first token of 35B-A3B arrives after 0.13 s.\n", facts)
    assert [c.fact_id for c in s.candidates] == ["gamebox/a3b/ttft", "studio/27b/ttft"]
    assert {"gamebox", "35b-a3b", "first token"} <= set(s.candidates[0].words)
    assert s.fix is not None and s.fix.fact_id == "gamebox/a3b/ttft"


def test_a_claim_in_ms_is_suggested_a_fact_in_seconds_but_not_fixed() -> None:
    (s,) = sg.suggest_text("35B-A3B first token: 130 ms\n", [fact("gamebox/a3b/ttft", "ttft", "s", 0.13)])
    assert [c.fact_id for c in s.candidates] == ["gamebox/a3b/ttft"]
    assert s.fix is None and "render" in (s.why_no_fix or "")


def test_a_clock_written_duration_is_compared_in_seconds_and_never_fixed() -> None:
    facts = [fact("runner/build/wall", "build_time", "s", 42.0), fact("runner/build/other", "build_time", "s", 1.0)]
    (s,) = sg.suggest_text("Time Elapsed 00:00:41.91\n", facts)
    assert [c.fact_id for c in s.candidates] == ["runner/build/wall"]  # 41.91 s, not 0 nor 41
    assert all(c.marker is None for c in s.candidates)


def test_a_duration_in_several_units_is_compared_whole() -> None:
    facts = [fact("runner/build/wall", "build_time", "s", 418.0), fact("runner/build/short", "build_time", "s", 6.0)]
    (s,) = sg.suggest_text("The build took 6m58s.\n", facts)
    assert [c.fact_id for c in s.candidates] == ["runner/build/wall"]  # 418 s, not 6
    (s,) = sg.suggest_text("빌드에 6분 58초가 걸렸다.\n", facts)
    assert [c.fact_id for c in s.candidates] == ["runner/build/wall"]


def test_korean_text_is_kept_with_a_format_that_renders_it() -> None:
    text = "35B-A3B는 첫 음성 0.13초로 빠르다.\n"
    new, applied = sg.fix_text(text, [fact("gamebox/a3b/ttft", "ttft", "s", 0.1304)])
    assert len(applied) == 1
    assert '<!-- fact: gamebox/a3b/ttft format="{value:.2f}초" -->0.13초<!-- /fact -->' in new
    assert strip_markers(new) == text
    (m,), problems = mk.parse(new)
    assert problems == [] and mk.render(fact("gamebox/a3b/ttft", "ttft", "s", 0.1304), m.format) == m.text


def test_a_value_that_rounds_to_other_words_is_suggested_but_not_fixed() -> None:
    text = "35B-A3B는 첫 음성 0.13초로 빠르다.\n"
    # 0.138 is within the 10% tolerance of 0.13, but renders as 0.14초: wrapping would change the author's text
    new, applied = sg.fix_text(text, [fact("gamebox/a3b/ttft", "ttft", "s", 0.138)])
    assert applied == [] and new == text
    (s,) = sg.suggest_text(text, [fact("gamebox/a3b/ttft", "ttft", "s", 0.138)])
    assert [c.fact_id for c in s.candidates] == ["gamebox/a3b/ttft"] and s.candidates[0].marker is None


@pytest.mark.parametrize(
    "over",
    [
        {"status": "refuted", "status_reason": "refuted by gamebox/35b-a3b/tg32"},
        {"status": "stale", "status_reason": "last measured 120d ago"},
        {"status": "superseded", "superseded_by": "gamebox/35b-a3b/tg32"},
        {"status": "retracted"},
        {"status": "shifted"},
        {"status": "conditions_changed"},
        {"status": "unverifiable"},
        {"flags": ["cold"]},
        {"flags": ["few_samples"], "n": 1},
    ],
)
def test_fix_never_cites_a_fact_that_should_not_be_relied_on(over: dict[str, Any]) -> None:
    text = "gamebox decodes at 28.0 tok/s.\n"
    weak = fact("skill/gamebox/a3b-decode", "tg_rate", "tok/s", 28.0, **over)
    new, applied = sg.fix_text(text, [weak])
    assert applied == [] and new == text
    (s,) = sg.suggest_text(text, [weak])
    assert s.candidates[0].fact_id == weak["id"] and not s.candidates[0].citable  # still suggested, marked


def test_the_same_fact_fresh_and_clean_is_cited() -> None:
    text = "gamebox decodes at 28.0 tok/s.\n"
    new, applied = sg.fix_text(text, [fact("skill/gamebox/a3b-decode", "tg_rate", "tok/s", 28.0)])
    assert new == "gamebox decodes at <!-- fact: skill/gamebox/a3b-decode -->28.0 tok/s<!-- /fact -->.\n"


def test_two_facts_that_both_back_a_claim_are_ambiguous() -> None:
    text = "35B-A3B on gamebox decodes at 28.0 tok/s.\n"
    both = [fact("gamebox/a3b/tg32", "tg_rate", "tok/s", 28.0), fact("gamebox/a3b/tg128", "tg_rate", "tok/s", 28.0)]
    new, applied = sg.fix_text(text, both)
    assert applied == [] and new == text
    (s,) = sg.suggest_text(text, both)
    assert "ambiguous" in (s.why_no_fix or "")


def test_a_sentence_that_names_no_fact_is_not_fixed() -> None:
    text = "It decodes at 28.0 tok/s.\n"
    new, applied = sg.fix_text(text, [fact("x/y/z", "tg_rate", "tok/s", 28.0, conditions={"identity": {}})])
    assert applied == [] and new == text


def test_fix_touches_only_prose() -> None:
    doc = (
        "---\ntitle: gamebox decodes at 28.0 tok/s\n---\n"
        "gamebox decodes at 28.0 tok/s.\n\n"
        "```\ngamebox decodes at 28.0 tok/s\n```\n\n"
        "    gamebox decodes at 28.0 tok/s (indented code)\n\n"
        "Inline `gamebox decodes at 28.0 tok/s` code.\n"
        "<!-- gamebox decodes at 28.0 tok/s -->\n"
        "Already <!-- fact: skill/gamebox/a3b-decode -->28.0 tok/s<!-- /fact --> on gamebox.\n"
    )
    new, applied = sg.fix_text(doc, [fact("skill/gamebox/a3b-decode", "tg_rate", "tok/s", 28.0)])
    assert len(applied) == 1
    assert new.count("<!-- fact:") == 2
    assert strip_markers(new) == strip_markers(doc)
    assert new.startswith("---\ntitle: gamebox decodes at 28.0 tok/s\n---\ngamebox decodes at <!-- fact:")
    assert sg.fix_text(new, [fact("skill/gamebox/a3b-decode", "tg_rate", "tok/s", 28.0)]) == (new, [])


def test_fix_leaves_a_file_edited_meanwhile_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import factreg.atomic
    import factreg.docs.sync  # noqa: F401  (imported before the patch: a module first imported under it keeps it)

    doc = tmp_path / "a.md"
    doc.write_text("gamebox decodes at 28.0 tok/s.\n", encoding="utf-8")
    real = factreg.atomic.replace_if_unchanged

    def edited_first(path: Path, data: bytes, expected: bytes) -> bool:
        Path(path).write_text("someone's edit: gamebox decodes at 28.0 tok/s.\n", encoding="utf-8")
        return real(path, data, expected)

    monkeypatch.setattr(factreg.atomic, "replace_if_unchanged", edited_first)
    result = sg.fix_paths([tmp_path], [fact("skill/gamebox/a3b-decode", "tg_rate", "tok/s", 28.0)])
    assert result.changed == [] and "changed while" in result.notes[0]
    assert doc.read_text(encoding="utf-8") == "someone's edit: gamebox decodes at 28.0 tok/s.\n"


# --- the case study's runbook ---------------------------------------------------------------------------------------


@pytest.fixture
def case_registry(cli, story_clock):  # type: ignore[no-untyped-def]
    """The case study's facts, and the 02:30 flash-next row measured again properly (warm, n=5)."""
    for name in ("01-night.jsonl", "02-daytime.jsonl"):
        assert cli("import", str(case_study_file(name))).exit_code == 0
    r = cli("record", "night/flash-nothink/e2e", "-m", "e2e", "--samples", "1.45,1.49,1.50,1.47,1.52",
            "-c", "model=flash-next", "-c", "endpoint=http://flash.lan:8080/v1", "-c", "thinking=off",
            "-c", "warm=true", "-c", f"body_sha256={BODY}", "-c", "stream=true")
    assert r.exit_code == 0, r.stderr
    return cli


def test_fix_on_the_case_study_runbook_cites_what_a_fact_backs_and_leaves_the_rest(case_registry, tmp_path) -> None:
    cli = case_registry
    docs = tmp_path / "docs"
    shutil.copytree(case_study_file("docs"), docs)
    runbook = docs / "runbook.md"
    before = runbook.read_text(encoding="utf-8")
    claims_before = [f.text for f in lint_text(before)]

    r = cli("docs", "lint", "--fix", str(docs))
    after = runbook.read_text(encoding="utf-8")
    assert "cited night/flash-nothink/e2e" in r.stdout
    assert ('flash-next in <!-- fact: night/flash-nothink/e2e format="{value:.2f} s" -->1.49 s<!-- /fact -->.'
            in after)
    assert strip_markers(after) == strip_markers(before)  # the author's words, unchanged
    left = [f.text for f in lint_text(after)]
    # the cold, few-sample 02:30 rows, the 28× claim and the unmeasured prefill stay unsourced
    assert left == [t for t in claims_before if t != "1.49 s"]
    assert {"28배", "0.13초", "1.07 s", "30~60초"} <= set(left)
    assert r.exit_code == 1  # unsourced claims are left
    assert cli("docs", "check", str(docs)).exit_code == 0

    again = cli("docs", "lint", "--fix", str(docs))
    assert runbook.read_bytes() == after.encode("utf-8")
    assert "0 claim(s) cited" in again.stderr


def test_suggest_lists_the_facts_behind_each_runbook_claim(case_registry, tmp_path) -> None:
    cli = case_registry
    shutil.copytree(case_study_file("docs"), tmp_path / "docs")
    r = cli("docs", "lint", "--suggest", "--json", str(tmp_path / "docs" / "runbook.md"))
    assert r.exit_code == 1
    by_text = {x["text"]: x for x in r.json()["unsourced"]}
    assert by_text["0.13초"]["candidates"][0]["fact_id"] == "night/a3b-nothink/ttft"
    assert "cold" in by_text["0.13초"]["why_no_fix"]
    assert by_text["28배"]["candidates"][0]["fact_id"] == "claim/voice/28x-faster"
    assert by_text["1.49 s"]["fix"].startswith("<!-- fact: night/flash-nothink/e2e ")
    assert by_text["30~60초"]["candidates"] == []
    assert (tmp_path / "docs" / "runbook.md").read_text(encoding="utf-8") == (
        case_study_file("docs/runbook.md").read_text(encoding="utf-8")
    )  # --suggest writes nothing


# --- factreg cite -----------------------------------------------------------------------------------------------------


def test_cite_prints_a_marker_that_docs_check_accepts(case_registry, tmp_path) -> None:
    cli = case_registry
    r = cli("cite", "night/flash-nothink/e2e")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "<!-- fact: night/flash-nothink/e2e -->1.49 ± 0.03 s<!-- /fact -->\n"
    doc = tmp_path / "d.md"
    doc.write_text(f"flash-next answers in {r.stdout.strip()}.\n", encoding="utf-8")
    assert cli("docs", "check", str(doc)).exit_code == 0
    korean = cli("cite", "night/flash-nothink/e2e", "--format", "{value:.2f}초")
    assert korean.stdout.strip().endswith("-->1.49초<!-- /fact -->")


def test_cite_says_when_a_fact_should_not_be_cited(case_registry) -> None:
    r = case_registry("cite", "night/a3b-nothink/ttft")
    assert r.exit_code == 1
    assert r.stdout.startswith("<!-- fact: night/a3b-nothink/ttft -->")
    assert "should not be cited" in r.stderr and "cold" in r.stderr


def test_cite_of_an_unknown_fact_is_one_error_line(case_registry) -> None:
    r = case_registry("cite", "no/such/fact")
    assert r.exit_code != 0 and r.stderr.startswith("Error: ") and "Traceback" not in r.stderr


def test_a_claim_with_its_spread_is_cited_with_the_plain_rendering_and_a_range_never() -> None:
    tg = fact("gamebox/35b-a3b/tg32", "tg_rate", "tok/s", 11.9, spread=7.2, stats={"ci95": [3.0, 20.8]})
    new, applied = sg.fix_text("gamebox: 11.9 ± 7.2 tok/s with llama-bench.\n", [tg])
    assert new == "gamebox: <!-- fact: gamebox/35b-a3b/tg32 -->11.9 ± 7.2 tok/s<!-- /fact --> with llama-bench.\n"
    ranged = "gamebox decodes at 10~15 tok/s.\n"
    (s,) = sg.suggest_text(ranged, [tg])
    assert [c.fact_id for c in s.candidates] == ["gamebox/35b-a3b/tg32"]  # 11.9 lies in the range
    assert sg.fix_text(ranged, [tg]) == (ranged, [])


def test_fix_with_include_code_is_one_error_line(case_registry, tmp_path) -> None:
    (tmp_path / "a.md").write_text("```\ngamebox decodes at 1.49 s\n```\n", encoding="utf-8")
    r = case_registry("docs", "lint", "--fix", "--include-code", str(tmp_path))
    assert r.exit_code == 2 and r.stderr.startswith("Error: ") and "prose only" in r.stderr
