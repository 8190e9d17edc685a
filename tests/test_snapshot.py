"""The registry in git, as text: `init` has git ignore the SQLite file, `--commit` writes `.factreg/registry.jsonl`
into the same commit, and a fresh clone with that file and no registry.db builds its registry from it — `docs check`
gives the same result there, and `verify` runs none of its methods without `--trust-imported`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factreg.cli import app
from tests.conftest import Run, ago
from tests.decisions_support import git, init_repo

pytestmark = pytest.mark.shares  # the stand-in answers probes whose figures no test here judges

BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


def factreg(*args: str) -> Run:
    """`factreg ARGS` in the current folder, on the project's own registry (no FACTREG_DB)."""
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = init_repo(tmp_path / "origin")
    monkeypatch.chdir(root)
    r = factreg("init")
    assert r.exit_code == 0, r.stderr
    (root / ".factreg" / "config.toml").write_text('[docs]\nroots = ["docs"]\n', encoding="utf-8")
    (root / "docs").mkdir()
    return root


def test_init_ignores_the_sqlite_file_and_says_so(repo: Path) -> None:
    ignored = (repo / ".factreg" / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert {"registry.db", "registry.db-wal", "registry.db-shm"} <= set(ignored)
    git(repo, "add", ".factreg")
    assert git(repo, "ls-files", ".factreg").split() == [".factreg/.gitignore", ".factreg/config.toml"]
    again = factreg("init")
    assert "registry.db is ignored" in again.stderr and "git rm --cached" not in again.stderr


def test_a_repository_that_tracks_the_sqlite_file_is_told_once_to_stop(tmp_path: Path, monkeypatch) -> None:
    root = init_repo(tmp_path / "old")
    monkeypatch.chdir(root)
    (root / ".factreg").mkdir()
    (root / ".factreg" / ".gitignore").write_text("registry.db-wal\nregistry.db-shm\n", encoding="utf-8")
    assert factreg("record", "a/b", "--metric", "e2e", "--value", "1").exit_code == 0
    git(root, "add", "-f", ".factreg")
    git(root, "commit", "-q", "-m", "registry as a binary")
    r = factreg("init")
    assert r.stderr.count("git rm --cached .factreg/registry.db") == 1
    assert (root / ".factreg" / ".gitignore").read_text(encoding="utf-8").splitlines()[:3] == [
        "registry.db-wal", "registry.db-shm", "registry.db"]


def _walk(repo: Path, server) -> None:  # type: ignore[no-untyped-def]
    """Facts, a probe method, a refutation, a document and a decision, committed with `--commit`."""
    body = repo / "body.json"
    body.write_text(json.dumps(BODY), encoding="utf-8")
    assert factreg("record", "front/ttft", "--metric", "ttft", "--samples", "0.05,0.06,0.05", "--measured-at",
                   ago(1)).exit_code == 0
    assert factreg("method", "front/ttft", "--probe", server.url("ok,first=0.4"), "--body", str(body)).exit_code == 0
    assert factreg("record", "front/e2e", "--metric", "e2e", "--samples", "1.0,1.1,1.2").exit_code == 0
    assert factreg("record", "lab/e2e", "--metric", "e2e", "--samples", "2.0,2.1,2.2").exit_code == 0
    assert factreg("verify", "front/e2e", "--against", "lab/e2e").exit_code == 1
    (repo / "docs" / "a.md").write_text("First token in <!-- fact: front/ttft -->?<!-- /fact -->, reply in "
                                        "<!-- fact: front/e2e -->?<!-- /fact -->.\n", encoding="utf-8")
    assert factreg("docs", "sync", "docs").exit_code in (0, 1)
    git(repo, "add", "docs", ".factreg", "body.json")
    git(repo, "commit", "-q", "-m", "docs")
    r = factreg("decision", "add", "Serve from front", "--cites", "front/ttft", "--commit")
    assert r.exit_code == 0, r.stderr


def test_commit_writes_the_text_copy_into_the_same_commit(repo: Path, server) -> None:
    _walk(repo, server)
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert committed == [".factreg/registry.jsonl", "decisions/0001-serve-from-front.md"]
    text = (repo / ".factreg" / "registry.jsonl").read_text(encoding="utf-8")
    assert text == git(repo, "show", "HEAD:.factreg/registry.jsonl")
    assert text == factreg("export").stdout  # the lossless export, as it is
    ids = [json.loads(line)["id"] for line in text.splitlines() if json.loads(line)["kind"] == "fact"]
    assert ids == sorted(ids)
    assert git(repo, "status", "--porcelain") == ""  # registry.db is ignored, the text copy as committed
    r = factreg("correct", "front/e2e", "--verification", "latest", "--commit")
    assert r.exit_code == 0, r.stderr
    assert ".factreg/registry.jsonl" in git(repo, "show", "--name-only", "--format=", "HEAD").split()
    diff = git(repo, "diff", "HEAD~1", "HEAD", "--", ".factreg/registry.jsonl")
    assert diff.count("\n-{") == 1 and diff.count("\n+{") == 2  # front/e2e's line, and the correction's


def test_a_fresh_clone_builds_its_registry_from_the_text(repo: Path, server, tmp_path: Path, monkeypatch) -> None:
    _walk(repo, server)
    assert factreg("correct", "front/e2e", "--verification", "latest", "--commit").exit_code == 0
    factreg("verify", "front/ttft", "--against", "lab/e2e")  # not the same metric: refused, nothing changes
    here = factreg("docs", "check", "docs", "--json")
    here_status = factreg("status", "--json")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    assert not (clone / ".factreg" / "registry.db").exists()
    monkeypatch.chdir(clone)
    there = factreg("docs", "check", "docs", "--json")
    assert there.stderr.startswith("Built the local registry from .factreg/registry.jsonl (3 fact(s), 1 decision(s))")
    assert "verify --trust-imported" in there.stderr
    assert (there.exit_code, json.loads(there.stdout)) == (here.exit_code, json.loads(here.stdout))
    assert (clone / ".factreg" / "registry.db").exists()
    again = factreg("status", "--json")
    assert "Built the local registry" not in again.stderr  # once
    assert [(f["id"], f["status"]) for f in again.json()["facts"]] == \
        [(f["id"], f["status"]) for f in here_status.json()["facts"]]
    # the methods in the text are not this registry's: nothing of them runs without --trust-imported
    seen = len(server.requests)
    [res] = factreg("verify", "front/ttft", "--json").json()
    assert res["verdict"] == "error" and "not trusted" in res["message"] and res["recorded"] is False
    assert len(server.requests) == seen
    [res] = factreg("verify", "front/ttft", "--json", "--trust-imported").json()
    assert res["recorded"] is True and len(server.requests) > seen


def test_a_registry_elsewhere_has_no_text_copy(repo: Path, server, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FACTREG_DB", str(tmp_path / "elsewhere.db"))
    assert factreg("record", "a/e2e", "--metric", "e2e", "--value", "1").exit_code == 0
    assert factreg("decision", "add", "A", "--cites", "a/e2e", "--commit").exit_code == 0
    assert not (repo / ".factreg" / "registry.jsonl").exists()
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["decisions/0001-a.md"]
