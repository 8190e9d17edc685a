"""Secrets: header values name `${ENV_VAR}`s that are expanded only at run time, and every output is redacted.

`redact()` is the one redaction rule of factreg: every writer (templates, decision and correction records, the
report, git commit messages) and every printer (JSON, tables, messages, errors) passes text through it. It masks
secret values remembered in this process (an expanded `${VAR}`, a literal credential given in a header), bearer
and basic credentials, well-known API key shapes (`sk-…`, `ghp_…`, `xoxb-…`, `hf_…`, `AKIA…`), `key=value` /
`key: value` pairs whose key names a credential, the password in a URL's userinfo, and credential query
parameters (`?key=…`, `&token=…`). Ordinary prose is left alone: for the ambiguous words `token` and `secret`
only a value that looks like a credential (six or more characters mixing letters and digits, or twenty or more)
is masked, so "token=42 tokens" stays as it is.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, cast

from factreg.errors import UsageError

MASK = "***"


class _Lazy:
    """A pattern compiled by its first use: most commands redact no text that a rule's pattern is tried on, and
    compiling them all was the largest part of importing this module. The compiled pattern's methods then take the
    place of this object's, so later calls cost what a compiled pattern's do."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __getattr__(self, name: str) -> Any:  # only while the methods are not set yet
        rx = re.compile(self.pattern)
        for method in ("search", "match", "fullmatch", "finditer", "findall", "sub"):
            setattr(self, method, getattr(rx, method))
        return getattr(rx, name)


def _lazy(pattern: str) -> re.Pattern[str]:
    """A pattern compiled on first use, typed as the compiled pattern it stands for."""
    return cast(re.Pattern[str], _Lazy(pattern))

_ENV_REF = _lazy(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A sensitive header's stored value may only be an optional scheme word and one `${VAR}`.
_TEMPLATE_ONLY = _lazy(r"^\s*(?:[A-Za-z][A-Za-z0-9_-]*\s+)?\$\{[A-Za-z_][A-Za-z0-9_]*\}\s*$")
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

# Headers whose values are never credentials; any other header's literal value may be one (`apikey`, `X-Auth`, …),
# so `probe --record` stores no literal value but of these, and a credential-shaped one is remembered as secret.
HARMLESS_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "content-type",
        "http-referer",
        "pragma",
        "referer",
        "user-agent",
        "x-title",
    }
)

# ---------------------------------------------------------------- the redaction rule
#
# The patterns are written for lower-cased text: `_sub_folded` matches them on `text.lower()`, which is several
# times faster than IGNORECASE, and replaces in `text` at the same places. Each rule has a gate, a cheap
# substring test that any match needs, so most text (ids, dates, units, numbers) meets no pattern at all.

# Key names whose value is always a credential, and words that name one only when the value looks like it.
_STRICT_KEYS = (
    r"pass(?:word|wd|phrase)|pwd|api[_-]?key|(?:access|auth|refresh|session|bearer|id)[_-]?token"
    r"|client[_-]?secret|secret[_-]?key|private[_-]?key"
)
_KEYS = rf"{_STRICT_KEYS}|token|secret"
_KEY_WORDS = ("pass", "pwd", "key", "token", "secret")  # every key above holds one of these
_STRICT_NAME = _lazy(_STRICT_KEYS)
_KEY_NAME = _lazy(rf"(?:.*[^a-z0-9])?(?:{_KEYS})")  # a whole mapping key such as OPENAI_API_KEY (lower-cased)

# `key=value`, `key: value`, `"key": "value"`: the key not glued to a word before it, the value quoted or bare.
_PAIR = _lazy(
    rf"(?<![a-z0-9])(?P<key>{_KEYS})(?P<sep>[\"']?\s*[:=]\s*)"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"'&,;<>]+))"
)
# `?key=…` / `&api_key=…` in a URL: any value of these parameters is a credential.
_QUERY_WORDS = (*_KEY_WORDS, "auth", "sig", "x-amz-")
_QUERY = _lazy(
    rf"(?P<head>[?&](?:{_KEYS}|key|auth|sig|signature|x-amz-signature|x-amz-credential)=)(?P<value>[^&#\s\"'<>]+)"
)
# `scheme://user:password@host`: keep the user, mask the password (which may itself hold an unencoded `@`).
_USERINFO = _lazy(r"(?P<head>://[^\s/?#@:\"'<>]*:)(?P<value>[^\s/?#\"'<>]*)(?=@)")
# "Bearer abc…": keep the scheme, mask the credential (not a `${VAR}`, nor the words "bearer token").
_BEARER = _lazy(
    r"(?P<head>\bbearer\s+)(?!\$\{)(?!(?:tokens?|auth\w*|scheme|header)\b)(?P<value>[a-z0-9._~+/=-]{4,})"
)
# "Authorization: Basic abc…" and other schemes after an Authorization name.
_AUTHORIZATION = _lazy(r"(?P<head>authorization[\"']?\s*[:=]\s*[\"']?[a-z]+\s+)(?!\$\{)(?P<value>[^\s\"'*]{4,})")
# Well-known key shapes (case-sensitive: matched on the text itself).
_SHAPE_NEEDLES = ("sk-", "sk_", "pk-", "pk_", "rk_", "github_pat_", "xox", "hf_", "glpat-", "AKIA")  # and gh…
_SHAPES = _lazy(
    r"\b(?:sk-[A-Za-z0-9_-]{8,}"
    r"|(?:sk|pk|rk)_(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{10,}"
    r"|pk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{10,}"
    r"|gh[pousr][-_][A-Za-z0-9_-]{10,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[a-z][-_][A-Za-z0-9_-]{8,}"
    r"|hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16})"
)

# Large text (a whole JSON listing) is tested once for what any rule needs, each needle as a one-literal pattern
# (faster than `in` on megabytes); the lower-cased needles cover the case-sensitive shapes too.
_NEEDED = tuple(
    _lazy(needle)
    for needle in (*_KEY_WORDS, "auth", "bearer", "sk-", "sk_", "pk-", "pk_", "rk_", "gh[pousr][-_]", "github_pat_",
                   "xox", "hf_", "glpat-", "akia")
)  # fmt: skip

_known: set[str] = set()
_known_sorted: tuple[str, ...] = ()  # longest first, so that a secret holding another is masked whole
_lock = threading.Lock()
_CACHE_SIZE = 100_000
_cache: dict[str, str] = {}


def remember(value: str) -> None:
    """Treat `value` as a secret for the rest of the process: `redact` masks it everywhere."""
    global _known_sorted, _cache
    value = value.strip()
    if len(value) >= 4:
        with _lock:
            _known.add(value)
            _known_sorted = tuple(sorted(_known, key=len, reverse=True))
            _cache = {}


def looks_like_credential(value: str) -> bool:
    """Whether a bare word is shaped like a credential: ≥ 6 characters mixing letters and digits, or ≥ 20."""
    if len(value) < 6 or any(ch.isspace() for ch in value):
        return False
    if len(value) >= 20:
        return True
    return any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value)


def _masks(key: str, value: str) -> bool:
    """Whether `value`, given under the name `key`, is to be masked."""
    if not value or value.startswith(MASK) or value.startswith("${"):
        return False
    if _STRICT_NAME.search(key.lower()):
        return len(value) >= 4
    return looks_like_credential(value)


def _sub_folded(pattern: re.Pattern[str], text: str, replace: Any) -> str:
    """`pattern` (written for lower-case text) applied to `text` ignoring case: matched on the lower-cased text,
    each match replaced by `replace(match, text)` at the same place in `text`."""
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer: lower the others one by one
        low = "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)
    pieces: list[str] = []
    last = 0
    for match in pattern.finditer(low):
        pieces += [text[last : match.start()], replace(match, text)]
        last = match.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _part(match: re.Match[str], text: str, group: str) -> str:
    return text[match.start(group) : match.end(group)]


def _mask_value(match: re.Match[str], text: str) -> str:
    """`head` kept, `value` masked (unless it is already masked or a `${VAR}`)."""
    value = _part(match, text, "value")
    if value.startswith(MASK) or value.startswith("${"):
        return text[match.start() : match.end()]
    return _part(match, text, "head") + MASK


def _mask_pair(match: re.Match[str], text: str) -> str:
    key, sep = _part(match, text, "key"), _part(match, text, "sep")
    for group, quote in (("dq", '"'), ("sq", "'"), ("bare", "")):
        if match.start(group) >= 0:
            value = _part(match, text, group)
            return f"{key}{sep}{quote}{MASK if _masks(key, value) else value}{quote}"
    return text[match.start() : match.end()]  # pragma: no cover - one of the groups always matched


# Cheap tests that every match of a rule passes (the rule is skipped when its test fails).
_PAIR_GATE = _lazy(r"(?:pass(?:word|wd|phrase)|pwd|key|token|secret)[\"']?\s*[:=]")
_BEARER_GATE = _lazy(r"bearer\s+(?!\$\{)")
_GH = _lazy(r"gh[pousr][-_]")


def _query_gate(low: str) -> bool:
    return "=" in low and ("?" in low or "&" in low) and any(word in low for word in _QUERY_WORDS)


def _pair_gate(low: str) -> bool:
    return any(word in low for word in _KEY_WORDS) and _PAIR_GATE.search(low) is not None


def _shape_gate(text: str) -> bool:
    return any(needle in text for needle in _SHAPE_NEEDLES) or ("gh" in text and _GH.search(text) is not None)


# Each rule: its gate (a test on the text and its lower-cased copy that every match passes) and what it does.
_RULES: tuple[tuple[Callable[[str, str], bool], Callable[[str], str]], ...] = (
    (lambda text, low: "@" in low and "://" in low, lambda text: _USERINFO.sub(lambda m: _mask_value(m, text), text)),
    (lambda text, low: _query_gate(low), lambda text: _sub_folded(_QUERY, text, _mask_value)),
    (lambda text, low: _pair_gate(low), lambda text: _sub_folded(_PAIR, text, _mask_pair)),
    (lambda text, low: "bearer" in low and _BEARER_GATE.search(low) is not None,
     lambda text: _sub_folded(_BEARER, text, _mask_value)),
    (lambda text, low: "authorization" in low, lambda text: _sub_folded(_AUTHORIZATION, text, _mask_value)),
    (lambda text, low: _shape_gate(text), lambda text: _SHAPES.sub(MASK, text)),
)  # fmt: skip


_PASSES = 8  # each changing pass masks at least one more credential; real text settles in one or two


def redact(value: Any) -> str:
    """`text` (made a string) with remembered secrets, credentials and API keys masked as `***`."""
    text: str = value if isinstance(value, str) else str(value)
    if len(text) < 4:
        return text
    for known in _known_sorted:
        if known in text:
            text = text.replace(known, MASK)
    low = text.lower()
    # A mask can open a word boundary that a rule (an earlier one, or the same) looks for: `AKIA…ghp_…` masked
    # becomes `***ghp_…`. So the rules run again until nothing changes, which also makes masking twice a no-op.
    for _ in range(_PASSES):
        before = text
        for gate, apply in _RULES:
            if gate(text, low):
                masked = apply(text)
                if masked != text:
                    text, low = masked, masked.lower()
        if text == before:
            break
    return text


def _may_hold_credential(text: str) -> bool:
    """False only when no rule of `redact` can match `text` (remembered secrets aside)."""
    low = text.lower()
    return (
        ("@" in low and "://" in low)
        or ("=" in low and ("sig" in low or "x-amz-" in low))
        or any(needed.search(low) for needed in _NEEDED)
    )


def dumps(data: Any, encode: Callable[..., str] = json.dumps, **options: Any) -> str:
    """`encode(data, **options)` (`json.dumps` unless given, e.g. `jsontext.dumps`) with every string redacted as
    `redact_data` does.

    The data is walked only when its JSON text could hold a credential: a large listing usually cannot."""
    text = encode(data, **options)
    escaped = options.get("ensure_ascii", True)
    if _may_hold_credential(text) or any(
        value in text or json.dumps(value, ensure_ascii=escaped)[1:-1] in text for value in _known_sorted
    ):
        text = encode(redact_data(data), **options)
    return text


def redact_data(data: Any) -> Any:
    """JSON-shaped `data` with every string redacted, and a string under a credential's key masked."""
    kind = type(data)
    if kind is str:
        return _redact_cached(data)
    if kind is dict or isinstance(data, Mapping):
        return {key: _redact_value(key, value) for key, value in data.items()}
    if kind is list or kind is tuple:
        return [redact_data(x) for x in data]
    return data


_SCALARS = frozenset({int, float, bool, type(None)})


def _redact_value(key: Any, value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return MASK if _credential_key(key) and _masks(key, value) else _redact_cached(value)
    return value if kind in _SCALARS else redact_data(value)


@functools.lru_cache(maxsize=4096)
def _credential_key(key: Any) -> bool:
    """Whether a mapping key (such as `token` or `OPENAI_API_KEY`) names a credential."""
    return isinstance(key, str) and _KEY_NAME.fullmatch(key.lower()) is not None


def _redact_cached(text: str) -> str:
    """`redact(text)`, remembered for strings that repeat (units, statuses, reasons) in large outputs."""
    if len(text) < 4:
        return text
    cache = _cache  # `remember` starts a new cache: a result computed meanwhile lands in the old one
    got = cache.get(text)
    if got is None:
        got = redact(text)
        if len(cache) < _CACHE_SIZE:
            cache[text] = got
    return got


def env_names(value: str) -> list[str]:
    """The `${VAR}` names a header value refers to."""
    return _ENV_REF.findall(value)


def check_env_name(name: str, option: str) -> str:
    """An environment variable's name as an option gives it (`MY_API_KEY`); anything else → UsageError."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UsageError(f"{option} takes an environment variable name, e.g. MY_API_KEY")
    return name


def _check_allowed(value: str, allowed: frozenset[str]) -> None:
    for name in env_names(value):
        if name not in allowed:
            raise UsageError(
                f"the stored method names ${{{name}}}, which it may not expand: add {name!r} to [probe] "
                f"allow_env in .factreg/config.toml, or pass verify --api-key-env {name}"
            )


def expand(value: str, env: Mapping[str, str] | None = None, allowed: frozenset[str] | None = None) -> str:
    """Replace every `${VAR}` with the variable's value (remembered as a secret); unset → UsageError.

    With `allowed` (a stored method's headers), a variable not in it is refused before any is read."""
    source = os.environ if env is None else env
    if allowed is not None:
        _check_allowed(value, allowed)

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
    elif name.lower() not in HARMLESS_HEADERS:  # `apikey: …`, `X-Auth: …`: a credential under a name not known
        for word in (value, *value.split()):
            if looks_like_credential(word) and not _ENV_REF.search(word):
                remember(word)
    return name, value


def is_sensitive(name: str) -> bool:
    """Whether a header carries credentials."""
    low = name.lower()
    return low in SENSITIVE_HEADERS or "token" in low or "secret" in low or low.endswith("-key")


def literal_secret_headers(headers: Mapping[str, str]) -> list[str]:
    """Names of headers whose value holds literal text instead of only a `${VAR}` (an optional scheme word
    before it): any header but the known harmless ones (HARMLESS_HEADERS) may carry a credential."""
    return [
        name
        for name, value in headers.items()
        if name.lower() not in HARMLESS_HEADERS and not _TEMPLATE_ONLY.match(value)
    ]


def url_credentials(url: str) -> list[str]:
    """The values of a URL's credential query parameters (`?key=…`, `&api_key=…`, `&sig=…`), each remembered."""
    found = []
    for match in _QUERY.finditer(url.lower()):
        value = url[match.start("value") : match.end("value")]
        if not value.startswith("${"):
            found.append(value)
            remember(value)
    return found


def expand_headers(
    headers: Mapping[str, str], env: Mapping[str, str] | None = None, allowed: frozenset[str] | None = None
) -> dict[str, str]:
    """Header templates → the values to send (secrets remembered for redaction); with `allowed`, every `${VAR}`
    of every header is checked before any is expanded."""
    if allowed is not None:
        for value in headers.values():
            _check_allowed(value, allowed)
    return {name: expand(value, env, allowed) for name, value in headers.items()}
