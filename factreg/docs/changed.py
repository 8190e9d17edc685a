"""Which lines of which documents changed since a git ref: what `docs check|lint --changed-since REF` judge.

The change is the merge-base of REF and HEAD compared with the working tree (`git diff --find-renames -U0
MERGE_BASE`, so commits since the branch point, staged and unstaged edits alike), plus untracked files (every line
of them is new). A renamed file's lines are its new name's lines; a renamed and unchanged file has no changed
line. Deleted files have none. The git CLI is run with a fixed environment (no pager, no colour, and none of the
commands a repository's configuration can name: no external diff, text conversion or file-system monitor), a ref
is never taken for an option, and a bad ref, a missing git or a folder outside a work tree is a UsageError.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from factreg.docs import walk
from factreg.errors import UsageError

ALL_LINES = frozenset({0})  # marker: the whole file is new (untracked)

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Changes:
    """The changed lines of each file (absolute, resolved path → 1-based line numbers), since `base`."""

    root: Path
    base: str
    lines: dict[Path, frozenset[int]] = field(default_factory=dict)

    def changed(self, path: Path | str, line: int) -> bool:
        """Whether `line` (1-based; 0 = the file as a whole) of `path` is new or changed."""
        got = self.lines.get(_key(path))
        if got is None:
            return False
        return got is ALL_LINES or line in got or (line == 0 and bool(got))

    def files(self) -> list[Path]:
        return sorted(self.lines)


def _key(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _git(args: list[str], cwd: Path) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in ("GIT_DIR", "GIT_WORK_TREE")}
    env.update({"GIT_PAGER": "cat", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"})
    try:
        proc = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
            ["git", "-c", "core.quotePath=false", "-c", "core.fsmonitor=false", "-c", "diff.external=", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError("--changed-since needs git on PATH") from None
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"--changed-since: git {args[0]} failed: {why[-1] if why else proc.returncode}")
    return proc.stdout


def _unquote(raw: bytes) -> str:
    """A path as git prints it: plain, or a C-style quoted string (`"a\\tb\\303\\251"`)."""
    if not raw.startswith(b'"'):
        return raw.decode("utf-8", "surrogateescape")
    body = raw[1:-1]
    out = bytearray()
    i = 0
    simple = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b", b"f": b"\f",
              b"r": b"\r", b"v": b"\v"}
    while i < len(body):
        c = body[i : i + 1]
        if c == b"\\":
            nxt = body[i + 1 : i + 2]
            if nxt in simple:
                out += simple[nxt]
                i += 2
                continue
            if re.fullmatch(rb"[0-7]", nxt):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
        out += c
        i += 1
    return bytes(out).decode("utf-8", "surrogateescape")


def parse_diff(diff: bytes) -> dict[str, set[int]]:
    """Changed line numbers of the new side of a `git diff -U0` output, by the new path (relative)."""
    out: dict[str, set[int]] = {}
    current: set[int] | None = None
    for raw in diff.split(b"\n"):
        if raw.startswith(b"+++ "):
            target = raw[4:]
            if target == b"/dev/null":
                current = None
                continue
            name = _unquote(target)
            current = out.setdefault(name[2:] if name.startswith("b/") else name, set())
        elif raw.startswith(b"@@") and current is not None:
            m = _HUNK.match(raw)
            if m:
                start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
                current.update(range(start, start + count))
    return out


def since(ref: str, cwd: Path | str = ".") -> Changes:
    """The lines changed since the merge-base of `ref` and HEAD, in the work tree holding `cwd`."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"--changed-since wants a git ref (a branch, tag or commit), got {ref!r}")
    here = Path(cwd)
    root = Path(_git(["rev-parse", "--show-toplevel"], here).decode("utf-8", "surrogateescape").strip())
    base = _git(["merge-base", ref, "HEAD"], root).decode().strip()
    diff = _git(
        ["diff", "--find-renames", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--diff-filter=d",
         "--src-prefix=a/", "--dst-prefix=b/", base, "--"],
        root,
    )
    changes = Changes(Path(os.path.realpath(root)), base)
    for name, lines in parse_diff(diff).items():
        if lines:
            changes.lines[_key(root / name)] = frozenset(lines)
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z"], root)
    for raw in untracked.split(b"\0"):
        if raw:
            changes.lines[_key(root / raw.decode("utf-8", "surrogateescape"))] = ALL_LINES
    return changes


def documents(paths: Iterable[Path | str], changes: Changes) -> list[Path]:
    """The changed files among the documents under `paths`, with the names the walk would give them: a file given
    explicitly is kept whatever its name; inside a folder only Markdown files outside hidden and skipped folders.
    Nothing else is walked, so the cost follows the change, not the repository."""
    out: list[Path] = []
    seen: set[Path] = set()
    for given in paths:
        root = Path(given)
        if not root.exists() and not root.is_symlink():
            raise UsageError(f"no such file or folder: {root}")
        real = _key(root)
        if not root.is_dir():
            if real in changes.lines and real not in seen:
                seen.add(real)
                out.append(root)
            continue
        for file in changes.files():
            try:
                rel = file.relative_to(real)
            except ValueError:
                continue
            parts = rel.parts
            if any(p in walk.SKIP_DIRS or p.startswith(".") for p in parts[:-1]):
                continue
            if not walk.is_markdown(parts[-1]) or file in seen or not file.is_file():
                continue
            seen.add(file)
            out.append(root / rel)
    out.sort()
    return out
