"""The probe's identity check: which model and build answer at an endpoint, before anything is timed.

`/v1/models`, `/props` and one 1-token authenticated request, all within one time-out. What they name becomes
the observed `model` and `build`, which stop the probe early when they are not the expected ones.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from factreg.measure.stream import get_json, request_body, stream_request
from factreg.measure.trace import ProbeFailure, RequestTrace
from factreg.verdicts import Verdict

if TYPE_CHECKING:
    import httpx


@dataclass
class Identity:
    """What the identity check saw: its 1-token request, the observed model and build, and info conditions."""

    trace: RequestTrace
    observed: dict[str, str] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)


def endpoints(url: str) -> tuple[str, str]:
    """(/v1/models URL, /props URL) for a chat completions URL, keeping any path prefix before /v1."""
    parts = urlsplit(url)
    path = parts.path
    at = path.find("/v1/")
    prefix = path[:at] if at >= 0 else path.rsplit("/", 2)[0] if path.count("/") >= 2 else ""
    models = urlunsplit((parts.scheme, parts.netloc, prefix + "/v1/models", "", ""))
    props = urlunsplit((parts.scheme, parts.netloc, prefix + "/props", "", ""))
    return models, props


def check_identity(
    http: httpx.Client,
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    *,
    timeout: float,
    no_cache: bool,
    max_bytes: int,
) -> Identity:
    """`/v1/models`, `/props` and one 1-token authenticated request, all within one --timeout."""
    deadline = time.monotonic() + timeout
    models_url, props_url = endpoints(url)

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ProbeFailure(Verdict.UNREACHABLE, f"identity check not finished within {timeout:g} s")
        return remaining

    ids: list[str] = []
    models = get_json(http, models_url, headers, left())
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        ids = [str(m["id"]) for m in models["data"] if isinstance(m, dict) and m.get("id")]
    props = get_json(http, props_url, headers, left())
    build_info = props.get("build_info") if isinstance(props, dict) else None
    trace = stream_request(
        http,
        url,
        headers,
        request_body(body, no_cache, max_tokens=1),
        left(),
        "identity",
        max_bytes,
    )
    seen = Identity(trace)
    model = trace.model or (ids[0] if len(ids) == 1 else None)
    if model:
        seen.observed["model"] = model
    build = trace.system_fingerprint or (str(build_info) if build_info else None)
    if build:
        seen.observed["build"] = build
    if ids:
        seen.info["served_models"] = ",".join(ids[:10])
    if isinstance(props, dict) and props.get("model_path"):
        seen.info["model_path"] = str(props["model_path"])
    return seen
