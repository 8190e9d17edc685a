"""The registry in git, as text: `.factreg/registry.jsonl`, next to the SQLite file that git ignores.

The SQLite file (`.factreg/registry.db`) is each checkout's own working copy: binary, growing, and `init` has git
ignore it. What a team reviews and shares is the text: the lossless `export` (registry/jsonl/), one line per fact
with every version and verification, then the decisions and corrections, sorted by id and number with sorted keys,
so a change diffs as the lines of the facts it touched. `--commit` (on `correct`, `retract`, `report`, `decision`)
writes it and puts it into the same commit as the files it commits (`write`).

In a checkout that has the text but no SQLite file yet — a fresh clone, a CI job — the first command that opens the
registry builds it from the text (`restore`) and says so. Its methods are then imported ones: the trust tags in the
text were made with the key of the registry that wrote them, which this new registry does not have, so `verify` runs
none of them until `verify --trust-imported` (registry/provenance.py): a pull request that edits a method in the text
cannot make CI run it.

Only the project's own SQLite registry has a text copy: a registry named with `--db` or `FACTREG_DB` (a file
elsewhere, PostgreSQL) is left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.registry.store import Registry

FILE = "registry.jsonl"


def location(settings: Settings) -> Path | None:
    """`.factreg/registry.jsonl` when the registry is the project's own SQLite file; None otherwise."""
    if settings.project_dir is None or not str(settings.db_source).startswith("project"):
        return None
    return Path(settings.project_dir) / FILE


def text(registry: Registry) -> str:
    """The registry as the text copy holds it: its export, one line each, sorted and stable."""
    from factreg.registry import jsonl

    return "".join(line + "\n" for line in jsonl.export_lines(registry))


def for_commit(registry: Registry, settings: Settings) -> dict[Path, bytes]:
    """{the text copy's path: its bytes now} to commit with factreg's other files; {} when this registry has none.
    Nothing is written: `save` writes it once the commit is made."""
    where = location(settings)
    return {} if where is None else {where: text(registry).encode("utf-8")}


def save(copies: dict[Path, bytes]) -> None:
    """Write the text copy as committed (atomically, only when it changed), so the work tree matches the commit."""
    from factreg.atomic import write_if_changed

    for path, data in copies.items():
        write_if_changed(path, data.decode("utf-8"))


def restore(settings: Settings) -> dict[str, Any] | None:
    """Build the project's registry from its text copy when the copy is there and the SQLite file is not; return
    what was imported (None when there was nothing to do). The imported methods are not trusted here."""
    from factreg.registry import jsonl
    from factreg.registry.store import Registry, sqlite_file

    where = location(settings)
    if where is None or not where.is_file() or Path(sqlite_file(settings.db_url)).exists():
        return None
    db = Path(sqlite_file(settings.db_url))
    registry = Registry(settings.db_url)
    try:
        counts = jsonl.import_files(registry, [where], trust=False)
    except BaseException:
        registry.close()
        for leftover in (db, *(db.with_name(db.name + end) for end in ("-wal", "-shm", "-journal"))):
            leftover.unlink(missing_ok=True)  # no half-built registry left behind
        raise
    registry.close()
    return counts
