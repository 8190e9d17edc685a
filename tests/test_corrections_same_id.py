"""Corrections keep the id people cite: the corrected value is a new version of the same id, the wrong version stays
in the history marked corrected, the next measurement feeds the same id, trust passes on only from a trusted method;
and a registry written before (an old correction that made a new id) keeps working."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from factreg.registry import facts, provenance
from factreg.registry.facts import NewFact
from tests.conftest import ago
from tests.decisions_support import docs_project

BEFORE = Path(__file__).parent / "data" / "before-same-id"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli) -> Path:  # type: ignore[no-untyped-def]
    root = docs_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


def _typed_then_refuted(cli) -> int:  # type: ignore[no-untyped-def]
    cli("record", "gamebox/a3b/decode_rate", "--metric", "decode_rate", "--samples", "28.0,27.5,28.4", "--cond",
        "machine=gamebox", "--cond", "model=a3b", "--measured-at", ago(30))
    cli("record", "lab/a3b/decode_rate", "--metric", "decode_rate", "--samples", "11.2,12.1,11.9,12.4,11.5",
        "--cond", "machine=gamebox", "--cond", "model=a3b", "--measured-at", ago(1))
    [res] = cli("verify", "gamebox/a3b/decode_rate", "--against", "lab/a3b/decode_rate", "--json").json()
    assert res["verdict"] == "refuted"
    return int(res["verification"])


def test_a_correction_is_a_new_version_of_the_cited_id(cli, project: Path, registry) -> None:
    number = _typed_then_refuted(cli)
    doc = project / "docs" / "runbook.md"
    doc.write_text("Decode runs at <!-- fact: gamebox/a3b/decode_rate -->?<!-- /fact --> on gamebox.\n", "utf-8")
    assert cli("docs", "sync", "docs").exit_code == 0
    assert cli("decision", "add", "Batch jobs on gamebox", "--cites", "gamebox/a3b/decode_rate").exit_code == 0
    r = cli("correct", "gamebox/a3b/decode_rate", "--verification", "latest", "--cause", "old build", "--json")
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert (out["old"], out["new"], out["same_id"]) == ("gamebox/a3b/decode_rate@v1", "gamebox/a3b/decode_rate@v2",
                                                        True)
    now = cli("show", "gamebox/a3b/decode_rate", "--json").json()
    assert now["version"] == 2 and now["status"] == "fresh" and now["superseded_by"] is None
    assert now["value"] == pytest.approx(11.9) and now["note"].startswith(f"re-measured by verification {number}")
    # the document keeps citing the same id, its text synced to the value that holds
    assert doc.read_text(encoding="utf-8") == ("Decode runs at <!-- fact: gamebox/a3b/decode_rate -->11.9 ± 0.5 "
                                               "tok/s<!-- /fact --> on gamebox.\n")
    assert cli("docs", "check", "docs").exit_code == 0
    history = cli("history", "gamebox/a3b/decode_rate")
    old_line = next(line for line in history.stdout.splitlines() if line.startswith("1 "))
    assert "(corrected by v2)" in old_line and f"verification {number}: " in old_line
    note = Path(out["note"])
    assert note.is_file() and "is corrected by its v2" in note.read_text(encoding="utf-8")
    assert cli("history", "gamebox/a3b/decode_rate", "--json").json()[0]["corrected"]["note"] == \
        note.relative_to(project).as_posix()
    decision = cli("decision", "show", "1", "--json").json()
    assert decision["status"] == "needs review"
    assert any("gamebox/a3b/decode_rate v1 was corrected by v2" in x for x in decision["review_reasons"])


def test_the_next_measurement_feeds_the_cited_id_and_the_corrected_version_is_never_current(cli, project) -> None:
    cli("record", "a/e2e", "--metric", "e2e", "--samples", "0.43,0.73,0.85", "--measured-at", ago(1))
    cli("record", "b/e2e", "--metric", "e2e", "--samples", "1.1,1.2,1.3", "--measured-at", ago(10))
    r = cli("correct", "a/e2e", "--by", "b/e2e", "--json")
    assert r.exit_code == 0, r.stderr
    now = cli("show", "a/e2e", "--json").json()
    # b's measurement is older than the corrected version, yet it is current: a corrected version never is
    assert now["version"] == 2 and now["value"] == 1.2 and now["measured_at"] == ago(10)
    assert now["note"] == "corrected by b/e2e@v1"
    cli("record", "a/e2e", "--metric", "e2e", "--samples", "1.0,1.1,1.2")
    assert cli("show", "a/e2e", "--json").json()["version"] == 3  # the next measurement is the cited id's


def test_the_corrected_version_is_trusted_only_when_the_wrong_one_was(cli, project: Path, registry) -> None:
    method = {"kind": "probe", "url": "http://127.0.0.1:9/v1/chat/completions", "body": {"messages": []}, "n": 1,
              "warmup": 0, "headers": {}, "select": {"metric": "ttft"}}
    facts.record(registry, NewFact(id="mine/ttft", metric="ttft", samples=[0.1, 0.11, 0.12], method=method,
                                   measured_at=ago(5)))
    facts.record(registry, NewFact(id="theirs/ttft", metric="ttft", samples=[0.1, 0.11, 0.12], method=method,
                                   measured_at=ago(5), trusted=False, origin="imported", source="theirs.jsonl"))
    cli("record", "lab/ttft", "--metric", "ttft", "--samples", "0.5,0.52,0.55")
    for fid in ("mine/ttft", "theirs/ttft"):
        assert cli("correct", fid, "--by", "lab/ttft").exit_code == 0
    corrected = [facts.get(registry, "mine/ttft"), facts.get(registry, "theirs/ttft")]
    assert [f["version"] for f in corrected] == [2, 2] and corrected[0]["method"] == method
    assert provenance.trusted(registry, corrected) == {("mine/ttft", 2)}


def test_as_new_id_only_when_the_claim_changes(cli, project: Path) -> None:
    number = _typed_then_refuted(cli)
    r = cli("correct", "gamebox/a3b/decode_rate", "--verification", str(number), "--as", "gamebox/a3b/decode-ubatch",
            "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["same_id"] is False and r.json()["new"] == "gamebox/a3b/decode-ubatch@v1"
    assert cli("show", "gamebox/a3b/decode_rate", "--json").json()["superseded_by"] == "gamebox/a3b/decode-ubatch"


def test_a_registry_written_before_keeps_working(cli, project: Path, tmp_path: Path) -> None:
    """The old release's registry (tests/data/before-same-id): its correction made a new id and superseded the old
    one. The link, the note, the decision and the documents stay as they were; correcting the successor now adds a
    version to the successor's id."""
    for part in ("docs", "decisions", "facts"):
        shutil.copytree(BEFORE / part, project / part, dirs_exist_ok=True)
    assert cli("import", str(BEFORE / "registry.jsonl")).exit_code == 0
    export = tmp_path / "again.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    assert export.read_bytes() == (BEFORE / "registry.jsonl").read_bytes()  # the same registry, byte for byte
    old = cli("show", "gamebox/a3b/decode_rate", "--json").json()
    assert old["status"] == "superseded" and old["superseded_by"] == "gamebox/a3b/decode_rate-20261128"
    assert cli("docs", "check", "docs").exit_code == 0  # the runbook cites the successor, as the old sync wrote it
    decision = cli("decision", "show", "1", "--json").json()
    assert decision["review_reasons"] == ["gamebox/a3b/decode_rate was superseded by gamebox/a3b/decode_rate-20261128"]
    history = cli("history", "gamebox/a3b/decode_rate", "--json").json()
    assert [v.get("corrected") for v in history] == [None]  # an old correction is a supersede, not a same-id one
    cli("record", "lab/x", "--metric", "decode_rate", "--samples", "9.0,9.1,9.2", "--cond", "machine=gamebox",
        "--cond", "model=a3b")
    r = cli("correct", "gamebox/a3b/decode_rate-20261128", "--by", "lab/x", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["new"] == "gamebox/a3b/decode_rate-20261128@v2"
    assert cli("docs", "sync", "docs").exit_code == 0
    assert "<!-- fact: gamebox/a3b/decode_rate-20261128 -->9.10 ± 0.10 tok/s<!-- /fact -->" in \
        (project / "docs" / "runbook.md").read_text(encoding="utf-8")
    assert (project / "facts/corrections/2026-11-28-gamebox-a3b-decode_rate.md").read_bytes() == \
        (BEFORE / "facts/corrections/2026-11-28-gamebox-a3b-decode_rate.md").read_bytes()  # old notes untouched
