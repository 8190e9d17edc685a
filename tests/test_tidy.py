"""Tidy-up: `rm` refused while a document or a decision cites the fact (unless --force), `mv` rewriting every
citing marker and decision byte for byte, and a retracted fact that fails `status` only while something cites it."""

from __future__ import annotations

from pathlib import Path

import pytest

from factreg.registry import facts, provenance
from factreg.registry.facts import NewFact
from tests.decisions_support import docs_project

DOC = ("# Voice\r\n\r\nReplies in <!-- fact: a/e2e -->0.730 ± 0.216 s<!-- /fact --> (was "
       "<!-- fact: a/e2e-2 -->1.00 s<!-- /fact -->); again <!-- fact: a/e2e -->0.730 ± 0.216 s<!-- /fact -->.\r\n"
       "Not a marker: a/e2e in prose, `<!-- fact: a/e2e -->` in code.\r\n")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli) -> Path:  # type: ignore[no-untyped-def]
    root = docs_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    for fid, samples in (("a/e2e", "0.43,0.73,0.85"), ("a/e2e-2", "1.0,1.0,1.0"), ("a/ttft", "0.1,0.2,0.15")):
        assert cli("record", fid, "--metric", "e2e" if "e2e" in fid else "ttft", "--samples", samples,
                   "--cond", "model=m").exit_code == 0
    return root


def test_rm_is_refused_while_a_document_cites_the_fact(cli, project: Path) -> None:
    (project / "docs" / "voice.md").write_bytes(DOC.encode("utf-8"))
    r = cli("rm", "a/e2e")
    assert r.exit_code == 1 and r.stderr.startswith("Error: a/e2e is still cited: docs/voice.md:3")
    assert "factreg mv a/e2e NEW_ID" in r.stderr and "--force" in r.stderr
    assert cli("show", "a/e2e", "--json").exit_code == 0
    forced = cli("rm", "a/e2e", "--force")
    assert forced.exit_code == 0
    assert forced.stderr.startswith("removed a/e2e: 1 version(s), 3 sample(s), 1 condition(s), 0 verification(s)")
    assert "still cited by docs/voice.md:3, docs/voice.md:3" in forced.stderr
    assert cli("show", "a/e2e").exit_code == 2
    assert cli("docs", "check", "docs").exit_code == 1  # the document now cites a fact that is gone


def test_rm_is_refused_while_a_decision_cites_the_fact_and_lists_what_it_removes(cli, project: Path) -> None:
    assert cli("decision", "add", "Voice on a", "--cites", "a/ttft").exit_code == 0
    r = cli("rm", "a/ttft")
    assert r.exit_code == 1 and "a/ttft is still cited: decision 1" in r.stderr
    assert cli("verify", "a/e2e-2", "--against", "a/e2e", "--json").exit_code in (0, 1)
    r = cli("rm", "a/e2e-2", "--json")
    assert r.exit_code == 0
    [gone] = r.json()["removed"]
    assert gone["id"] == "a/e2e-2" and gone["rows"]["verification"] == 1 and gone["still_cited_by"] == []
    assert [f["id"] for f in cli("list", "--json").json()] == ["a/e2e", "a/ttft"]


def test_mv_rewrites_every_citing_marker_and_decision_and_nothing_else(cli, project: Path, registry) -> None:
    doc = project / "docs" / "voice.md"
    doc.write_bytes(DOC.encode("utf-8"))
    other = project / "docs" / "other.md"
    other.write_bytes(b"Unrelated <!-- fact: a/e2e-2 -->1.00 s<!-- /fact -->\n")
    assert cli("decision", "add", "Voice on a", "--cites", "a/e2e,a/ttft", "--driver", "a/e2e < 1.0").exit_code == 0
    decision = project / "decisions" / "0001-voice-on-a.md"
    before = decision.read_text(encoding="utf-8")
    assert cli("verify", "a/e2e", "--against", "a/e2e-2").exit_code in (0, 1)
    r = cli("mv", "a/e2e", "voice/27b/e2e", "--json")
    assert r.exit_code == 0, r.stderr
    expected = DOC.replace("<!-- fact: a/e2e -->", "<!-- fact: voice/27b/e2e -->", 2)
    expected = expected.replace("`<!-- fact: voice/27b/e2e -->` in code", "`<!-- fact: a/e2e -->` in code")
    assert doc.read_bytes() == expected.encode("utf-8")  # the markers' ids and nothing else
    assert other.read_bytes() == b"Unrelated <!-- fact: a/e2e-2 -->1.00 s<!-- /fact -->\n"
    after = decision.read_text(encoding="utf-8")
    assert "a/e2e" not in after.replace("a/e2e-2", "") and after == before.replace("a/e2e", "voice/27b/e2e")
    shown = cli("decision", "show", "1", "--json").json()
    assert [c["id"] for c in shown["cites"]] == ["a/ttft", "voice/27b/e2e"]
    assert [d["text"] for d in shown["drivers"]] == ["voice/27b/e2e < 1.0 s"]
    history = cli("history", "voice/27b/e2e", "--json").json()
    assert len(history) == 1 and len(history[0]["verifications"]) == 1
    assert cli("show", "a/e2e").exit_code == 2
    assert cli("docs", "check", "docs").exit_code in (0, 1)
    problems = cli("docs", "check", "docs", "--json").json()["problems"]
    assert not [p for p in problems if p["kind"] == "unknown_fact"]


def test_mv_keeps_a_trusted_method_trusted_and_an_untrusted_one_untrusted(cli, project: Path, registry) -> None:
    method = {"kind": "probe", "url": "http://127.0.0.1:9/v1/chat/completions", "body": {"messages": []}, "n": 1,
              "warmup": 0, "headers": {}, "select": {"metric": "ttft"}}
    facts.record(registry, NewFact(id="p/ttft", metric="ttft", value=0.1, method=method))
    facts.record(registry, NewFact(id="q/ttft", metric="ttft", value=0.1, method=method, trusted=False,
                                   origin="imported"))
    for old, new in (("p/ttft", "p2/ttft"), ("q/ttft", "q2/ttft")):
        assert cli("mv", old, new).exit_code == 0
    moved = [facts.get(registry, "p2/ttft"), facts.get(registry, "q2/ttft")]
    assert provenance.trusted(registry, moved) == {("p2/ttft", 1)}


@pytest.mark.parametrize("args, message", [
    (["a/e2e", "a/ttft"], "a/ttft is already a fact"),
    (["no/such", "x/y"], "no fact 'no/such'"),
    (["a/e2e", "Bad Id"], "invalid fact id"),
])
def test_mv_refusals_are_one_line_and_change_nothing(cli, project: Path, args: list[str], message: str) -> None:
    r = cli("mv", *args)
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert [f["id"] for f in cli("list", "--json").json()] == ["a/e2e", "a/e2e-2", "a/ttft"]


def test_a_retracted_fact_fails_status_only_while_something_cites_it(cli, project: Path) -> None:
    doc = project / "docs" / "voice.md"
    doc.write_text("Replies in <!-- fact: a/e2e -->?<!-- /fact -->.\n", encoding="utf-8")
    assert cli("docs", "sync", "docs").exit_code == 0
    assert cli("retract", "a/e2e", "--because", "measured on the wrong server").exit_code == 0
    cited = cli("status", "--fail-on", "refuted")
    assert cited.exit_code == 1 and "retracted" in cited.stdout
    doc.write_text("Replies in about a second.\n", encoding="utf-8")
    uncited = cli("status", "--fail-on", "refuted")
    assert uncited.exit_code == 0, uncited.stdout
    row = next(f for f in cli("status", "--json").json()["facts"] if f["id"] == "a/e2e")
    assert row["status"] == "retracted" and row["severity"] == 0 and row["status_reason"].endswith(
        "nothing cites it any more")
    assert cli("decision", "add", "Voice on a", "--cites", "a/e2e").exit_code == 0
    assert cli("status", "--fail-on", "refuted").exit_code == 1  # a decision relies on it again
