"""Loading decisions reads only the cited facts and their successors, and reviews them as a whole-registry
listing would: the same statuses, successors and reasons."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from factreg.publish import decisions
from factreg.registry import facts
from factreg.registry import status as st
from factreg.registry.facts import NewFact
from factreg.registry.store import Registry
from tests.decisions_support import add_verification

GAMEBOX = {"machine": "gamebox", "model": "a3b", "build_commit": "8cf427ff"}


def _fact(fid: str, value: float, at: str, identity: dict | None = None, **kw: Any) -> NewFact:
    kw = {"warn_after": "3600d", "error_after": "3650d", **kw}
    return NewFact(id=fid, metric="tg_rate", value=value, identity=identity or dict(GAMEBOX), measured_at=at, **kw)


@pytest.fixture
def varied(any_url):  # type: ignore[no-untyped-def]
    """Decisions whose cited facts changed in every way a review looks at, among facts nobody cites (on SQLite,
    read through sqlite3, and on PostgreSQL, through SQLAlchemy)."""
    registry = Registry(any_url)
    facts.record_many(registry, [
        _fact("a/chain/1", 10.0, "2026-10-01T00:00:00Z"),
        _fact("a/chain/2", 11.0, "2026-10-02T00:00:00Z"),
        _fact("a/chain/3", 12.0, "2026-10-03T00:00:00Z"),
        _fact("b/refuted", 20.0, "2026-10-01T00:00:00Z", identity={"machine": "remote"}),
        _fact("c/versions", 30.0, "2026-10-01T00:00:00Z"),
        _fact("d/old-build", 40.0, "2026-10-01T00:00:00Z", identity={"machine": "studio", "build_commit": "aaa"}),
        _fact("e/fine", 50.0, "2026-10-05T00:00:00Z", identity={"machine": "laptop"}),
        _fact("f/source", 60.0, "2026-10-01T00:00:00Z", identity={"machine": "laptop"}),
        _fact("g/stale", 70.0, "2026-01-01T00:00:00Z", identity={"machine": "laptop"}, warn_after="1d",
              error_after="2d"),
        *[_fact(f"z/uncited/{i:03d}", 1.0 + i, "2026-10-04T00:00:00Z", identity={"machine": "other"})
          for i in range(40)],
    ])
    facts.record(registry, NewFact(id="f/derived", metric="tg_rate", value=61.0, measured_at="2026-10-02T00:00:00Z",
                                   identity={"machine": "laptop"}, derived_from=[{"id": "f/source", "version": 1}],
                                   method={"kind": "derived"}, warn_after="3600d", error_after="3650d"))
    d1 = decisions.add(registry, "Chain", [("a/chain/1", None), ("e/fine", None)])
    d2 = decisions.add(registry, "Refuted and versions", [("b/refuted", None), ("c/versions", None)])
    d3 = decisions.add(registry, "Builds and sources", [("d/old-build", None), ("f/derived", None)],
                       status="proposed")
    d4 = decisions.add(registry, "Stale", [("g/stale", None)])
    d5 = decisions.add(registry, "Fine", [("e/fine", None)])
    # after the decisions: successors, a refutation, new versions, a newer build seen on the machine, a new source
    facts.supersede(registry, "a/chain/1", "a/chain/2", "re-measured")
    facts.supersede(registry, "a/chain/2", "a/chain/3", "re-measured again")
    add_verification(registry, "b/refuted", "refuted", samples=[9.0, 9.5, 10.0])
    facts.record(registry, _fact("c/versions", 30.5, "2026-10-06T00:00:00Z", identity={**GAMEBOX, "n_threads": "8"}))
    facts.record(registry, _fact("c/versions", 45.0, "2026-10-07T00:00:00Z", identity={**GAMEBOX, "n_threads": "8"}))
    facts.record(registry, _fact("h/uncited-new-build", 41.0, "2026-10-08T00:00:00Z",
                                 identity={"machine": "studio", "build_commit": "bbb"}))
    facts.record(registry, _fact("f/source", 65.0, "2026-10-08T00:00:00Z", identity={"machine": "laptop"}))
    with registry.write() as conn:  # what an import can hold: a cited fact that is gone, a version never recorded
        conn.execute(text("INSERT INTO decision_cite (decision, fact_id, fact_version, value, spread, unit) "
                          "VALUES (:d, 'x/gone', 1, 5.0, NULL, 'tok/s')"), {"d": d4})
        conn.execute(text("UPDATE decision_cite SET fact_version = 7 WHERE decision = :e"), {"e": d5})
    decisions.supersede(registry, d5, d1)
    yield registry, [d1, d2, d3, d4, d5]
    registry.close()


def test_decisions_review_as_a_whole_registry_listing_would(varied):
    registry, numbers = varied
    everything = {f["id"]: f for f in facts.list_facts(registry)}
    expected = decisions.list_decisions(registry, current=everything)
    got = decisions.list_decisions(registry)
    assert got == expected
    # `status` hands over the statuses it computed for every fact: the same again
    assert decisions.list_decisions(registry, statuses=st.statuses(registry)) == expected
    assert decisions.needing_review(registry, statuses=st.statuses(registry)) == decisions.needing_review(registry)
    for n in numbers:
        assert decisions.get(registry, n) == next(d for d in expected if d["number"] == n)
    reasons = {d["number"]: d["review_reasons"] for d in got}
    # the scenario covers what it means to
    assert reasons[numbers[0]] == ["a/chain/1 was superseded by a/chain/2"]
    assert got[0]["cites"][0]["successor"]["id"] == "a/chain/3"
    assert any("b/refuted is refuted" in r for r in reasons[numbers[1]])
    assert any("c/versions v3 was measured under other conditions: n_threads (none) → 8" in r
               for r in reasons[numbers[1]])
    assert any("c/versions is now 45.0 tok/s (v3); the decision relied on 30.0 tok/s" in r for r in reasons[numbers[1]])
    assert any(r.startswith("d/old-build is stale: studio now runs build_commit bbb") for r in reasons[numbers[2]])
    assert any(r.startswith("f/derived is stale: derived from f/source v1") for r in reasons[numbers[2]])
    assert reasons[numbers[3]][0].startswith("g/stale is unverifiable: no method to re-run it")  # typed, stale
    assert "x/gone is no longer in the registry" in reasons[numbers[3]]
    assert reasons[numbers[4]] == []
    assert [d["number"] for d in decisions.needing_review(registry)] == numbers[:4]


def test_only_cited_facts_and_their_successors_are_loaded(varied, monkeypatch):
    registry, numbers = varied
    asked: list[list[str]] = []
    real = facts.list_facts

    def spy(reg, config=None, **filters):  # type: ignore[no-untyped-def]
        asked.append(filters.get("ids"))
        return real(reg, config, **filters)

    monkeypatch.setattr(facts, "list_facts", spy)
    decisions.list_decisions(registry)
    assert asked and all(ids is not None for ids in asked), "no listing of the whole registry"
    loaded = {i for ids in asked for i in ids}
    assert loaded == {"a/chain/1", "a/chain/2", "a/chain/3", "b/refuted", "c/versions", "d/old-build", "e/fine",
                      "f/derived", "g/stale", "x/gone"}
    asked.clear()
    decisions.get(registry, numbers[1])
    assert {i for ids in asked for i in ids} == {"b/refuted", "c/versions"}
    asked.clear()
    decisions.needing_review(registry, statuses=st.statuses(registry))
    assert asked == [], "with every fact's status at hand, no fact is listed again"
