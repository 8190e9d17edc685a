"""retract: withdraw a wrong fact that nothing replaces — `retracted` (ranked with refuted), a note, citing documents
fail `docs check`, decisions relying on it need review; all or nothing like `correct`.

Dates are relative to the tests' pinned now (conftest.TEST_NOW, `ago`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factreg.config import resolve
from factreg.publish import corrections
from factreg.registry import facts, freshness, jsonl
from factreg.registry.store import Registry
from tests.conftest import ago
from tests.decisions_support import git, init_repo

WRONG = "gateway/27b/e2e"
KEPT = "gamebox/35b-a3b/e2e"
DOC = f"# Voice\n\nThe 27B answers in <!-- fact: {WRONG} -->0.450 ± 0.050 s<!-- /fact -->.\n"
BECAUSE = "the gateway answered from its cache, not the model"
NOTE = f"facts/corrections/{ago(date_only=True)}-gateway-27b-e2e-retraction.md"
DECISION = "decisions/0001-voice-on-the-27b.md"


@pytest.fixture
def project(tmp_path: Path, cli, monkeypatch):  # type: ignore[no-untyped-def]
    """A docs repository citing WRONG, and a decision relying on it (committed)."""
    repo = init_repo(tmp_path / "proj")
    (repo / ".factreg").mkdir()
    (repo / ".factreg/config.toml").write_text('[docs]\nroots = ["docs"]\n')
    (repo / "docs").mkdir()
    (repo / "docs/voice.md").write_text(DOC)
    git(repo, "add", ".factreg/config.toml", "docs/voice.md")
    git(repo, "commit", "-q", "-m", "docs")
    monkeypatch.chdir(repo)
    for fid, samples in ((WRONG, "0.40,0.45,0.50"), (KEPT, "0.80,0.85,0.90")):
        r = cli("record", fid, "--metric", "e2e", "--samples", samples, "--measured-at", ago(2))
        assert r.exit_code == 0, r.stderr
    r = cli("decision", "add", "Voice on the 27B", "--cites", f"{WRONG},{KEPT}", "--commit")
    assert r.exit_code == 0, r.stderr
    assert cli("docs", "check").exit_code == 0
    return repo


def state(registry: Registry, repo: Path) -> tuple:
    """What a refused or failed retraction must leave as it was: corrections, statuses, files, HEAD."""
    files = {p.relative_to(repo).as_posix(): p.read_bytes() for p in repo.rglob("*") if p.is_file()
             and ".git" not in p.parts}
    return (corrections.list_corrections(registry), [(f["id"], f["status"]) for f in facts.list_facts(registry)],
            files, git(repo, "rev-parse", "HEAD"))


def test_retract_flags_citations_and_decisions(cli, project, registry):
    r = cli("retract", WRONG, "--because", BECAUSE, "--json")
    assert r.exit_code == 0, r.stderr
    out = r.json()
    assert out["retracted"] == f"{WRONG}@v1" and out["decisions"] == [1] and out["commit"] is None
    assert sorted(Path(p).relative_to(project).as_posix() for p in out["changed"]) == [DECISION, NOTE]
    note = (project / NOTE).read_text(encoding="utf-8")
    assert note.startswith(f"<!-- factreg retraction: {WRONG}@v1 -->\n# Retraction: `{WRONG}`")
    assert f"\n{BECAUSE}\n" in note and "| e2e | 0.450 ± 0.050 s |" in note
    assert "- [docs/voice.md](../../docs/voice.md) line 3: cited 0.450 ± 0.050 s" in note
    assert f"- [decision 1: Voice on the 27B](../../{DECISION}) — needs review" in note

    fact = facts.get(registry, WRONG)
    assert fact["status"] == "retracted"
    assert fact["status_reason"] == f"retracted on {ago(date_only=True)}: {BECAUSE}"
    assert facts.get(registry, KEPT)["status"] == "fresh"
    assert freshness.severity("retracted") == freshness.severity("refuted")
    # status fails at every level, refuted included
    for level in ("stale", "refuted"):
        r = cli("status", "--fail-on", level, "--json")
        assert r.exit_code == 1
    status = cli("status", "--json").json()
    assert {f["id"]: f["status"] for f in status["facts"]} == {WRONG: "retracted", KEPT: "fresh"}
    assert status["summary"]["counts"] == {"fresh": 1, "retracted": 1}
    assert [d["number"] for d in status["decisions_needing_review"]] == [1]
    # the citation fails docs check, like a refuted fact's
    r = cli("docs", "check", "--json")
    assert r.exit_code == 1
    [problem] = r.json()["problems"]
    assert problem["kind"] == "retracted" and problem["fact_id"] == WRONG and "withdrawn" in problem["fix"]
    # the decision needs review, with the fact named
    shown = cli("decision", "show", "1", "--json").json()
    assert shown["status"] == "needs review"
    assert shown["review_reasons"] == [f"{WRONG} is retracted: retracted on {ago(date_only=True)}: {BECAUSE}"]
    assert 'status: "needs review"' in (project / DECISION).read_text(encoding="utf-8")
    [row] = corrections.list_corrections(registry)
    assert (row["old_id"], row["new_id"], row["verification"], row["note_path"]) == (WRONG, None, None, NOTE)


def test_retract_with_commit_commits_exactly_its_files(cli, project):
    head = git(project, "rev-parse", "HEAD").strip()
    (project / "notes.md").write_text("the user's own work\n")
    r = cli("retract", WRONG, "--because", BECAUSE, "--commit", "--json")
    assert r.exit_code == 0, r.stderr
    assert git(project, "rev-parse", "HEAD~1").strip() == head
    assert sorted(git(project, "show", "--name-only", "--format=", "HEAD").split()) == [DECISION, NOTE]
    assert git(project, "log", "-1", "--format=%s").startswith(f"factreg retract {WRONG}@v1: ")
    assert "?? notes.md" in git(project, "status", "--porcelain")


def test_a_template_error_retracts_nothing(cli, project, registry, tmp_path):
    before = state(registry, project)
    broken = tmp_path / "templates"
    broken.mkdir()
    (broken / "retraction.md.j2").write_text("{{ r.no_such_field.x }}\n")
    r = cli("retract", WRONG, "--because", BECAUSE, "--templates", str(broken))
    assert r.exit_code == 2 and r.stderr.startswith("Error: template 'retraction.md.j2'")
    assert state(registry, project) == before


def test_a_failed_commit_takes_the_retraction_back(cli, project, registry):
    before = state(registry, project)
    hook = project / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\necho 'pre-commit: refused' >&2\nexit 1\n")
    hook.chmod(0o755)
    r = cli("retract", WRONG, "--because", BECAUSE, "--commit")
    assert r.exit_code == 2 and r.stderr.startswith("Error: --commit failed: ") and r.stderr.count("\n") == 1
    assert state(registry, project) == before
    hook.unlink()
    r = cli("retract", WRONG, "--because", BECAUSE, "--commit", "--json")  # the retry does it all
    assert r.exit_code == 0, r.stderr
    assert r.json()["commit"] and facts.get(registry, WRONG)["status"] == "retracted"


def test_an_interrupted_retraction_is_finished_by_running_it_again(cli, project, registry, monkeypatch):
    monkeypatch.setattr(corrections.retraction, "_undo_retraction", lambda *a, **k: None)
    real = corrections.transaction.publish_files

    def killed(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(corrections.transaction, "publish_files", killed)
    with pytest.raises(KeyboardInterrupt):
        corrections.retract(registry, resolve(), WRONG, because=BECAUSE)
    monkeypatch.setattr(corrections.transaction, "publish_files", real)
    assert facts.get(registry, WRONG)["status"] == "retracted" and not (project / NOTE).exists()
    r = cli("retract", WRONG, "--because", BECAUSE, "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["resumed"] and (project / NOTE).is_file() and len(corrections.list_corrections(registry)) == 1
    r = cli("retract", WRONG, "--because", BECAUSE, "--json")
    assert r.exit_code == 0 and r.json()["changed"] == []


@pytest.mark.parametrize("args", [
    (WRONG, "--because", "   "),
    (WRONG, "--because", ""),
    ("no/such/fact", "--because", BECAUSE),
    ("../etc/passwd", "--because", BECAUSE),
    (KEPT, "--because", BECAUSE, "--commit", "--out", "/nonexistent/folder"),
])
def test_bad_retractions_are_one_error_line_and_change_nothing(cli, project, registry, args):
    before = state(registry, project)
    r = cli("retract", *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert state(registry, project) == before


def test_retracting_twice_with_another_reason_or_a_superseded_fact_is_refused(cli, project, registry):
    assert cli("retract", WRONG, "--because", BECAUSE).exit_code == 0
    r = cli("retract", WRONG, "--because", "another reason")
    assert r.exit_code == 2 and "already retracted" in r.stderr
    facts.supersede(registry, KEPT, WRONG)
    r = cli("retract", KEPT, "--because", BECAUSE)
    assert r.exit_code == 2 and f"superseded by {WRONG}" in r.stderr


def test_a_version_recorded_after_the_retraction_is_not_retracted(cli, project, registry):
    assert cli("retract", WRONG, "--because", BECAUSE).exit_code == 0
    r = cli("record", WRONG, "--metric", "e2e", "--samples", "0.9,1.0,1.1", "--measured-at", ago(1))
    assert r.exit_code == 0, r.stderr
    assert facts.get(registry, WRONG)["status"] == "fresh"
    assert {f["id"]: f["status"] for f in cli("status", "--json").json()["facts"]}[WRONG] == "fresh"


def test_export_and_import_keep_the_retraction(cli, project, registry, tmp_path):
    assert cli("retract", WRONG, "--because", BECAUSE).exit_code == 0
    lines = list(jsonl.export_lines(registry))
    [row] = [json.loads(x) for x in lines if '"kind":"correction"' in x]
    assert row["new_fact_id"] is None and row["cause"] == BECAUSE
    dump = tmp_path / "export.jsonl"
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    copy = Registry(f"sqlite:///{tmp_path / 'copy.db'}")
    try:
        jsonl.import_files(copy, [dump])
        assert list(jsonl.export_lines(copy)) == lines
        assert facts.get(copy, WRONG)["status"] == "retracted"
    finally:
        copy.close()
