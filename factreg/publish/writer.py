"""Publishing: write rendered files atomically and commit exactly those files with GitPython.

A commit made here contains only the paths factreg wrote and that changed. It is built in a temporary
index from HEAD, so whatever else the user has staged or left unstaged stays exactly as it was; the real
index is then updated for those paths alone. Nothing changed, no commit.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from factreg.atomic import write_if_changed
from factreg.errors import ConfigError
from factreg.secrets import redact


def write(files: Mapping[Path, str], root: Path | None = None) -> list[Path]:
    """Write each file whose content differs (atomically); return the changed paths.

    With `root`, every path must resolve inside it (rendered paths never escape the docs root).
    """
    if root is not None:
        base = Path(root).resolve()
        for path in files:
            resolved = Path(path).resolve()
            if resolved != base and base not in resolved.parents:
                raise ConfigError(f"refusing to write {path}: it is outside {base}")
    return [Path(p) for p, text in files.items() if write_if_changed(Path(p), text)]


def find_repo(path: Path):  # type: ignore[no-untyped-def]
    """The git repository containing `path` (a folder or file)."""
    import git

    start = Path(path)
    while not start.exists() and start != start.parent:
        start = start.parent
    try:
        return git.Repo(start if start.is_dir() else start.parent, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise ConfigError(f"--commit: {path} is not inside a git repository") from None


def commit(paths: Iterable[Path], message: str, repo_dir: Path | None = None) -> str | None:
    """Commit exactly `paths` (as they are in the work tree) on the current branch; return the commit sha.

    Returns None when the paths are unchanged relative to HEAD. Other staged or unstaged changes of the
    user are neither committed nor disturbed.
    """
    import git

    paths = [Path(p).resolve() for p in paths]
    if not paths:
        return None
    message = redact(message)
    repo = find_repo(repo_dir or paths[0])
    if repo.bare or repo.working_tree_dir is None:
        raise ConfigError("--commit: the repository has no work tree")
    top = Path(repo.working_tree_dir).resolve()
    rel = []
    for p in paths:
        if top not in p.parents:
            raise ConfigError(f"--commit: {p} is outside the repository at {top}")
        rel.append(p.relative_to(top).as_posix())
    rel = sorted(set(rel))
    try:
        head = repo.head.commit.hexsha if repo.head.is_valid() else None
    except ValueError:
        head = None
    try:
        with tempfile.TemporaryDirectory(prefix="factreg-index-") as tmp:
            index_file = os.path.join(tmp, "index")
            with repo.git.custom_environment(GIT_INDEX_FILE=index_file):
                if head is not None:
                    repo.git.read_tree(head)
                repo.git.add("--", *rel)
                tree = repo.git.write_tree()
            if head is not None and repo.commit(head).tree.hexsha == tree:
                return None
            parents = ["-p", head] if head is not None else []
            sha = repo.git.commit_tree(tree, *parents, "-m", message)
            # Move the current branch (or an unborn one) to the new commit, refusing a lost race.
            repo.git.update_ref(
                "-m", f"factreg: {message.splitlines()[0]}", "HEAD", sha, head if head is not None else ""
            )
        # The real index: only the committed paths are refreshed, to the content just committed.
        repo.git.add("--", *rel)
    except git.GitCommandError as exc:
        detail = (exc.stderr or str(exc)).strip().splitlines()
        raise ConfigError(f"--commit failed: {detail[-1] if detail else exc}") from None
    return sha


def write_and_commit(
    files: Mapping[Path, str], message: str, do_commit: bool, root: Path | None = None, extra: Iterable[Path] = ()
) -> tuple[list[Path], str | None]:
    """Write `files` (only those that changed); with `do_commit`, commit them and `extra` where they differ
    from HEAD — a file rendered earlier without `--commit` is committed now, an unchanged one never."""
    changed = write(files, root)
    sha = None
    if do_commit:
        sha = commit(sorted({*(Path(p) for p in files), *(Path(p) for p in extra)}), message, root)
    return changed, sha
