"""`--commit` in real git repositories: only factreg's changes are committed, git's hooks run, a detached HEAD is
refused, and a correction whose commit fails leaves nothing behind (registry, files, HEAD) and can be run again.

docs/reliability.md states the properties; the SIGKILL test of `correct` is in tests/test_crash.py."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from factreg.publish import corrections
from factreg.registry import facts
from tests.decisions_support import add_verification, git, init_repo, seed

pytestmark = pytest.mark.usefixtures("story_clock")

DOC = "# Voice\n\nFull reply in <!-- fact: night/35b-a3b/e2e -->1.07 s<!-- /fact --> on 35B-A3B.\n"
# A correction keeps the id the document cites: only the marker's text changes.
SYNCED = "# Voice\n\nFull reply in <!-- fact: night/35b-a3b/e2e -->2.27 ± 1.14 s<!-- /fact --> on 35B-A3B.\n"
DRAFT = "DRAFT: gateway login is admin password=hunter2-not-for-git\n"


@pytest.fixture
def project(tmp_path: Path, registry, monkeypatch):  # type: ignore[no-untyped-def]
    repo = init_repo(tmp_path / "proj")
    (repo / ".factreg").mkdir()
    (repo / ".factreg/config.toml").write_text('[docs]\nroots = ["docs"]\n')
    (repo / "docs").mkdir()
    (repo / "docs/voice.md").write_text(DOC, encoding="utf-8")
    git(repo, "add", ".factreg/config.toml", "docs/voice.md")
    git(repo, "commit", "-q", "-m", "docs")
    monkeypatch.chdir(repo)
    seed(registry)
    return repo


def hook(repo: Path, name: str, body: str) -> Path:
    path = repo / ".git/hooks" / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def registry_state(registry) -> tuple:  # type: ignore[no-untyped-def]
    """What a correction changes in the registry: successors, correction rows, fact ids."""
    listed = facts.list_facts(registry)
    return (sorted((f["id"], f["superseded_by"]) for f in listed), len(corrections.list_corrections(registry)))


def files_state(repo: Path) -> dict[str, bytes]:
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(repo).parts}


# ---------------------------------------------------------------- only factreg's changes are committed


def test_correct_commits_the_head_version_plus_its_edit_not_the_users_work(cli, project):
    doc = project / "docs/voice.md"
    doc.write_text(DOC + "\n" + DRAFT, encoding="utf-8")  # the user's unstaged work in a synced document
    (project / "docs/other.md").write_text("untracked, with a marker <!-- fact: night/35b-a3b/e2e -->x<!-- /fact -->\n")
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--commit", "--json")
    assert r.exit_code == 0, r.stderr
    assert git(project, "show", "HEAD:docs/voice.md") == SYNCED
    assert "DRAFT" not in git(project, "show", "HEAD")
    committed = sorted(git(project, "show", "--name-only", "--format=", "HEAD").split())
    assert "docs/other.md" not in committed and "docs/voice.md" in committed
    # The work tree has both: factreg's edit and the user's line, which is still unstaged (not lost, not staged).
    assert doc.read_text(encoding="utf-8") == SYNCED + "\n" + DRAFT
    assert git(project, "diff", "--cached", "--name-only") == ""
    assert "+" + DRAFT.strip() in git(project, "diff", "--", "docs/voice.md")
    assert "?? docs/other.md" in git(project, "status", "--porcelain").splitlines()


def test_a_staged_change_of_the_document_stays_staged_with_factregs_edit(cli, project):
    doc = project / "docs/voice.md"
    doc.write_text(DOC + "\nStaged paragraph.\n", encoding="utf-8")
    git(project, "add", "docs/voice.md")
    doc.write_text(DOC + "\nStaged paragraph.\n" + DRAFT, encoding="utf-8")
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--commit")
    assert r.exit_code == 0, r.stderr
    assert git(project, "show", "HEAD:docs/voice.md") == SYNCED
    assert git(project, "show", ":docs/voice.md") == SYNCED + "\nStaged paragraph.\n"
    assert doc.read_text(encoding="utf-8") == SYNCED + "\nStaged paragraph.\n" + DRAFT


# ---------------------------------------------------------------- all or nothing when the commit fails


@pytest.mark.parametrize("how", ["ref locked", "hook refuses"])
@pytest.mark.parametrize("source", ["by", "verification"])
def test_failed_commit_leaves_registry_files_and_head_as_they_were(cli, project, registry, how, source):
    decision = cli("decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--date", "2026-10-26", "--commit")
    assert decision.exit_code == 0, decision.stderr
    (project / "docs/voice.md").write_text(DOC + DRAFT, encoding="utf-8")
    if source == "by":
        args = ["night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e"]
    else:
        pk = add_verification(registry, "night/35b-a3b/e2e", "refuted", samples=[2.1, 2.2, 2.3])
        args = ["night/35b-a3b/e2e", "--verification", str(pk)]
    before = (registry_state(registry), files_state(project), git(project, "rev-parse", "HEAD"))
    lock = project / ".git/refs/heads/main.lock"
    if how == "ref locked":
        lock.write_text("")  # another git process holds the branch
    else:
        hook(project, "pre-commit", "echo 'pre-commit: docs/voice.md fails the link check' >&2\nexit 1\n")
    r = cli("correct", *args, "--commit")
    assert r.exit_code == 2, r.stdout
    assert r.stderr.startswith("Error: --commit failed: ") and r.stderr.count("\n") == 1, r.stderr
    if how == "ref locked":
        assert "fatal: cannot lock ref" in r.stderr and "remove the file manually" not in r.stderr
    else:
        assert "fails the link check" in r.stderr
    assert (registry_state(registry), files_state(project), git(project, "rev-parse", "HEAD")) == before
    lock.unlink(missing_ok=True)
    (project / ".git/hooks/pre-commit").unlink(missing_ok=True)
    r = cli("correct", *args, "--commit", "--json")  # the retry is not refused, and does it all
    assert r.exit_code == 0, r.stderr
    assert r.json()["commit"] and git(project, "show", "HEAD:docs/voice.md").startswith("# Voice")
    head_doc = git(project, "show", "HEAD:docs/voice.md")
    assert "fact: night/35b-a3b/e2e -->" in head_doc and "1.07 s" not in head_doc  # the same id, its new text
    assert len(corrections.list_corrections(registry)) == 1


def test_a_correction_recorded_by_an_interrupted_run_is_finished_by_running_it_again(cli, project, registry,
                                                                                    monkeypatch):
    """Killed after the registry transaction, before the files (simulated here by a failing write with the
    rollback disabled): the same command finishes it; once finished, running it again changes nothing."""
    monkeypatch.setattr(corrections.workflow, "undo", lambda *a, **k: None)
    real = corrections.transaction.publish_files

    def killed(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(corrections.transaction, "publish_files", killed)
    with pytest.raises(KeyboardInterrupt):
        corrections.correct(registry, __import__("factreg.config", fromlist=["resolve"]).resolve(),
                            "night/35b-a3b/e2e", by="day/35b-a3b/e2e", commit=True)
    monkeypatch.setattr(corrections.transaction, "publish_files", real)
    recorded = facts.get(registry, "night/35b-a3b/e2e")  # the correction's version of the same id is current
    assert recorded["version"] == 2 and recorded["note"] == "corrected by day/35b-a3b/e2e@v1"
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--commit", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["resumed"] and r.json()["commit"]
    assert git(project, "show", "HEAD:docs/voice.md") == SYNCED
    head = git(project, "rev-parse", "HEAD")
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--commit", "--json")
    assert r.exit_code == 0 and r.json()["commit"] is None and r.json()["changed"] == []
    assert git(project, "rev-parse", "HEAD") == head and len(corrections.list_corrections(registry)) == 1
    r = cli("correct", "night/35b-a3b/e2e", "--by", "day/27b/e2e", "--json")  # another correction: a new one
    assert r.exit_code == 0 and not r.json()["resumed"] and r.json()["new"] == "night/35b-a3b/e2e@v3"


# ---------------------------------------------------------------- hooks and a detached HEAD


def test_commit_runs_pre_commit_and_commit_msg_hooks(cli, project):
    log = project.parent / "hooks.log"
    hook(project, "pre-commit", f"echo pre-commit $(git diff --cached --name-only | tr '\\n' ' ') >> {log}\n")
    hook(project, "commit-msg", f'echo "commit-msg $(head -1 "$1")" >> {log}\necho "Checked-by: hook" >> "$1"\n')
    r = cli("decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--date", "2026-10-26", "--commit")
    assert r.exit_code == 0, r.stderr
    lines = [line.strip() for line in log.read_text().splitlines()]
    assert lines == ["pre-commit decisions/0001-voice.md", "commit-msg factreg decision 1: Voice"]
    assert "Checked-by: hook" in git(project, "log", "-1", "--format=%B")
    r = cli("report", "--commit")
    assert r.exit_code == 0, r.stderr
    assert log.read_text().splitlines()[-1] == "commit-msg factreg report: stale facts, fact pages, index"


def test_a_hook_that_refuses_stops_the_commit_with_its_own_words(cli, project):
    hook(project, "commit-msg", "echo 'commit-msg: subject must start with a ticket number' >&2\nexit 1\n")
    head = git(project, "rev-parse", "HEAD")
    r = cli("decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--commit")
    assert r.exit_code == 2 and "subject must start with a ticket number" in r.stderr, r.stderr
    assert git(project, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("command", [
    ["report", "--commit"],
    ["decision", "add", "Voice", "--cites", "night/35b-a3b/e2e", "--commit"],
    ["correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--commit"],
])
def test_detached_head_is_refused_before_anything_changes(cli, project, registry, command):
    git(project, "checkout", "-q", "--detach")
    before = (registry_state(registry), files_state(project), git(project, "rev-parse", "HEAD"))
    r = cli(*command)
    assert r.exit_code == 2 and r.stderr == "Error: --commit: HEAD is detached (not on a branch); check out a " \
        "branch first\n", r.stderr
    assert (registry_state(registry), files_state(project), git(project, "rev-parse", "HEAD")) == before
    assert git(project, "rev-parse", "--abbrev-ref", "HEAD").strip() == "HEAD"


def _conflicting_branches(repo: Path) -> None:
    """`main` and `side` each change docs/other.md differently (a conflict for any operation joining them)."""
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "docs/other.md").write_text("side\n")
    git(repo, "add", "docs/other.md")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", "main")
    (repo / "docs/other.md").write_text("main\n")
    git(repo, "add", "docs/other.md")
    git(repo, "commit", "-q", "-m", "main")


def _fails(repo: Path, *args: str) -> None:
    import subprocess

    from tests.gates_support import git as git_env  # the same environment, without check=True

    try:
        git_env(repo, *args)
    except subprocess.CalledProcessError:
        return
    raise AssertionError(f"git {' '.join(args)} was expected to stop on a conflict")


# A repository in the middle of something: each state's setup, and what the refusal names.
MID_OPERATION = {
    "rebase stopped on a conflict": (lambda r: (_conflicting_branches(r), _fails(r, "rebase", "side")), "detached"),
    "rebase --apply stopped on a conflict": (lambda r: (_conflicting_branches(r), _fails(r, "rebase", "--apply",
                                                                                      "side")), "detached"),
    "interactive rebase stopped to edit": (lambda r: (_conflicting_branches(r), git(
        r, "-c", "sequence.editor=sed -i s/^pick/edit/", "rebase", "-q", "-i", "HEAD~1")), "detached"),
    "git am stopped on a conflict": (lambda r: (_conflicting_branches(r), _fails(r, "am", str(_patch(r)))),
                                     "rebase-apply"),
    "merge stopped on a conflict": (lambda r: (_conflicting_branches(r), _fails(r, "merge", "side")), "MERGE_HEAD"),
    "cherry-pick stopped on a conflict": (lambda r: (_conflicting_branches(r), _fails(r, "cherry-pick", "side")),
                                          "CHERRY_PICK_HEAD"),
    "revert stopped on a conflict": (lambda r: (_conflicting_branches(r), (r / "docs/other.md").write_text("x\n"),
                                                git(r, "commit", "-q", "-am", "x"), _fails(r, "revert", "HEAD~1")),
                                     "REVERT_HEAD"),
    "bisect started on the branch": (lambda r: git(r, "bisect", "start"), "BISECT_LOG"),
    "a sequence of cherry-picks paused": (lambda r: _paused_sequence(r), "sequencer"),
}


def _paused_sequence(repo: Path) -> None:
    """`git cherry-pick A B` stopped on A's conflict, resolved and committed by hand: B is still to come
    (.git/sequencer), though no CHERRY_PICK_HEAD is left."""
    _conflicting_branches(repo)
    git(repo, "checkout", "-q", "side")
    (repo / "docs/later.md").write_text("later\n")
    git(repo, "add", "docs/later.md")
    git(repo, "commit", "-q", "-m", "later")
    git(repo, "checkout", "-q", "main")
    _fails(repo, "cherry-pick", "side~1", "side")
    (repo / "docs/other.md").write_text("resolved\n")
    git(repo, "add", "docs/other.md")
    git(repo, "commit", "-q", "--no-edit")
    assert (repo / ".git/sequencer").is_dir() and not (repo / ".git/CHERRY_PICK_HEAD").exists()


def _patch(repo: Path) -> Path:
    """A patch of side's commit, which conflicts with main."""
    out = repo.parent / "side.patch"
    out.write_text(git(repo, "format-patch", "-1", "--stdout", "side"))
    return out


@pytest.mark.parametrize("state", sorted(MID_OPERATION))
@pytest.mark.parametrize("command", [
    ["retract", "night/35b-a3b/e2e", "--because", "wrong", "--commit"],
    ["correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e", "--commit"],
])
def test_commit_in_a_repository_mid_operation_is_refused_before_anything_changes(cli, project, registry, state,
                                                                                 command):
    """`retract --commit` and `correct --commit` while git is in the middle of a rebase, `am`, merge, cherry-pick,
    revert or bisect: one line naming it, exit 2, and the registry, every file, HEAD and the operation's own
    state as they were, so `git rebase --continue` (or its like) still finishes it."""
    setup, says = MID_OPERATION[state]
    setup(project)
    git_dir = project / ".git"
    before = (registry_state(registry), files_state(project), git(project, "rev-parse", "HEAD"),
              sorted(p.name for p in git_dir.iterdir()))
    r = cli(*command)
    assert r.exit_code == 2 and r.stderr.startswith("Error: --commit: ") and says in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
    assert (registry_state(registry), files_state(project), git(project, "rev-parse", "HEAD"),
            sorted(p.name for p in git_dir.iterdir())) == before
