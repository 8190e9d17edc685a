"""The registry's core behaviours on both backends: a SQLite file and a real PostgreSQL server.

The PostgreSQL server is the throwaway cluster of `tests/pg_support.py` (ICU en-US collation, like a typical
production server); in CI a missing server fails these tests rather than skipping them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from sqlalchemy import inspect, text

from factreg.registry import facts, jsonl
from factreg.registry.migrations import MIGRATIONS
from factreg.registry.store import Registry


@pytest.fixture
def any_registry(any_url: str) -> Iterator[Registry]:
    reg = Registry(any_url)
    yield reg
    reg.close()


# Ids whose order differs between byte order and a linguistic (ICU/glibc) collation.
AWKWARD_IDS = ["a-b/x", "a/b", "a.b/c", "a_b/c", "ab/c", "a0/c", "z/1", "b/10", "b/9", "b-/x"]


def populate(reg: Registry) -> None:
    facts.record(
        reg,
        facts.NewFact(
            id="daytime/27b/e2e",
            metric="e2e",
            samples=[0.43, 0.73, 0.85],
            identity={"model": "27b", "body_sha256": "ab"},
            info={"note": "첫 턴 — 고마워"},
            measured_at="2026-10-26T14:05:00Z",
        ),
    )
    facts.record(
        reg,
        facts.NewFact(
            id="daytime/27b/e2e",
            metric="e2e",
            samples=[0.5, 0.6, 0.7, 0.8, 0.9],
            identity={"model": "27b"},
            measured_at="2026-10-27T14:05:00Z",
            note="second look",
        ),
    )
    facts.record(
        reg,
        facts.NewFact(
            id="gamebox/a3b/tg32",
            metric="tg_rate",
            value=11.9,
            spread=7.2,
            n=5,
            identity={"machine": "gamebox"},
            warn_after="7d",
            error_after="30d",
            tolerance=0.15,
            measured_at="2026-10-25T10:00:00Z",
        ),
    )
    facts.record_many(
        reg,
        [
            facts.NewFact(
                id=i, metric="ttft", value=0.1 + k / 3, identity={"machine": "m"}, measured_at="2026-10-24T00:00:00Z"
            )
            for k, i in enumerate(AWKWARD_IDS)
        ],
    )


def test_migrations_are_applied_and_tables_exist(any_registry):
    assert any_registry.applied_migrations() == [name for name, _ in MIGRATIONS]
    with any_registry.read() as conn:
        tables = set(inspect(conn).get_table_names())
    assert {
        "fact",
        "fact_version",
        "sample",
        "condition",
        "verification",
        "decision",
        "decision_cite",
        "correction",
        "factreg_migration",
    } <= tables
    again = Registry(any_registry.url)
    assert again.migrate() == []
    again.close()
    assert any_registry.integrity_check() == "ok"


def test_failing_migration_leaves_no_trace(any_registry):
    def m900_half_done(conn):
        conn.execute(text("CREATE TABLE half (x INTEGER)"))
        conn.execute(text("ALTER TABLE fact ADD COLUMN extra TEXT"))
        conn.execute(text("INSERT INTO half VALUES (1)"))
        raise RuntimeError("boom half-way")

    with pytest.raises(RuntimeError):
        any_registry.migrate([*MIGRATIONS, ("m900_half_done", m900_half_done)])
    with any_registry.read() as conn:
        insp = inspect(conn)
        assert not insp.has_table("half")
        assert "extra" not in [c["name"] for c in insp.get_columns("fact")]
    assert "m900_half_done" not in any_registry.applied_migrations()

    def m900_ok(conn):
        conn.execute(text("CREATE TABLE half (x INTEGER)"))

    assert any_registry.migrate([*MIGRATIONS, ("m900_half_done", m900_ok)]) == ["m900_half_done"]


def test_record_and_read_back_exactly(any_registry):
    got = facts.record(
        any_registry,
        facts.NewFact(
            id="daytime/27b/e2e",
            metric="e2e",
            samples=[0.43, 0.73, 0.85],
            identity={"model": "27b"},
            info={"note": "첫 턴"},
            measured_at="2026-10-26T14:05:00Z",
            method={"kind": "manual", "how": "stopwatch"},
        ),
    )
    assert got["value"] == 0.73
    assert got["samples"] == [0.43, 0.73, 0.85]
    assert got["stats"]["mean"] == pytest.approx(0.67, abs=1e-12)
    assert got["conditions"] == {"identity": {"model": "27b"}, "info": {"note": "첫 턴"}}
    assert got["method"] == {"kind": "manual", "how": "stopwatch"}
    assert got["measured_at"] == "2026-10-26T14:05:00Z"
    # a float survives the round trip bit for bit (no REAL/float4 truncation)
    facts.record(any_registry, facts.NewFact(id="x/pi", metric="ttft", value=0.1 + 0.2))
    assert facts.get(any_registry, "x/pi")["value"] == 0.1 + 0.2


def test_versions_and_history(any_registry):
    ids = facts.record_many(any_registry, [facts.NewFact(id="a/x", metric="ttft", value=v) for v in (1.0, 2.0)])
    assert ids == ["a/x@1", "a/x@2"]
    facts.record(any_registry, facts.NewFact(id="a/x", metric="ttft", value=3.0))
    hist = facts.history(any_registry, "a/x")
    assert [(v["version"], v["value"], v["current"]) for v in hist] == [
        (1, 1.0, False),
        (2, 2.0, False),
        (3, 3.0, True),
    ]
    assert facts.get(any_registry, "a/x", version=2)["value"] == 2.0
    assert facts.get(any_registry, "a/x")["version"] == 3


def test_list_filters_and_order(any_registry):
    populate(any_registry)
    every = facts.list_facts(any_registry)
    assert [f["id"] for f in every] == sorted(["daytime/27b/e2e", "gamebox/a3b/tg32", *AWKWARD_IDS])
    assert [f["id"] for f in facts.list_facts(any_registry, metric="tg_rate")] == ["gamebox/a3b/tg32"]
    assert [f["id"] for f in facts.list_facts(any_registry, subject="daytime/27b")] == ["daytime/27b/e2e"]
    by_cond = facts.list_facts(any_registry, conds={"machine": "m"})
    assert [f["id"] for f in by_cond] == sorted(AWKWARD_IDS)
    assert all(f["status"] for f in every)


def test_export_import_round_trip_is_byte_identical(any_url, tmp_path, db_url, request):
    src = Registry(any_url)
    populate(src)
    first = "".join(line + "\n" for line in jsonl.export_lines(src))
    ids = [json.loads(x)["id"] for x in first.splitlines()]
    assert ids == sorted(ids), "export order must be byte order on every backend"
    # into an empty registry of the same backend, and of the other one
    other = (
        str(request.getfixturevalue("pg_url")) if any_url.startswith("sqlite") else f"sqlite:///{tmp_path / 'other.db'}"
    )
    for target_url in (other,):
        target = Registry(target_url)
        counts = jsonl.import_lines(target, jsonl.parse_text(first))
        assert counts["facts"] == len(ids)
        again = "".join(line + "\n" for line in jsonl.export_lines(target))
        assert again == first
        # importing again changes nothing
        assert jsonl.import_lines(target, jsonl.parse_text(first))["versions"] == 0
        target.close()
    src.close()


def test_cli_works_against_the_backend(any_url, cli):
    r = cli(
        "record",
        "gamebox/a3b/tg32",
        "-m",
        "tg_rate",
        "--samples",
        "11,12,13",
        "-c",
        "machine=gamebox",
        "--db",
        any_url,
        "--json",
    )
    assert r.exit_code == 0, r.stderr
    shown = cli("show", "gamebox/a3b/tg32", "--json", "--db", any_url).json()
    assert shown["value"] == 12.0 and shown["n"] == 3
    listed = cli("list", "--json", "--db", any_url).json()
    assert [f["id"] for f in listed] == ["gamebox/a3b/tg32"]
