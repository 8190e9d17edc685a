"""Other traffic on the probed server, from its own Prometheus metrics.

A server that was busy with other people's requests while it was probed is slower for a reason that says nothing
about the fact. Servers that expose their load say so themselves:

| server | requests running | requests waiting |
|---|---|---|
| llama.cpp `llama-server --metrics` | `llamacpp:requests_processing` | `llamacpp:requests_deferred` |
| vLLM | `vllm:num_requests_running` | `vllm:num_requests_waiting` |
| SGLang `--enable-metrics` | `sglang:num_running_reqs` | `sglang:num_queue_reqs` |

`Sampler` reads `/metrics` at the server's root before the run, every `INTERVAL_S` during it (from a thread of its
own) and after it. Each reading counts running + waiting requests over every label set (a vLLM server labels
them by `model_name`); `other_traffic` then takes away the probe's own requests in flight at that moment (each
request's span from its start to its end, widened by `MARGIN_S` either side: a server counts a request a little
before the client sees it sent and a little after its last chunk), so what is left is somebody else's.

A server without the endpoint (404, not Prometheus text, a refusal) is recorded as such and is never a reason to
fail: the verdict is then judged as measured. The probe's own headers (its credential) go with the reading, to the
same host and port as the probe's requests and nowhere else; redirects are never followed, and a reply is read up
to `MAX_BYTES`.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

GAUGES: dict[str, tuple[str, str]] = {
    "llama.cpp": ("llamacpp:requests_processing", "llamacpp:requests_deferred"),
    "vLLM": ("vllm:num_requests_running", "vllm:num_requests_waiting"),
    "SGLang": ("sglang:num_running_reqs", "sglang:num_queue_reqs"),
}
INTERVAL_S = 0.5
TIMEOUT_S = 1.0
MARGIN_S = 0.1
MAX_BYTES = 4 * 1024 * 1024
BUSY_SAMPLES = 2  # other requests seen in at least this many readings (one reading alone may be a boundary)


def metrics_url(url: str) -> str:
    """`http://host:8080/v1/chat/completions` → `http://host:8080/metrics` (the servers above serve it at the root)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]  # never a URL's user:password
    return urlunsplit((parts.scheme, netloc, "/metrics", "", ""))


def parse(text: str) -> dict[str, float] | None:
    """The known gauges of a Prometheus text page, summed over label sets: name → value (None: no known gauge)."""
    wanted = {name for pair in GAUGES.values() for name in pair}
    found: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if "{" in line.split(" ", 1)[0]:
            name, rest = line.split("{", 1)[0], line.rsplit("}", 1)[-1]  # labels may hold spaces
        else:
            name, _, rest = line.partition(" ")
        name = name.strip()
        if name not in wanted:
            continue
        words = rest.split()
        if not words:
            continue
        try:
            value = float(words[0])
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            found[name] = found.get(name, 0.0) + value
    return found or None


def server_kind(gauges: Mapping[str, float]) -> str | None:
    for kind, (running, waiting) in GAUGES.items():
        if running in gauges or waiting in gauges:
            return kind
    return None


def total(gauges: Mapping[str, float]) -> float:
    kind = server_kind(gauges)
    if kind is None:
        return 0.0
    running, waiting = GAUGES[kind]
    return gauges.get(running, 0.0) + gauges.get(waiting, 0.0)


@dataclass
class Reading:
    t: float  # time.perf_counter() seconds, the clock of the probe's traces
    requests: float  # running + waiting, as the server counts them (the probe's own among them)


@dataclass
class Sampler:
    """Reads the server's load before, during and after a run (`start()` … `stop()`); never raises."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    interval_s: float = INTERVAL_S
    readings: list[Reading] = field(default_factory=list)
    kind: str | None = None
    error: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _client: Any = None

    def _read(self) -> bool:
        """One reading; False (and `error`) once the endpoint proved unusable."""
        import httpx

        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("content-type", "content-length")}
            headers["Accept-Encoding"] = "identity"
            headers["Accept"] = "text/plain"
            with self._client.stream("GET", metrics_url(self.url), headers=headers) as reply:
                if reply.status_code != 200:
                    self.error = f"/metrics answered HTTP {reply.status_code}"
                    return False
                body = b""
                for chunk in reply.iter_raw():
                    body += chunk
                    if len(body) > MAX_BYTES:
                        self.error = f"/metrics is larger than {MAX_BYTES // (1024 * 1024)} MB"
                        return False
        except (httpx.HTTPError, OSError, ValueError) as exc:
            self.error = f"/metrics could not be read ({type(exc).__name__})"
            return False
        gauges = parse(body.decode("utf-8", errors="replace"))
        if gauges is None:
            self.error = "/metrics holds no load gauge factreg knows (llama-server needs --metrics)"
            return False
        self.kind = self.kind or server_kind(gauges)
        self.readings.append(Reading(time.perf_counter(), total(gauges)))
        return True

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            if not self._read():
                return

    def start(self) -> Sampler:
        try:
            from factreg.measure import http

            self._client = http.make_client(TIMEOUT_S)
            if self._read():
                self._thread = threading.Thread(target=self._loop, name="factreg-metrics", daemon=True)
                self._thread.start()
        except Exception as exc:  # noqa: BLE001 - the server's load is never a reason to fail
            self.error = f"/metrics could not be read ({type(exc).__name__})"
        return self

    def stop(self) -> Sampler:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(TIMEOUT_S + 1)
            with contextlib.suppress(Exception):
                self._read()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
        return self


def in_flight(t: float, spans: Sequence[tuple[float, float]], margin: float = MARGIN_S) -> int:
    """How many of the probe's own requests were in flight at `t` (each span widened by `margin`)."""
    return sum(1 for a, b in spans if a - margin <= t <= b + margin)


def other_traffic(readings: Sequence[Reading], spans: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """Per reading, the server's requests less the probe's own in flight: the summary kept with a measurement."""
    others = [max(r.requests - in_flight(r.t, spans), 0.0) for r in readings]
    seen = [x for x in others if x >= 1]
    return {
        "readings": len(readings),
        "other_max": max(others) if others else 0.0,
        "other_mean": round(sum(others) / len(others), 3) if others else 0.0,
        "other_readings": len(seen),
        "busy": len(seen) >= min(BUSY_SAMPLES, len(readings)) and bool(seen),
    }


def summary(sampler: Sampler, spans: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """What is kept of a sampler's run: the server kind and the other traffic, or why there is none."""
    if not sampler.readings:
        return {"available": False, "why": sampler.error or "no reading"}
    out: dict[str, Any] = {"available": True, "server": sampler.kind, **other_traffic(sampler.readings, spans)}
    if sampler.error:
        out["note"] = sampler.error
    return out
