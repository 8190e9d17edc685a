"""What to probe and how: `ProbeSpec` (the URL, the body, n, warm-up, headers by `${ENV}` name, load, time-outs),
its bounds and checks, the method stored with recorded facts, and a stored method read back (`spec_from_method`),
every field checked and bounded before anything is sent. The run itself is `measure/probe.py`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import UsageError
from factreg.measure.load import Load
from factreg.measure.stream import DEFAULT_MAX_BYTES
from factreg.registry import conditions as cond

# Bounds of a probe, from the command line or a stored method: requests, and seconds (timeout, spacing, uptime).
MAX_N = 10_000
MAX_WARMUP = 1_000
MAX_SECONDS = 3600.0
MAX_UPTIME = 365 * 86400.0
MAX_CONCURRENCY = 1024
MAX_RATE = 10_000.0



def chat_url(url: str) -> str:
    """The chat completions URL for `url`: a base URL (`http://host:8080`, `…/`, `…/v1`) gets
    `/chat/completions` (under `/v1`) appended, as OpenAI clients do; any other path is kept as given.
    A URL that does not parse (`http://[::1`) is returned as given, for `ProbeSpec.check` to refuse."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return url
    path = parts.path.rstrip("/")
    if path == "":
        path = "/v1/chat/completions"
    elif path.endswith("/v1"):
        path += "/chat/completions"
    else:
        return url
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


@dataclass
class ProbeSpec:
    """What to probe and how; `headers` are templates (`${ENV}` names), expanded only when sending."""

    url: str
    body: dict[str, Any]
    n: int = 5
    warmup: int = 2
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    min_uptime: float = DEFAULT_MIN_UPTIME_S
    wait_for_uptime: bool = False
    server_started_at: datetime | None = None
    spacing: float = 0.0
    no_cache: bool = False
    expect: dict[str, str] = field(default_factory=dict)
    max_bytes: int = DEFAULT_MAX_BYTES
    # Load (`measure/load.py`): N streams in flight, or arrivals at a rate; none = one request after another.
    concurrency: int = 0
    rate: float = 0.0
    burstiness: float = 1.0
    duration: float = 0.0
    seed: int = 0
    # The model file a local server serves (`--model-file`): its SHA-256 is an identity condition of the facts.
    model_file: str | None = None

    def __post_init__(self) -> None:
        self.url = chat_url(self.url)

    def check(self) -> None:
        """Refuse arguments that cannot work (exit 2)."""
        try:
            parts = urlsplit(self.url)
            parts.port  # noqa: B018 - a port out of range (99999) or not a number fails here
        except ValueError as exc:
            raise UsageError(f"URL must be http(s)://host[:port]/…, got {self.url!r} ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"URL must be http(s)://host[:port]/…, got {self.url!r}")
        if parts.username or parts.password:
            raise UsageError("put credentials in --header or --api-key-env, not in the URL")
        if not isinstance(self.body, dict):
            raise UsageError("--body must hold a JSON object (a chat completions request)")
        # Bounded here, where both the command line and a stored method (`verify`) arrive: a stored
        # `spacing: 100000` would otherwise sleep for days.
        if not 1 <= self.n <= MAX_N:
            raise UsageError(f"--n must be from 1 to {MAX_N}")
        if not 0 <= self.warmup <= MAX_WARMUP:
            raise UsageError(f"--warmup must be from 0 to {MAX_WARMUP}")
        if not (math.isfinite(self.timeout) and 0 < self.timeout <= MAX_SECONDS):
            raise UsageError(f"--timeout must be a number of seconds above 0 and at most {MAX_SECONDS:g}")
        if not (math.isfinite(self.spacing) and 0 <= self.spacing <= MAX_SECONDS):
            raise UsageError(f"--spacing must be a number of seconds from 0 to {MAX_SECONDS:g}")
        if not (math.isfinite(self.min_uptime) and 0 <= self.min_uptime <= MAX_UPTIME):
            raise UsageError(f"--min-uptime must be a number of seconds from 0 to {MAX_UPTIME:g}")
        if not 0 <= self.concurrency <= MAX_CONCURRENCY:
            raise UsageError(f"--concurrency must be from 1 to {MAX_CONCURRENCY}")
        if not (math.isfinite(self.rate) and 0 <= self.rate <= MAX_RATE):
            raise UsageError(f"--rate must be requests per second above 0 and at most {MAX_RATE:g}")
        if not (math.isfinite(self.burstiness) and 0.01 <= self.burstiness <= 100):
            raise UsageError("--burstiness must be from 0.01 to 100 (1: Poisson arrivals)")
        if not (math.isfinite(self.duration) and 0 <= self.duration <= MAX_SECONDS):
            raise UsageError(f"--duration must be a number of seconds from 0 to {MAX_SECONDS:g}")
        if (self.duration or self.burstiness != 1.0) and not self.load.active:
            raise UsageError("--duration and --burstiness go with --concurrency or --rate")
        if self.spacing and self.load.active:
            raise UsageError("--spacing is for one request after another; under load give --rate instead")
        if self.model_file is not None and not Path(self.model_file).is_file():
            raise UsageError(f"--model-file {self.model_file} is not a file")

    @property
    def load(self) -> Load:
        return Load(self.concurrency, self.rate, self.burstiness, self.duration, self.seed)

    def method(self) -> dict[str, Any]:
        """The recipe stored with recorded facts: data, header templates only."""
        return {
            "kind": "probe",
            "url": self.url,
            "body": self.body,
            "n": self.n,
            "warmup": self.warmup,
            "headers": dict(self.headers),
            "timeout": self.timeout,
            "no_cache": self.no_cache,
            "min_uptime": self.min_uptime,
            "spacing": self.spacing,
            **(
                {
                    "concurrency": self.concurrency,
                    "rate": self.rate,
                    "burstiness": self.burstiness,
                    "duration": self.duration,
                    "seed": self.seed,
                }
                if self.load.active
                else {}
            ),
            **({"model_file": self.model_file} if self.model_file else {}),
        }



# Bounds on a stored probe method: a method from the registry is data, and each field is checked before anything
# is sent (a tampered or imported method cannot make verify send 10⁹ requests, wait a day, or post 1 GB).
STORED_BOUNDS: dict[str, tuple[float, float]] = {
    "n": (1, MAX_N),  # a load run or a p99 fact needs 1,000+; --duration stores its cap, MAX_N
    "warmup": (0, 100),
    "timeout": (0.001, 3600),
    "spacing": (0, 3600),
    "min_uptime": (0, 7 * 86400),
    "concurrency": (0, MAX_CONCURRENCY),
    "rate": (0, MAX_RATE),
    "burstiness": (0.01, 100),
    "duration": (0, 3600),
    "seed": (0, 2**31),
}
MAX_STORED_BODY = 8 * 1024 * 1024  # as `probe --body` reads
MAX_STORED_HEADERS = 64
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}")


def _bounded(method: Mapping[str, Any], key: str, default: float, whole: bool) -> float:
    value = method.get(key, default)
    low, high = STORED_BOUNDS[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int)):
        raise UsageError(f"the stored probe method's {key} must be a {'whole ' if whole else ''}number, got {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        raise UsageError(f"the stored probe method's {key} {value!r} is outside {low:g}…{high:g}; refused")
    return value


def spec_from_method(method: Mapping[str, Any]) -> ProbeSpec:
    """A stored probe method → ProbeSpec: data, every field checked and bounded (only known keys are read)."""
    url = method.get("url")
    if not isinstance(url, str) or len(url) > 8192:
        raise UsageError("the stored probe method has no usable url")
    body = method.get("body")
    if not isinstance(body, dict):
        raise UsageError("the stored probe method's body must be a JSON object")
    if len(json.dumps(body, ensure_ascii=False, default=str)) > MAX_STORED_BODY:
        raise UsageError(f"the stored probe method's body is larger than {MAX_STORED_BODY // 2**20} MiB; refused")
    headers = method.get("headers") or {}
    if not isinstance(headers, dict) or len(headers) > MAX_STORED_HEADERS:
        raise UsageError(f"the stored probe method's headers must be an object of at most {MAX_STORED_HEADERS}")
    for name, value in headers.items():
        if not _HEADER_NAME.fullmatch(str(name)) or not isinstance(value, str) or len(value) > 8192 or any(
            ch in value for ch in "\r\n\0"
        ):
            raise UsageError(f"the stored probe method's header {str(name)[:40]!r} is not a valid header; refused")
    no_cache = method.get("no_cache", False)
    if not isinstance(no_cache, bool):
        raise UsageError("the stored probe method's no_cache must be true or false")
    model_file = method.get("model_file")
    if model_file is not None and (not isinstance(model_file, str) or not 0 < len(model_file) <= 4096
                                   or "\0" in model_file):
        raise UsageError("the stored probe method's model_file must be a file path")
    spec = ProbeSpec(
        url=url,
        body=body,
        n=int(_bounded(method, "n", 5, True)),
        warmup=int(_bounded(method, "warmup", 2, True)),
        headers=dict(headers),
        timeout=float(_bounded(method, "timeout", 60, False)),
        no_cache=no_cache,
        min_uptime=float(_bounded(method, "min_uptime", DEFAULT_MIN_UPTIME_S, False)),
        spacing=float(_bounded(method, "spacing", 0, False)),
        concurrency=int(_bounded(method, "concurrency", 0, True)),
        rate=float(_bounded(method, "rate", 0, False)),
        burstiness=float(_bounded(method, "burstiness", 1, False)),
        duration=float(_bounded(method, "duration", 0, False)),
        seed=int(_bounded(method, "seed", 0, True)),
        model_file=model_file,
    )
    spec.check()  # http(s)://host, no credentials in the URL
    return spec


def expected(expect: Mapping[str, str]) -> dict[str, str]:
    """Expected conditions as the probe observes them (`thinking` on/off, `warm` in lower case)."""
    out = {}
    for k, v in expect.items():
        v = str(v)
        if k in ("thinking",):
            v = {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off"}.get(v.lower(), v)
        elif k == "warm":
            v = v.lower()
        out[k] = v
    return out


def changed(
    expect: Mapping[str, str], observed: Mapping[str, str], keys: tuple[str, ...] | None = None
) -> tuple[dict[str, list[str | None]], str]:
    """The expected conditions (of `keys` when given) that the probe observed otherwise, and one line saying so."""
    names = [k for k in expect if (keys is None or k in keys) and k in observed]
    diff = cond.diff(dict(expect), dict(observed), names)
    return diff, "; ".join(f"{k}: expected {old!r}, observed {new!r}" for k, (old, new) in diff.items())
