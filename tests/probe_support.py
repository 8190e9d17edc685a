"""Helpers for the probe's tests and benchmark: curl timings; the llama-server launcher lives in factreg."""

from __future__ import annotations

import subprocess

from factreg.demo.llamaserver import LlamaServer, free_port, llama_server, llama_server_binary  # noqa: F401


def curl_starttransfer(url: str, body: dict) -> float:
    """curl's time_starttransfer (seconds) for one POST of `body`."""
    import json

    out = subprocess.run(
        [
            "curl",
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{time_starttransfer}",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            json.dumps(body),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return float(out.stdout)


def ttfb_pairs(url: str, body: dict, n: int, warmup: int = 2) -> tuple[list[float], list[float]]:
    """factreg's ttfb and curl's time_starttransfer for the same body, alternated so that load hits both alike."""
    from factreg.measure import stream
    from factreg.measure.http import make_client

    sent = stream.request_body(body, no_cache=False)
    ours: list[float] = []
    theirs: list[float] = []
    with make_client(30, keepalive=False) as client:
        for i in range(warmup + n):
            trace = stream.stream_request(client, url, {}, sent, 30)
            curl = curl_starttransfer(url, sent)
            if i >= warmup:
                ours.append(trace.metrics()["ttfb"])
                theirs.append(curl)
    return ours, theirs
