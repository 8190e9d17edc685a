"""The typed data that crosses modules matches the data: every key a fact, version, verification, status row,
decision, verify result or comparison carries is named by its type (so mypy checks its readers), the one list of
fact_version columns is the table's, the display fields have one definition, and the JSON keys keep their order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from factreg.measure import compare as cmp
from factreg.measure import verify as engine
from factreg.measure.measurement import Measurement
from factreg.publish import decisions
from factreg.registry import display, facts, status, types
from factreg.registry.facts import NewFact
from factreg.registry.models import FactVersion

ROOT = Path(__file__).resolve().parent.parent


def keys_of(typed: Any, *absent: str) -> set[str]:
    """The keys a TypedDict names, less those absent in this context (its NotRequired ones)."""
    names = set(typed.__annotations__)
    assert set(absent) <= names, f"{absent} are not keys of {typed.__name__}"
    return names - set(absent)


@pytest.fixture
def seeded(registry):  # type: ignore[no-untyped-def]
    common = {"machine": "gamebox", "model": "35b-a3b"}
    facts.record_many(registry, [
        NewFact(id="g/tg32", metric="tg_rate", samples=[11.1, 12.3, 10.9, 13.0, 12.2],
                identity={**common, "build_commit": "8cf427ff"}, info={"uptime_s": "86400"}),
        NewFact(id="g/tg32-old", metric="tg_rate", value=28.0, identity=common),
        NewFact(id="g/tg32-next", metric="tg_rate", value=12.0, spread=1.0, n=5, identity=common),
    ])
    decisions.add(registry, "Serve from gamebox", [("g/tg32", None), ("g/tg32-old", None)])
    facts.supersede(registry, "g/tg32-old", "g/tg32-next", "re-measured")
    return registry


def test_version_columns_are_the_tables_columns_in_order() -> None:
    assert tuple(c.name for c in FactVersion.__table__.c) == types.VERSION_COLUMNS  # type: ignore[attr-defined]
    start = types.VERSION_COLUMNS.index("mean")
    assert types.VERSION_COLUMNS[start:start + len(types.STAT_COLUMNS)] == types.STAT_COLUMNS
    assert tuple(k for k in types.Stats.__annotations__ if k != "ci95") == types.SUMMARY_COLUMNS
    assert set(types.StatusRow.__annotations__) - {"id", "superseded_by", "ended_at"} <= set(types.VERSION_COLUMNS)


def test_a_fact_as_read_has_the_keys_its_type_names(seeded) -> None:
    listed = facts.list_facts(seeded)
    assert [f["id"] for f in listed] == ["g/tg32", "g/tg32-next", "g/tg32-old"]
    for fact in listed:
        # `verification` only when the status comes from one; `corrected` only in a history
        assert set(fact) == keys_of(types.FactData, "current", "verifications", "verification", "corrected")
        assert set(fact["stats"]) == keys_of(types.Stats)
        assert set(fact["conditions"]) == keys_of(types.Conditions)
    m = Measurement(samples=[11.0, 12.0, 13.0], observed={"machine": "gamebox"})
    engine.against(seeded, None, facts.get(seeded, "g/tg32-next"), facts.get(seeded, "g/tg32"))
    (version,) = facts.history(seeded, "g/tg32-next")
    assert set(version) == keys_of(types.FactData, "ended_at", "status", "status_reason", "verification",
                                   "corrected")  # corrected: only a version corrected by a later one
    (verification,) = version["verifications"]
    assert set(verification) == keys_of(types.VerificationData)
    with seeded.reader() as conn:
        last = facts.last_verifications(conn)
    assert set(last["g/tg32-next"]) == keys_of(types.LastVerification)
    assert set(facts.preview(NewFact(id="p/x", metric="ttft", value=0.4))) == keys_of(types.VersionData)
    prepared = facts.build_rows(NewFact(id="p/x", metric="ttft", value=0.4))
    assert set(prepared) == keys_of(types.Prepared)
    assert set(prepared["version"]) == keys_of(types.VersionRow, "version")
    assert engine.judge(listed[0], m)["verdict"]  # a plain measurement judges a fact as read


def test_a_status_row_has_the_keys_its_type_names(seeded) -> None:
    for row in status.statuses(seeded):
        assert set(row) == keys_of(types.FactStatus, "conditions", "inconclusive_since_confirmed",  # only when any
                                   "verification", "method")  # the method is read, then removed
        named = [k for k in types.StatusRow.__annotations__ if k != "method"]
        assert list(row)[:len(named)] == named


def test_a_decision_has_the_keys_its_type_names_and_shows_the_display_fields(seeded) -> None:
    decision = decisions.get(seeded, 1)
    assert set(decision) == keys_of(decisions.DecisionData)
    cite_now, cite_gone = decision["cites"]
    for cite in (cite_now, cite_gone):
        assert set(cite) == keys_of(decisions.Cite)
    # The order of the keys is the JSON's (stdout stays byte-identical): the display fields as asked.
    assert cite_now["current"] is not None and cite_gone["current"] is not None
    assert list(cite_now["current"]) == ["version", "value", "spread", "unit", "text", "status", "status_reason",
                                         "superseded_by", "metric"]
    assert cite_now["current"]["text"] == "12.2 ± 0.9 tok/s" and cite_now["successor"] is None
    assert cite_gone["current"]["status"] == "superseded"
    assert cite_gone["current"]["status_reason"] == "superseded by g/tg32-next"
    assert cite_gone["successor"] == {"id": "g/tg32-next", "version": 1, "status": "fresh", "text": "12.0 ± 1.0 tok/s"}
    assert list(cite_gone["successor"]) == ["id", "version", "status", "text"]
    with_statuses = decisions.list_decisions(seeded, statuses=status.statuses(seeded))
    assert with_statuses == [decision]  # from status rows (no samples, no stats) the same data


def test_a_verify_result_has_the_keys_its_type_names_in_the_printed_order(seeded) -> None:
    old, new = facts.get(seeded, "g/tg32-next"), facts.get(seeded, "g/tg32")
    judged = engine.against(seeded, None, old, new)
    assert list(judged) == ["id", "version", "metric", "unit", "old", "new", "p_value", "rel_diff", "needed_n",
                            "diff", "observed", "flags", "verdict", "tolerance", "message", "machine", "control",
                            "speed_factor", "resolve", "recorded", "verification"]  # no control on either side: no speed or CPU-share
    # factor; inconclusive (three samples against three): what would resolve it
    assert set(judged) == keys_of(engine.VerifyResult, "scaled", "as_measured", "cpu_share_factor",  # when the machine moved
                                  "relative", "decided_by",  # both sides measured with the interleaved control
                                  "server", "excused_by", "denied",  # a probe's server
                                  "sequential")  # the looks of verify's batches (a verdict by --against has none)
    assert set(judged["old"]) == set(judged["new"]) == keys_of(engine.Values)
    (skipped,) = engine.verify(seeded, None, [old])
    assert list(skipped) == ["id", "version", "metric", "unit", "verdict", "old", "new", "p_value", "rel_diff",
                             "needed_n", "diff", "observed", "flags", "message", "recorded"]
    assert skipped["verdict"] == engine.SKIPPED and skipped["recorded"] is False


def test_a_comparison_has_the_keys_its_type_names(seeded) -> None:
    a, b = facts.get(seeded, "g/tg32"), facts.get(seeded, "g/tg32-next")
    refused = cmp.compare(a, b)
    assert refused["refused"] and set(refused) == keys_of(cmp.Comparison, "recorded")
    assert {r["key"] for r in refused["reasons"]} == {"build_commit"}
    assert all(set(r) == keys_of(cmp.Difference) for r in refused["reasons"])
    allowed = cmp.compare(a, b, ["build_commit"])
    assert not allowed["refused"] and allowed["ratio"] == pytest.approx(12.2 / 12.0)
    assert all(set(w) == keys_of(cmp.IntegrityWarning) for w in allowed["warnings"])


def test_display_fields_have_one_definition(seeded) -> None:
    assert tuple(display.Shown.__annotations__) == display.FIELDS
    from factreg.docs import markers
    from factreg.publish import corrections

    for names in (markers.FIELDS, corrections.NOTE_FIELDS, decisions.CURRENT_FIELDS, decisions.SUCCESSOR_FIELDS):
        assert set(names) <= set(display.FIELDS)
    fact = facts.get(seeded, "g/tg32")
    shown = display.fields(fact, ("text", "median", "ci_lo", "ci_hi", "date", "identity", "info", "status"))
    assert shown == {
        "text": "12.2 ± 0.9 tok/s",
        "median": 12.2,
        "ci_lo": fact["stats"]["ci95"][0],  # type: ignore[index]
        "ci_hi": fact["stats"]["ci95"][1],  # type: ignore[index]
        "date": fact["measured_at"][:10],
        "identity": {"build_commit": "8cf427ff", "machine": "gamebox", "model": "35b-a3b"},
        "info": {"uptime_s": "86400"},
        "status": "fresh",
    }
    assert markers.render(fact, "{median} {unit} on {date}") == f"12.2 tok/s on {fact['measured_at'][:10]}"
    (row,) = [r for r in status.statuses(seeded) if r["id"] == "g/tg32"]
    assert display.fields(row, ("text", "samples", "median", "identity")) == {
        "text": "12.2 ± 0.9 tok/s", "samples": [], "median": None, "identity": {}}


def test_mypy_checks_the_keys_of_the_types(tmp_path: Path) -> None:
    """A reader that misspells a key is a type error, not a KeyError at run time."""
    code = tmp_path / "reader.py"
    code.write_text(
        "from factreg.registry.types import FactData\n"
        "from factreg.measure.result import VerifyResult\n\n"
        "def value(f: FactData) -> float:\n    return f['valeu']\n\n"
        "def verdict(r: VerifyResult) -> int:\n    return r['verdict']\n",
        encoding="utf-8",
    )
    run = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", str(code)],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert 'TypedDict "FactData" has no key "valeu"' in run.stdout
    assert 'Incompatible return value type (got "str", expected "int")' in run.stdout
