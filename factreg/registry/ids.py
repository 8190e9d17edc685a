"""Fact ids are slugs: they name files under the docs root, so they must never escape it."""

from __future__ import annotations

import re

from factreg.errors import UsageError

MAX_ID = 200
_SLUG = re.compile(r"[a-z0-9._/-]+")  # matched whole (fullmatch): no trailing newline slips through


def check_id(fact_id: str) -> str:
    """Return `fact_id` when it is a valid slug, else raise a UsageError saying why."""
    if not fact_id:
        raise UsageError("a fact id cannot be empty")
    if len(fact_id) > MAX_ID:
        raise UsageError(f"fact id is {len(fact_id)} characters long; at most {MAX_ID} are allowed")
    if not _SLUG.fullmatch(fact_id):
        raise UsageError(f"invalid fact id {fact_id!r}: use lower-case letters, digits and . _ / -")
    if fact_id.startswith("/") or fact_id.endswith("/"):
        raise UsageError(f"invalid fact id {fact_id!r}: it cannot start or end with '/'")
    parts = fact_id.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise UsageError(f"invalid fact id {fact_id!r}: empty, '.' and '..' segments are not allowed")
    return fact_id


def check_slug(text: object, max_len: int = MAX_ID) -> str:
    """`text` when it is a slug as `slugify` makes them (lower-case letters, digits, `.` and `-`, no leading or
    trailing `.`/`-`): such a slug can be part of a file name and never names a folder. Else a UsageError."""
    if not isinstance(text, str) or not text or len(text) > max_len or slugify(text, max_len) != text:
        raise UsageError(f"invalid slug {text!r}: use lower-case letters, digits, '.' and '-'")
    return text


def slugify(text: str, max_len: int = 60) -> str:
    """A slug part from free text (`Voice front end → 35B-A3B` → `voice-front-end-35b-a3b`)."""
    slug = re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")
    return (slug[:max_len].rstrip("-.")) or "x"


def ref(fact_id: str, version: int) -> str:
    """`gamebox/a3b/tg32@v2`: one version of a fact, as factreg writes it."""
    return f"{fact_id}@v{version}"


def parse_ref(text: str) -> tuple[str, int | None]:
    """`ID`, `ID@2` or `ID@v2` → (id, version or None); the id is checked."""
    fact_id, _, version = text.strip().partition("@")
    check_id(fact_id)
    if not version:
        return fact_id, None
    digits = version[1:] if version.startswith("v") else version
    if not digits.isdigit() or not digits.isascii():
        raise UsageError(f"{text!r}: the version after @ must be a number, e.g. {fact_id}@v2")
    return fact_id, int(digits)
