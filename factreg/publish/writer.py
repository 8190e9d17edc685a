"""Publishing: every file factreg writes goes through `write` (paths checked, written atomically), and `commit`
commits exactly factreg's changes with git's own `git commit`, so the repository's hooks run.

`write` refuses a path that resolves outside the folder it writes into, into `.git`, or into a dot-folder or
dot-file below it. `commit` builds the commit in a temporary index from HEAD: a generated file is committed with
the exact bytes factreg wrote; a document factreg edits in place (docs sync) is committed as its HEAD version with
factreg's edit applied to it, so the user's own unstaged or staged edits of that document are never committed.
Whatever else the user has staged or left unstaged stays as it was; the real index is then updated for those
paths alone, the same way. Nothing changed, no commit. A detached HEAD, or a merge, rebase (`am` too),
cherry-pick, revert or bisect in progress, is refused before anything is committed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg.atomic import write_if_changed
from factreg.errors import ConfigError
from factreg.secrets import redact
from factreg.terminal import visible

if TYPE_CHECKING:
    import git

# A change factreg makes to a document it edits in place: given one version of the file (HEAD's, the index's),
# that version with factreg's change applied, or None when it has nothing to change in that version.
Transform = Callable[[bytes], "bytes | None"]
Content = bytes | Transform

# Operations in progress during which a commit of factreg's would become part of something else.
# `sequencer`: a series of cherry-picks or reverts paused between its commits; `BISECT_LOG`: a bisect, even one
# started on the branch before its first checkout.
IN_PROGRESS = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply", "sequencer",
               "BISECT_LOG")


def check_path(path: Path, root: Path) -> Path:
    """`path` resolved, when it is a place factreg may write: inside `root`, not in `.git`, and with no part below
    `root` that starts with a dot (a dot-folder or dot-file). Else a ConfigError naming it."""
    base = Path(root).resolve()
    resolved = Path(path).resolve()
    if resolved == base or base not in resolved.parents:
        raise ConfigError(f"refusing to write {path}: it is outside {base}")
    if ".git" in resolved.parts:
        raise ConfigError(f"refusing to write {path}: it is inside a .git folder")
    hidden = [part for part in resolved.relative_to(base).parts if part.startswith(".")]
    if hidden:
        raise ConfigError(f"refusing to write {path}: {hidden[0]!r} is a dot-folder or dot-file")
    return resolved


def write(files: Mapping[Path, str], root: Path) -> list[Path]:
    """Write each file whose content differs (atomically); return the changed paths.

    Every path is checked (`check_path`) before any is written: one bad path and nothing is written."""
    for path in files:
        check_path(Path(path), root)
    return [Path(p) for p, text in files.items() if write_if_changed(Path(p), text)]


def find_repo(path: Path) -> git.Repo:
    """The git repository containing `path` (a folder or file)."""
    import git

    start = Path(path)
    while not start.exists() and start != start.parent:
        start = start.parent
    try:
        return git.Repo(start if start.is_dir() else start.parent, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise ConfigError(f"--commit: {path} is not inside a git repository") from None


def check_repo(path: Path) -> git.Repo:
    """The repository for `--commit`, once it is one factreg can commit to: a work tree, on a branch, with no
    merge, rebase, cherry-pick or revert in progress. Called before anything is written or recorded."""
    repo = find_repo(path)
    if repo.bare or repo.working_tree_dir is None:
        raise ConfigError("--commit: the repository has no work tree")
    if repo.head.is_detached:
        raise ConfigError("--commit: HEAD is detached (not on a branch); check out a branch first")
    git_dir = Path(repo.git_dir)
    busy = [name for name in IN_PROGRESS if (git_dir / name).exists()]
    if busy:
        raise ConfigError(f"--commit: a git operation is in progress ({busy[0]}); finish or abort it first")
    return repo


def git_error(exc: Any) -> str:
    """What git said, in one line: its `fatal:`/`error:` lines, else every line but `hint:`s (a hook's output)."""
    text = exc.stderr if getattr(exc, "stderr", None) else str(exc)
    lines = [line.strip() for line in str(text).splitlines()]
    lines = [line.removeprefix("stderr: ").strip("'").strip() for line in lines]
    lines = [line for line in lines if line and not line.startswith("hint:")]
    main = [line for line in lines if line.startswith(("fatal:", "error:"))]
    shown = " / ".join(main or lines) or "git failed"
    return visible(redact(shown if len(shown) <= 400 else shown[:399] + "…"))  # a hook's output may hold escapes


def _blob(repo: Any, rev: str | None, rel: str) -> tuple[str, str, bytes] | None:
    """(mode, blob sha, bytes) of `rel` in commit `rev`, or None when it is not there."""
    if rev is None:
        return None
    try:
        entry = repo.commit(rev).tree / rel
    except KeyError:
        return None
    if entry.type != "blob":
        return None
    return f"{entry.mode:o}", entry.hexsha, entry.data_stream.read()


def _store(repo: Any, data: bytes) -> str:
    from io import BytesIO

    from gitdb import IStream

    sha = repo.odb.store(IStream(b"blob", len(data), BytesIO(data))).hexsha
    return sha.decode("ascii") if isinstance(sha, bytes) else str(sha)


def _staged(repo: Any, rel: str) -> tuple[str, str] | None:
    """(mode, blob sha) of `rel` in the real index, or None when it is not there (or conflicted)."""
    out = repo.git.ls_files("-s", "--", rel)
    for line in out.splitlines():
        meta, _, name = line.partition("\t")
        mode, sha, stage = meta.split()
        if name == rel and stage == "0":
            return mode, sha
    return None


def commit(contents: Mapping[Path, Content], message: str, repo_dir: Path | None = None) -> str | None:
    """Commit factreg's changes to the files in `contents` on the current branch, with `git commit` (hooks run);
    return the commit's sha, or None when nothing differs from HEAD.

    A `bytes` value is the exact content factreg wrote (a generated file). A `Transform` is factreg's edit of a
    document the user owns: it is applied to the HEAD version (a document not in HEAD is not factreg's to add),
    so the user's own edits of it are not committed. Other staged or unstaged changes are neither committed nor
    disturbed."""
    import git

    if not contents:
        return None
    message = redact(message)
    paths = {Path(p).resolve(): c for p, c in contents.items()}
    repo = check_repo(repo_dir or next(iter(paths)))
    assert repo.working_tree_dir is not None  # check_repo refuses a repository without a work tree
    top = Path(repo.working_tree_dir).resolve()
    wanted: dict[str, Content] = {}
    for p, content in paths.items():
        if top not in p.parents:
            raise ConfigError(f"--commit: {p} is outside the repository at {top}")
        wanted[p.relative_to(top).as_posix()] = content
    head = repo.head.commit.hexsha if repo.head.is_valid() else None
    committed: dict[str, tuple[str, str]] = {}  # path → (mode, blob sha) as committed
    try:
        with tempfile.TemporaryDirectory(prefix="factreg-index-") as tmp:
            env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
            with repo.git.custom_environment(**env):
                if head is not None:
                    repo.git.read_tree(head)
                for rel in sorted(wanted):
                    content = wanted[rel]
                    before = _blob(repo, head, rel)
                    if callable(content):
                        if before is None:
                            continue
                        data = content(before[2])
                        if data is None or data == before[2]:
                            continue
                    else:
                        data = content
                        if before is not None and before[2] == data:
                            continue
                    mode = before[0] if before is not None else "100644"
                    sha = _store(repo, data)
                    repo.git.update_index("--add", "--cacheinfo", f"{mode},{sha},{rel}")
                    committed[rel] = (mode, sha)
                if committed:
                    # git's own commit: pre-commit, commit-msg and the other hooks run against this index.
                    repo.git.commit("-q", "--no-edit", "-m", message)
            if not committed:
                _catch_up_index(repo, head, wanted)
                return None
            sha = str(repo.git.rev_parse("HEAD"))
            parents = repo.git.rev_list("--parents", "-n", "1", sha).split()[1:]
            if parents != ([head] if head is not None else []):
                # HEAD moved between reading it and committing: the commit would undo someone else's work.
                if head is not None and parents:
                    repo.git.update_ref("HEAD", parents[0], sha)
                raise ConfigError("--commit: HEAD moved while committing; nothing committed, run it again")
        _refresh_index(repo, head, wanted, committed)
    except git.GitCommandError as exc:
        raise ConfigError(f"--commit failed: {git_error(exc)}") from None
    return sha


def _refresh_index(repo: Any, head: str | None, wanted: Mapping[str, Content],
                   committed: Mapping[str, tuple[str, str]]) -> None:
    """The real index after a commit: each committed path as committed — or, when the user had staged their own
    change of a document factreg edited, that staged version with factreg's edit applied."""
    import git

    try:
        for rel, (mode, sha) in committed.items():
            content = wanted[rel]
            staged = _staged(repo, rel)
            before = _blob(repo, head, rel)
            target = sha
            if callable(content) and staged is not None and before is not None and staged[1] != before[1]:
                # The user staged a change of their own: keep it staged, with factreg's edit applied.
                data = content(repo.odb.stream(bytes.fromhex(staged[1])).read())
                if data is None:
                    continue
                target = _store(repo, data)
            repo.git.update_index("--add", "--cacheinfo", f"{mode},{target},{rel}")
    except git.GitCommandError as exc:
        sys.stderr.write(f"warning: committed, but the index was not updated: {git_error(exc)}\n")


def _catch_up_index(repo: Any, head: str | None, wanted: Mapping[str, Content]) -> None:
    """Nothing to commit because HEAD already holds factreg's changes (a run killed right after its commit): the
    real index entries that run did not get to update — still the version before factreg's change — are updated.
    An entry the user changed is left alone."""
    import git

    try:
        for rel, content in wanted.items():
            now = _blob(repo, head, rel)
            if now is None:
                continue
            staged = _staged(repo, rel)
            if staged is not None and staged[1] == now[1]:
                continue
            if callable(content):
                if staged is None or content(repo.odb.stream(bytes.fromhex(staged[1])).read()) != now[2]:
                    continue
            elif now[2] != content:
                continue
            repo.git.update_index("--add", "--cacheinfo", f"{now[0]},{now[1]},{rel}")
    except git.GitCommandError as exc:
        sys.stderr.write(f"warning: the index was not updated: {git_error(exc)}\n")


def contents_of(files: Mapping[Path, str], extra: Iterable[Path] = ()) -> dict[Path, Content]:
    """The exact bytes of generated files, for `commit` (`extra`: generated files as they are on disk)."""
    out: dict[Path, Content] = {Path(p): Path(p).read_bytes() for p in extra if Path(p).is_file()}
    out.update({Path(p): text.encode("utf-8") for p, text in files.items()})
    return out


def write_and_commit(
    files: Mapping[Path, str], message: str, do_commit: bool, root: Path, extra: Iterable[Path] = (),
    also: Mapping[Path, bytes] | None = None,
) -> tuple[list[Path], str | None]:
    """Write `files` (only those that changed); with `do_commit`, commit them and `extra` where they differ
    from HEAD — a file rendered earlier without `--commit` is committed now, an unchanged one never — and `also`
    (exact bytes committed with them, factreg's own files outside `root`: the registry's text copy; the caller
    writes those once committed)."""
    if do_commit:
        check_repo(root)
    changed = write(files, root)
    sha = None
    if do_commit:
        sha = commit({**contents_of(files, extra), **(also or {})}, message, root)
    return changed, sha
