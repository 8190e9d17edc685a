"""JSONL export/import is lossless: export → import into an empty registry → export gives the same bytes."""

import json

from factreg.registry import facts, jsonl
from factreg.registry.store import Registry


def populate(cli):
    cli("record", "daytime/27b/e2e", "-m", "e2e", "--samples", "0.43,0.73,0.85", "-c", "model=27b",
        "-c", "body_sha256=ab", "-i", "note=첫 턴 — 고마워", "--measured-at", "2026-10-26T14:05:00Z")
    cli("record", "daytime/27b/e2e", "-m", "e2e", "--samples", "0.5,0.6,0.7,0.8,0.9", "-c", "model=27b",
        "--measured-at", "2026-10-27T14:05:00Z", "--note", "second look")
    cli("record", "gamebox/a3b/tg32", "-m", "tg_rate", "--value", "11.9", "--spread", "7.2", "--n", "5",
        "-c", "machine=gamebox", "--warn-after", "7d", "--error-after", "30d", "--tolerance", "0.15")


def test_roundtrip_is_byte_identical(cli, tmp_path):
    populate(cli)
    first = tmp_path / "one.jsonl"
    assert cli("export", "--out", str(first)).exit_code == 0
    other = tmp_path / "other.db"
    r = cli("import", str(first), "--db", str(other))
    assert r.exit_code == 0, r.stderr
    second = tmp_path / "two.jsonl"
    assert cli("export", "--out", str(second), "--db", str(other)).exit_code == 0
    assert first.read_bytes() == second.read_bytes()
    lines = [json.loads(x) for x in first.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["daytime/27b/e2e", "gamebox/a3b/tg32"]
    assert len(lines[0]["versions"]) == 2
    assert lines[0]["versions"][0]["conditions"]["info"]["note"] == "첫 턴 — 고마워"


def test_import_twice_is_idempotent(cli, tmp_path):
    populate(cli)
    out = tmp_path / "x.jsonl"
    cli("export", "--out", str(out))
    r = cli("import", str(out), "--json")
    assert r.exit_code == 0
    assert r.json()["versions"] == 0 and r.json()["skipped"] == 3
    assert len(cli("history", "daytime/27b/e2e", "--json").json()) == 2


def test_export_to_stdout_matches_file(cli, tmp_path):
    populate(cli)
    out = tmp_path / "x.jsonl"
    cli("export", "--out", str(out))
    assert cli("export").stdout == out.read_text()


def test_record_lines_import(cli, tmp_path):
    src = tmp_path / "records.jsonl"
    src.write_text(
        json.dumps({"id": "case/27b/e2e", "metric": "e2e", "samples": [0.43, 0.73, 0.85],
                    "cond": {"model": "27b", "body_sha256": "ab", "endpoint": "http://remote/v1"}, "measured_at": "2026-10-26T14:00:00Z"}) + "\n"
        + json.dumps({"kind": "record", "id": "case/a3b/tg32", "metric": "tg_rate", "value": 11.9, "spread": 7.2,
                      "n": 5, "conditions": {"identity": {"machine": "gamebox"}, "info": {"test_time": "x"}}}) + "\n"
    )
    r = cli("import", "jsonl", str(src), "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["versions"] == 2
    f = cli("show", "case/27b/e2e", "--json").json()
    assert f["value"] == 0.73 and f["flags"] == ["few_samples", "high_variance"]


def test_conflicting_version_is_refused(registry, tmp_path):
    facts.record(registry, facts.NewFact(id="a/b", metric="ttft", value=1.0, measured_at="2026-01-01T00:00:00Z"))
    lines = list(jsonl.export_lines(registry))
    other = Registry(f"sqlite:///{tmp_path / 'o.db'}")
    facts.record(other, facts.NewFact(id="a/b", metric="ttft", value=2.0, measured_at="2026-01-01T00:00:00Z"))
    import pytest

    from factreg.errors import BadInput

    with pytest.raises(BadInput, match="differs"):
        jsonl.import_lines(other, jsonl.parse_text("\n".join(lines)))
    assert facts.get(other, "a/b")["value"] == 2.0


def test_imported_versions_make_the_latest_measured_current(cli, tmp_path):
    """Record lines and fact lines: whatever order versions arrive in, the latest measurement is current."""
    lines = tmp_path / "records.jsonl"
    lines.write_text(
        json.dumps({"id": "box/m/tg32", "metric": "tg_rate", "value": 20, "measured_at": "2026-10-27T10:00:00Z"})
        + "\n" + json.dumps({"id": "box/m/tg32", "metric": "tg_rate", "value": 10,
                             "measured_at": "2026-10-01T10:00:00Z"}) + "\n", encoding="utf-8")
    assert cli("import", str(lines)).exit_code == 0
    h = cli("history", "box/m/tg32", "--json").json()
    assert [(v["version"], v["value"], v["current"]) for v in h] == [(2, 10.0, False), (1, 20.0, True)]
    # An export of another registry that holds an older and a newer measurement as versions 1 and 3.
    other = tmp_path / "other.db"
    for value, when in ((5, "2026-09-01T00:00:00Z"), (7, "2026-09-02T00:00:00Z"), (40, "2026-11-01T00:00:00Z")):
        cli("record", "box/m/tg32", "-m", "tg_rate", "--value", str(value), "--measured-at", when, "--db", str(other))
    exported = tmp_path / "other.jsonl"
    cli("export", "--out", str(exported), "--db", str(other))
    obj = json.loads(exported.read_text(encoding="utf-8"))
    obj["versions"] = [v for v in obj["versions"] if v["version"] == 3]  # only the newest, as version 3
    exported.write_text(json.dumps(obj) + "\n", encoding="utf-8")
    r = cli("import", str(exported), "--json")
    assert r.exit_code == 0, r.stderr
    assert cli("show", "box/m/tg32", "--json").json()["value"] == 40.0
    # And an older version 4 arriving later does not take its place.
    obj["versions"][0].update(version=4, value=1.0, measured_at="2026-08-01T00:00:00Z")
    obj["current_version"] = 4  # the line is consistent; the registry still judges which is current
    exported.write_text(json.dumps(obj) + "\n", encoding="utf-8")
    assert cli("import", str(exported)).exit_code == 0
    h = cli("history", "box/m/tg32", "--json").json()
    assert [(v["version"], v["value"], v["current"]) for v in h] == [
        (4, 1.0, False), (2, 10.0, False), (1, 20.0, False), (3, 40.0, True)]
