"""Secrets: header values name `${ENV_VAR}`s that are expanded only at run time, and every output is redacted.

A secret value that was expanded (or given literally) is remembered for the life of the process, so that
`redact()` masks it wherever it would otherwise appear: error messages, JSON output, raw output, logs.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping

from factreg.errors import UsageError

MASK = "***"
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A sensitive header's stored value may only be an optional scheme word and one `${VAR}`.
_TEMPLATE_ONLY = re.compile(r"^\s*(?:[A-Za-z][A-Za-z0-9_-]*\s+)?\$\{[A-Za-z_][A-Za-z0-9_]*\}\s*$")
SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "cookie",
        "x-goog-api-key",
        "openai-api-key",
    }
)
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # "Bearer abc…": keep the scheme, mask the credential
    (re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{4,}"), r"\1\2" + MASK),
    # "Authorization: Basic abc…" and other schemes after an Authorization name
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?[A-Za-z]+\s+)[^\s\"'*]{4,}"), r"\1" + MASK),
    # key=value or "key": "value" for names that hold credentials
    (
        re.compile(
            r"(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd)[\"']?\s*[:=]\s*[\"']?)"
            r"[^\s\"'&,;}*]{4,}"
        ),
        r"\1" + MASK,
    ),
    # well-known key shapes
    (re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|xox[baprs]-[A-Za-z0-9-]{8,})"), MASK),
]

_known: set[str] = set()
_lock = threading.Lock()


def remember(value: str) -> None:
    """Treat `value` as a secret for the rest of the process: `redact` masks it everywhere."""
    value = value.strip()
    if len(value) >= 4:
        with _lock:
            _known.add(value)


def redact(text: str) -> str:
    """`text` with remembered secrets, bearer tokens and API keys masked."""
    if not text:
        return text
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for value in known:
        text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def env_names(value: str) -> list[str]:
    """The `${VAR}` names a header value refers to."""
    return _ENV_REF.findall(value)


def expand(value: str, env: Mapping[str, str] | None = None) -> str:
    """Replace every `${VAR}` with the variable's value (remembered as a secret); unset → UsageError."""
    source = os.environ if env is None else env

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        got = source.get(name)
        if got is None or got == "":
            raise UsageError(f"environment variable {name} is not set (named in a header as ${{{name}}})")
        remember(got)
        return got

    return _ENV_REF.sub(sub, value)


def parse_header(text: str) -> tuple[str, str]:
    """`"Name: value"` → (name, value); a literal credential in a sensitive header is remembered as secret."""
    if ":" not in text:
        raise UsageError("--header takes 'Name: value'")
    name, value = text.split(":", 1)
    name, value = name.strip(), value.strip()
    if not name or not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", name):
        raise UsageError("--header: invalid header name")
    if any(ch in value for ch in "\r\n\0"):
        raise UsageError(f"--header {name}: the value may not contain line breaks")
    if is_sensitive(name) and not _ENV_REF.search(value):
        remember(value)
        parts = value.split(None, 1)
        if len(parts) == 2:
            remember(parts[1])
    return name, value


def is_sensitive(name: str) -> bool:
    """Whether a header carries credentials."""
    low = name.lower()
    return low in SENSITIVE_HEADERS or "token" in low or "secret" in low or low.endswith("-key")


def literal_secret_headers(headers: Mapping[str, str]) -> list[str]:
    """Names of sensitive headers whose value holds a literal credential instead of only a `${VAR}`."""
    return [name for name, value in headers.items() if is_sensitive(name) and not _TEMPLATE_ONLY.match(value)]


def expand_headers(headers: Mapping[str, str], env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Header templates → the values to send (secrets remembered for redaction)."""
    return {name: expand(value, env) for name, value in headers.items()}
