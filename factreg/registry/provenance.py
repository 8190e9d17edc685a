"""Provenance and trust: who recorded a version where, or which file it came from, and whether its method may run.

A stored method is data, not authority. `verify` runs a method (llama-bench, probe) only when this registry vouches
for it: its `trust` column holds an HMAC-SHA256 tag of (fact id, version, method) under this registry's own random
key, kept in `registry_meta` and never exported. A version gets the tag when it is recorded here (`record`, `bench`,
`probe --record`), when the user trusts an import (`import --trust`) or its facts (`verify --trust-imported`).

An export carries each version's provenance and tag as they are, so restoring your own export into the same
registry keeps your trust (the tag verifies under the same key), while a file from anyone else — or a line whose
method was edited — carries no valid tag: a forger would need the key, which no export contains. Importing into
another registry copies the lines byte for byte (an export of it is the same file), and that registry does not
trust them until told to. Rows written before provenance was kept (no tag) are untrusted likewise.

The tag is not the defence against someone who can write the database itself (a shared PostgreSQL registry: its
writers can read the key too); for that, the verifiers check every stored field at run time (probe: `[probe]
allow_env`, bounds; llama-bench: an argument allow-list, `[bench] model_roots`).
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import hashlib
import hmac
import json
import os
import secrets as random
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factreg.registry.store import Registry

RECORDED = "recorded"
IMPORTED = "imported"
ID_KEY = "registry_id"
TRUST_KEY = "trust_key"
NOT_TRUSTED = "imported method not trusted: run verify --trust-imported or import --trust"
NOT_TRUSTED_LEGACY = ("method recorded before factreg kept provenance, so not trusted yet: if this registry's "
                      "facts are your own, run verify --trust-imported once")


def why_untrusted(fact: Mapping[str, Any]) -> str:
    """The message for a fact whose method is not vouched for: imported, or written before provenance existed."""
    origin = (fact.get("provenance") or {}).get("origin")
    return NOT_TRUSTED if origin else NOT_TRUSTED_LEGACY


@functools.lru_cache(maxsize=1)
def user() -> str:
    """Who records: git's user.name/user.email (GIT_AUTHOR_* first, as git does), else the login name."""
    name = os.environ.get("GIT_AUTHOR_NAME")
    email = os.environ.get("GIT_AUTHOR_EMAIL")
    if not (name and email):
        got = _git_config()
        name, email = name or got.get("user.name"), email or got.get("user.email")
    if name and email:
        return f"{name} <{email}>"
    if name or email:
        return str(name or email)
    for var in ("USER", "LOGNAME", "USERNAME"):
        if os.environ.get(var):
            return os.environ[var]
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # pragma: no cover - a uid without a passwd entry
        return "unknown"


def _git_config() -> dict[str, str]:
    try:
        proc = subprocess.run(["git", "config", "--get-regexp", r"^user\.(name|email)$"], capture_output=True,
                              text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        if value.strip():
            out[key.lower()] = value.strip()
    return out


# ---------------------------------------------------------------- the registry's id and key


def _meta(conn: Any) -> dict[str, str]:
    from factreg.registry.store import rows

    return {r["name"]: r["value"] for r in rows(conn, "SELECT name, value FROM registry_meta")}


def ensure_keys(conn: Any) -> tuple[str, bytes]:
    """(registry id, trust key) in a write transaction, created on first use (a lost race retries the write)."""
    meta = _meta(conn)
    for name in (ID_KEY, TRUST_KEY):
        if name not in meta:
            from sqlalchemy import text  # once per registry: its first write

            meta[name] = random.token_hex(16 if name == ID_KEY else 32)
            conn.execute(text("INSERT INTO registry_meta (name, value) VALUES (:n, :v)"), {"n": name, "v": meta[name]})
    return meta[ID_KEY], bytes.fromhex(meta[TRUST_KEY])


def read_keys(registry: Registry) -> tuple[str | None, bytes | None]:
    """(registry id, trust key), None for those not created yet (read only)."""
    with registry.reader() as conn:
        return read_keys_in(conn)


def read_keys_in(conn: Any) -> tuple[str | None, bytes | None]:
    """`read_keys` in a connection the caller holds (a write transaction that re-tags: registry/removal.py)."""
    meta = _meta(conn)
    key = meta.get(TRUST_KEY)
    return meta.get(ID_KEY), bytes.fromhex(key) if key else None


# ---------------------------------------------------------------- tags


def _canonical_method(method: Any) -> str:
    if isinstance(method, str):
        with contextlib.suppress(ValueError):
            method = json.loads(method)
    return json.dumps(method, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def tag(key: bytes, fact_id: str, version: int, method: Any) -> str:
    """This registry's tag on a version's method (`method` as stored text or as parsed JSON)."""
    message = json.dumps([fact_id, int(version), _canonical_method(method)], ensure_ascii=False).encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def tag_rows(conn: Any, versions: Sequence[Any], trusted: Iterable[bool]) -> None:
    """Fill in the provenance a write adds to version rows: this registry's id where none is given, and the tag
    on the rows to trust (the others keep the tag they came with, or none)."""
    registry_id, key = ensure_keys(conn)
    for row, trust in zip(versions, trusted, strict=True):
        if row.get("registry_id") is None:
            row["registry_id"] = registry_id
        if trust:
            row["trust"] = tag(key, row["fact_id"], row["version"], row["method"])


def trusted(registry: Registry, versions: Sequence[Mapping[str, Any]]) -> set[tuple[str, int]]:
    """(id, version) of the facts (FactData) whose method carries a valid tag of this registry."""
    if not versions:
        return set()
    _, key = read_keys(registry)
    if key is None:
        return set()
    stored = _tags(registry, [(f["id"], f["version"]) for f in versions])
    out = set()
    for f in versions:
        have = stored.get((f["id"], f["version"]))
        if have and hmac.compare_digest(have, tag(key, f["id"], f["version"], f["method"])):
            out.add((f["id"], f["version"]))
    return out


def _tags(registry: Registry, refs: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str | None]:
    from factreg.registry.store import in_list, rows

    out: dict[tuple[str, int], str | None] = {}
    ids = sorted({fid for fid, _ in refs})
    with registry.reader() as conn:
        for start in range(0, len(ids), 500):
            sql, params = in_list("id", ids[start:start + 500])
            for r in rows(conn, f"SELECT fact_id, version, trust FROM fact_version WHERE fact_id IN {sql}", params):
                out[(r["fact_id"], r["version"])] = r["trust"]
    return out


def trust(registry: Registry, versions: Sequence[Mapping[str, Any]]) -> int:
    """Tag these facts' (FactData) methods as trusted by this registry; return how many were tagged."""
    from sqlalchemy import text

    def work(conn: Any) -> int:
        _, key = ensure_keys(conn)
        for f in versions:
            conn.execute(text("UPDATE fact_version SET trust = :t WHERE fact_id = :i AND version = :v"),
                         {"t": tag(key, f["id"], f["version"], f["method"]), "i": f["id"], "v": f["version"]})
        return len(versions)

    return int(registry.write_retrying(work)) if versions else 0
