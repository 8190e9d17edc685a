"""Conditions: identity conditions decide comparability, info conditions are kept alongside."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from factreg.errors import UsageError
from factreg.registry.metrics import ALWAYS_INFO

IDENTITY = "identity"
INFO = "info"


def parse_pairs(pairs: Iterable[str], option: str = "--cond") -> dict[str, str]:
    """`["machine=gamebox", "warm=false"]` → dict; a key given twice is an error."""
    out: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise UsageError(f"{option} takes key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        key = key.strip()
        if not key or not all(ch.isalnum() or ch in "._-" for ch in key):
            raise UsageError(f"{option}: invalid condition key {key!r}")
        if key in out and out[key] != value:
            raise UsageError(f"{option}: {key!r} given twice")
        out[key] = value.strip()
    return out


def as_text(value: Any) -> str:
    """Conditions are stored as text: booleans lower-case, whole floats without `.0`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return "" if value is None else str(value)


def split(identity: Mapping[str, Any], info: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Normalise both maps to text; keys that never decide comparability move to info."""
    ident = {k: as_text(v) for k, v in identity.items() if k not in ALWAYS_INFO}
    inf = {k: as_text(v) for k, v in info.items()}
    for k in ALWAYS_INFO & set(identity):
        inf.setdefault(k, as_text(identity[k]))
    both = set(ident) & set(inf)
    if both:
        raise UsageError(f"condition {sorted(both)[0]!r} given as both identity and info")
    return ident, inf


def diff(old: Mapping[str, str], new: Mapping[str, str], keys: Iterable[str] | None = None) -> dict[str, list[str | None]]:
    """Keys whose values differ: key → [old, new] (None where absent). Only `keys` when given."""
    names = set(keys) if keys is not None else set(old) | set(new)
    return {k: [old.get(k), new.get(k)] for k in sorted(names) if old.get(k) != new.get(k)}


def observed_identity(identity: Mapping[str, str], info_keys: Collection[str],
                      observed: Mapping[str, Any]) -> dict[str, str]:
    """The identity conditions of a verification: the verified version's `identity`, with every observed identity
    key in its place. An observed key that is always info (`uptime_s`, the machine's state, the control run) or that
    the version keeps as info (`info_keys`) is what one run records about itself: it is left out, so a series never
    names it as a cause. Other observed keys are identity conditions (a `thinking` the fact never recorded)."""
    seen = {k: as_text(v) for k, v in observed.items() if k not in ALWAYS_INFO and k not in info_keys}
    return {**identity, **seen}


def canonical_json(obj: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no whitespace, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def body_sha256(body: Any) -> str:
    """SHA-256 of a request body's canonical JSON: two bodies that mean the same hash the same."""
    return hashlib.sha256(canonical_json(body)).hexdigest()


def is_cold(identity: Mapping[str, str], info: Mapping[str, str], min_uptime_s: float) -> bool:
    """Cold: `warm=false`, `cold=true`, or an uptime below the threshold."""
    conds = {**info, **identity}
    if conds.get("warm", "").lower() in ("false", "0", "no"):
        return True
    if conds.get("cold", "").lower() in ("true", "1", "yes"):
        return True
    uptime = conds.get("uptime_s")
    if uptime:
        try:
            return float(uptime) < min_uptime_s
        except ValueError:
            return False
    return False
