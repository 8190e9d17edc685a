"""Frozen migrations: the schema they build is the one the models describe, and an old registry upgrades.

The migrations keep the DDL they had when written (factreg/registry/migrations.py); the models describe today's tables.
`test_migrations_build_the_schema_the_models_describe` is the guard between the two: a column added to a
model without a new migration (m004_...) that adds it fails here, on SQLite and on PostgreSQL."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text

from factreg.publish import decisions
from factreg.registry import facts, jsonl
from factreg.registry.migrations import MIGRATIONS, NAMES
from factreg.registry.store import Registry

ROOT = Path(__file__).resolve().parent.parent
OLD_TABLES = ("fact", "fact_version", "sample", "condition", "verification")


def schema(url: str) -> dict[str, Any]:
    """Tables, columns (type, nullability, default, autoincrement), primary keys, indexes, foreign keys,
    unique and check constraints of a database, through SQLAlchemy's inspector."""
    engine = create_engine(url)
    try:
        insp = inspect(engine)
        out: dict[str, Any] = {}
        for table in sorted(insp.get_table_names()):
            out[table] = {
                "columns": [
                    {
                        "name": c["name"],
                        "type": str(c["type"]),
                        "nullable": c["nullable"],
                        "default": c.get("default"),
                        "autoincrement": c.get("autoincrement"),
                    }
                    for c in insp.get_columns(table)
                ],
                "primary_key": insp.get_pk_constraint(table),
                "indexes": sorted(
                    ({"name": i["name"], "columns": i["column_names"], "unique": bool(i["unique"]),
                      "using": i.get("dialect_options", {}).get("postgresql_using")}
                     for i in insp.get_indexes(table)),
                    key=lambda i: str(i["name"]),
                ),
                "foreign_keys": sorted(
                    ({k: fk[k] for k in ("name", "constrained_columns", "referred_table", "referred_columns",
                                         "referred_schema")} for fk in insp.get_foreign_keys(table)),
                    key=lambda fk: str(fk["constrained_columns"]),
                ),
                "unique": sorted((u["column_names"] for u in insp.get_unique_constraints(table)), key=str),
                "checks": sorted((c["sqltext"] for c in insp.get_check_constraints(table)), key=str),
            }
        return out
    finally:
        engine.dispose()


def models_schema(url: str) -> dict[str, Any]:
    """The schema `factreg/models.py` describes, created on an empty database with `create_all`."""
    from factreg.registry.models import SQLModel

    engine = create_engine(url)
    try:
        SQLModel.metadata.create_all(engine)
    finally:
        engine.dispose()
    return schema(url)


@pytest.fixture
def second_url(any_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Another empty database on the same backend as `any_url`."""
    if any_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / 'models.db'}"
    return str(request.getfixturevalue("pg_server").new_database())


@pytest.fixture
def registry_at(any_url: str) -> Iterator[list[Registry]]:
    """Registries opened by a test, closed at its end."""
    opened: list[Registry] = []
    yield opened
    for reg in opened:
        reg.close()


def test_migrations_build_the_schema_the_models_describe(any_url, second_url, registry_at):
    registry_at.append(Registry(any_url))
    migrated = schema(any_url)
    described = models_schema(second_url)
    assert set(migrated) == set(described)  # every table, the bookkeeping one included
    for table in described:
        assert migrated[table] == described[table], table
    assert described["verification"]["indexes"], "the inspection sees indexes"
    assert described["fact_version"]["foreign_keys"], "the inspection sees foreign keys"


def test_a_condition_longer_than_an_index_entry_is_recorded_and_found(any_url, registry_at):
    """A condition value of 10 kB (the control's readings of a busy machine run to several kB) is recorded, read
    back whole and found by `list --cond` on both backends. On PostgreSQL a b-tree index over the value refused any
    entry over about 2.7 kB, and recording the fact failed."""
    reg = Registry(any_url)
    registry_at.append(reg)
    long = json.dumps({"samples": [round(20000 + i * 1.37, 1) for i in range(1200)]})
    assert len(long) > 10_000
    facts.record(reg, facts.NewFact(id="box/tiny/tg16", metric="tg_rate", samples=[41.0, 42.0, 43.0],
                                    identity={"machine": "box"}, info={"control": long},
                                    measured_at="2026-11-20T10:00:00Z"))
    assert facts.get(reg, "box/tiny/tg16")["conditions"]["info"]["control"] == long
    assert [f["id"] for f in facts.list_facts(reg, conds={"control": long})] == ["box/tiny/tg16"]
    assert facts.list_facts(reg, conds={"control": long[:-1] + " "}) == []
    assert facts.list_facts(reg, conds={"machine": long}) == []


def test_the_schema_comparison_notices_a_missing_column(db_url, tmp_path):
    """The guard above can fail: a column the migrations lack (a model changed without m004_...) shows up."""
    reg = Registry(db_url)
    with reg.write() as conn:
        conn.execute(text("ALTER TABLE fact ADD COLUMN extra VARCHAR"))
    reg.close()
    assert schema(db_url)["fact"] != models_schema(f"sqlite:///{tmp_path / 'models.db'}")["fact"]


def test_migrations_never_import_models():
    """A migration built from today's models would give an old registry tomorrow's columns at yesterday's step."""
    tree = ast.parse((ROOT / "factreg" / "registry" / "migrations.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            imported.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert not {m for m in imported if m.startswith(("factreg.registry.models", "sqlmodel"))}, imported


def _rows(reg: Registry, drop: tuple[str, ...] = ()) -> dict[str, list[dict[str, Any]]]:
    """Every row of the tables migration 1 created, in a stable order (less the columns in `drop`)."""
    out = {}
    with reg.read() as conn:
        for table in OLD_TABLES:
            got = [{k: v for k, v in r.items() if k not in drop}
                   for r in conn.execute(text(f"SELECT * FROM {table}")).mappings()]
            out[table] = sorted(got, key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return out


PROVENANCE_COLUMNS = ("recorded_by", "origin", "source", "registry_id", "trust")


def record_at_m001(reg: Registry, new: facts.NewFact) -> None:
    """Record a measurement the way factreg did when the registry had only migration 1 (no provenance columns)."""
    prepared = facts.build_rows(new)
    row = {k: v for k, v in prepared["version"].items() if k not in PROVENANCE_COLUMNS}
    with reg.write() as conn:
        current = conn.execute(text("SELECT current_version FROM fact WHERE id = :i"), {"i": row["fact_id"]}).scalar()
        version = (current or 0) + 1
        if current is None:
            conn.execute(text("INSERT INTO fact (id, current_version, created_at) VALUES (:i, 1, :t)"),
                         {"i": row["fact_id"], "t": row["recorded_at"]})
        else:
            conn.execute(text("UPDATE fact SET current_version = :v WHERE id = :i"), {"v": version, "i": row["fact_id"]})
        row["version"] = version
        conn.execute(text(f"INSERT INTO fact_version ({', '.join(row)}) VALUES ({', '.join(':' + k for k in row)})"),
                     row)
        for i, x in enumerate(prepared["samples"]):
            conn.execute(text("INSERT INTO sample VALUES (:f, :v, :i, :x)"),
                         {"f": row["fact_id"], "v": version, "i": i, "x": x})
        for key, value, kind in prepared["conditions"]:
            conn.execute(text('INSERT INTO condition (fact_id, version, "key", value, kind) VALUES (:f, :v, :k, :x, :d)'),
                         {"f": row["fact_id"], "v": version, "k": key, "x": value, "d": kind})


def test_a_registry_of_migration_1_upgrades_and_keeps_its_data(any_url, second_url, registry_at):
    old = Registry(any_url, migrate=False)
    registry_at.append(old)
    assert old.migrate(MIGRATIONS[:1]) == ["m001_core"]
    with old.read() as conn:
        assert not inspect(conn).has_table("decision")
        assert not inspect(conn).has_table("correction")
    record_at_m001(old, facts.NewFact(id="gamebox/a3b/tg32", metric="tg_rate", samples=[11.0, 12.0, 13.5],
                                      identity={"machine": "gamebox", "build_commit": "8cf427ff"},
                                      info={"note": "첫 측정"}, measured_at="2026-10-25T10:00:00Z", tolerance=0.15))
    record_at_m001(old, facts.NewFact(id="gamebox/a3b/tg32", metric="tg_rate", value=12.5, spread=0.4, n=5,
                                      identity={"machine": "gamebox", "build_commit": "8cf427ff"},
                                      measured_at="2026-10-26T10:00:00Z"))
    record_at_m001(old, facts.NewFact(id="remote/27b/ttft", metric="ttft", value=0.25,
                                      measured_at="2026-10-26T11:00:00Z", note="before the upgrade",
                                      method={"kind": "probe", "url": "http://127.0.0.1:9/v1/chat/completions",
                                              "body": {}}))
    with old.write() as conn:
        conn.execute(text(
            "INSERT INTO verification (fact_id, fact_version, verified_at, verdict, method_kind, samples, observed, "
            "diff) VALUES ('remote/27b/ttft', 1, '2026-10-27T00:00:00Z', 'confirmed', 'manual', '[0.25]', '{}', "
            "'{}')"))
    before = _rows(old)

    upgraded = Registry(any_url)  # opening an old registry applies the migrations it lacks
    registry_at.append(upgraded)
    assert upgraded.applied_migrations() == sorted(NAMES)
    assert upgraded.migrate() == []
    assert _rows(upgraded, drop=PROVENANCE_COLUMNS) == before
    shown = facts.get(upgraded, "gamebox/a3b/tg32")
    assert (shown["version"], shown["value"], shown["spread"], shown["n"]) == (2, 12.5, 0.4, 5)
    assert shown["conditions"]["identity"] == {"machine": "gamebox", "build_commit": "8cf427ff"}
    history = facts.history(upgraded, "gamebox/a3b/tg32")
    assert [h["samples"] for h in history] == [[11.0, 12.0, 13.5], []]
    assert history[0]["conditions"]["info"] == {"note": "첫 측정"}
    # versions from before provenance was kept say so, and their methods are not trusted (nothing vouches for them)
    assert shown["provenance"] == dict.fromkeys(("origin", "recorded_by", "source", "registry_id"))
    from factreg.registry import provenance

    assert provenance.trusted(upgraded, [facts.get(upgraded, "remote/27b/ttft")]) == set()
    # ... and verify says why, and how to trust one's own registry once (not "imported")
    assert provenance.why_untrusted(facts.get(upgraded, "remote/27b/ttft")).startswith(
        "method recorded before factreg kept provenance")
    # the upgraded registry has exactly the schema of a new one
    assert schema(any_url) == models_schema(second_url)
    # and the tables of the later migrations work: a decision citing an old fact, a new verification number,
    # a new version with its provenance
    number = decisions.add(upgraded, "Serve from gamebox", [("gamebox/a3b/tg32", None)])
    assert decisions.get(upgraded, number)["cites"][0]["version"] == 2
    with upgraded.write() as conn:
        pk = conn.execute(text(
            "INSERT INTO verification (fact_id, fact_version, verified_at, verdict, method_kind, samples, observed, "
            "diff) VALUES ('remote/27b/ttft', 1, '2026-10-28T00:00:00Z', 'confirmed', 'manual', '[]', '{}', '{}') "
            "RETURNING pk")).scalar()
    assert pk == 2
    again = facts.record(upgraded, facts.NewFact(id="remote/27b/ttft", metric="ttft", value=0.3,
                                                 method={"kind": "probe", "url": "http://127.0.0.1:9/v1/x", "body": {}}))
    assert again["version"] == 2 and again["provenance"]["origin"] == "recorded"
    assert provenance.trusted(upgraded, [again]) == {("remote/27b/ttft", 2)}
    exported = [json.loads(line) for line in jsonl.export_lines(upgraded)]
    assert [(e["kind"], e.get("id") or e.get("number")) for e in exported] == [
        ("fact", "gamebox/a3b/tg32"), ("fact", "remote/27b/ttft"), ("decision", number)]
