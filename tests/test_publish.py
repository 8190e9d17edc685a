"""publish: atomic writes and commits that touch exactly factreg's files, in real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from factreg.errors import ConfigError
from factreg.publish import writer as publish
from tests.decisions_support import git, init_repo


def test_commit_only_given_paths_leaves_user_changes_alone(tmp_path):
    repo = init_repo(tmp_path / "r")
    (repo / "mine.txt").write_text("user's staged work\n")
    git(repo, "add", "mine.txt")
    (repo / "README.md").write_text("# project\nunstaged edit\n")
    (repo / "scratch.txt").write_text("untracked\n")
    changed, sha = publish.write_and_commit(
        {repo / "facts/STALE.md": "# Stale\n", repo / "facts/a/b.md": "b\n"}, "factreg report", True, root=repo
    )
    assert sorted(p.relative_to(repo).as_posix() for p in changed) == ["facts/STALE.md", "facts/a/b.md"]
    assert sha is not None and git(repo, "rev-parse", "HEAD").strip() == sha
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert committed == ["facts/STALE.md", "facts/a/b.md"]
    status = git(repo, "status", "--porcelain").splitlines()
    assert "A  mine.txt" in status and " M README.md" in status and "?? scratch.txt" in status
    assert not any("facts/" in line for line in status)
    # The user's staged file is still staged with its content, ready for their own commit.
    assert git(repo, "diff", "--cached", "--name-only").split() == ["mine.txt"]


def test_no_commit_when_nothing_changed(tmp_path):
    repo = init_repo(tmp_path / "r")
    files = {repo / "facts/README.md": "# Facts\n"}
    _, first = publish.write_and_commit(files, "report", True, root=repo)
    head = git(repo, "rev-parse", "HEAD")
    changed, second = publish.write_and_commit(files, "report", True, root=repo)
    assert first and second is None and changed == []
    assert git(repo, "rev-parse", "HEAD") == head


def test_file_written_earlier_without_commit_is_committed_later(tmp_path):
    repo = init_repo(tmp_path / "r")
    files = {repo / "facts/README.md": "# Facts\n"}
    publish.write_and_commit(files, "report", False, root=repo)
    changed, sha = publish.write_and_commit(files, "report", True, root=repo)
    assert changed == [] and sha is not None
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["facts/README.md"]


def test_commit_in_a_repository_without_commits(tmp_path):
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "other.txt").write_text("x\n")
    git(repo, "add", "other.txt")
    _, sha = publish.write_and_commit({repo / "decisions/0001-x.md": "x\n"}, "decision", True, root=repo)
    assert sha and git(repo, "log", "--format=%s").strip() == "decision"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["decisions/0001-x.md"]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["other.txt"]


def test_paths_outside_are_refused(tmp_path):
    repo = init_repo(tmp_path / "r")
    with pytest.raises(ConfigError, match="outside"):
        publish.write({repo / "../escape.md": "x"}, root=repo)
    assert not (tmp_path / "escape.md").exists()
    outside = tmp_path / "elsewhere.md"
    outside.write_text("x")
    with pytest.raises(ConfigError, match="outside the repository"):
        publish.commit({repo / "README.md": b"x", outside: b"x"}, "m", repo)
    with pytest.raises(ConfigError, match="not inside a git repository"):
        publish.commit({outside: b"x"}, "m", tmp_path)


def test_writes_are_atomic_and_only_when_changed(tmp_path):
    target = tmp_path / "a" / "b.md"
    assert publish.write({target: "one\n"}, tmp_path) == [target]
    mtime = target.stat().st_mtime_ns
    assert publish.write({target: "one\n"}, tmp_path) == []
    assert target.stat().st_mtime_ns == mtime
    assert [p.name for p in target.parent.iterdir()] == ["b.md"]  # no temp files left behind
    assert isinstance(target, Path)
