"""Stand-in servers: a real threaded HTTP server on 127.0.0.1 (free port) for the demo and the probe's tests.

It speaks the OpenAI-compatible streaming protocol (`/v1/chat/completions`, `/v1/models`, `/props`) and does,
on demand, what a real server cannot be made to do: exact delays, reasoning before the answer, `<think>` inside
content, a missing `[DONE]`, a mid-stream disconnect, a stall, garbage lines, error statuses, a redirect to
another host, bytes that are not UTF-8, a 50 MB stream, a warm-graph effect (fast first requests), a server
that slows with load (`perstream`) or falls over at a number of streams in flight (`slowat`, `slowfirst`), and
streams on kept-alive connections (`keep=1`; by default each stream closes its connection, as llama-server's do).

Every chat request is logged (`requests`, and `GET /log` for a stand-in in another process): when it reached the
socket (`arrived`, the kernel's receive stamp), when its thread had read it (`t0`, from which the delays count), and
when it began writing each chunk (`sent`, seconds after t0, with its `kinds`), all on the monotonic clock
(CLOCK_MONOTONIC, the one `time.perf_counter` reads, the same in every process of the machine).

The behaviour is chosen by the first path segment, `mode,key=value,...`:

    http://127.0.0.1:PORT/ok,first=0.3,gap=0.02,tokens=10/v1/chat/completions

so that `/v1/models` and `/props` under the same prefix behave the same way.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from factreg import clock
from factreg.measure import arrival

DEFAULTS: dict[str, Any] = {
    "first": None,  # seconds after the request to the first answer token (default: think + gap, else 0.05)
    "gap": 0.01,  # seconds between answer tokens
    "tokens": 5,  # answer tokens
    "think": 0.0,  # seconds of reasoning before the answer
    "thinkgap": 0.02,  # seconds between reasoning tokens
    "tags": 0,  # 1: reasoning inside `content` between <think> and </think>
    "key": "reasoning_content",  # the delta field that carries reasoning
    "role": 1,  # 1: a role-only first chunk right away
    "done": 1,  # 0: no data: [DONE]
    "usage": 1,
    "model": "fault-model",
    "fp": "b4242-abcdef0",
    "cache_n": 0,
    "garbage": 0,  # 1: garbage lines between the chunks
    "fast": 0,  # the first `fast` chat requests after start are `fastdiv` times faster (warm-graph effect)
    "fastdiv": 5.0,
    "after": 2,  # disconnect/stall: after this many answer tokens
    "status": 0,  # answer every route with this HTTP status
    "auth": 0,  # 1: require `Authorization: Bearer <server.token>`
    "mb": 50,  # huge: megabytes to stream
    "perstream": 0.0,  # seconds added to the first token per other stream in flight (a server that saturates)
    "slowat": 0,  # a server that falls over at a load: with this many streams in flight (0: never) ...
    "slowfirst": 1.5,  # ... the first answer token comes this many seconds after the request instead
    "busy": 0,  # /metrics: this many requests of somebody else's besides the ones in flight here
    "metrics": 1,  # 0: /metrics answers 501 (llama-server without --metrics)
    "keep": 0,  # 1: keep the connection alive after a stream (no `Connection: close`), as vLLM and SGLang do
}


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_spec(segment: str) -> tuple[str, dict[str, Any]]:
    """`"ok,first=0.3,gap=0.02"` → ("ok", parameters over the defaults)."""
    mode, *pairs = segment.split(",")
    params = dict(DEFAULTS)
    for pair in pairs:
        key, value = pair.split("=", 1)
        params[key] = _value(value)
    return mode, params


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog is 5: with 16 streams connecting at once and the accept thread waiting for the
    # interpreter lock, connections overflow it and wait a SYN retransmit (1 s) — the client's queueing, not the
    # server's. Real servers listen with a long backlog (llama-server: the system's maximum).
    request_queue_size = 128

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.stopping = threading.Event()
        self.token = "fault-server-token-0123456789"
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []
        self.inflight = 0
        self.active: list[dict[str, Any]] = []  # the chat requests in flight (`peak`: most in flight while each ran)
        # Parameters forced on every route, e.g. {"status": 401}: the same URL changes behaviour (a reassigned host).
        self.override: dict[str, Any] = {}

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-stream is part of the tests, not an error

    @property
    def port(self) -> int:
        return self.server_address[1]

    def url(self, spec: str = "ok", path: str = "/v1/chat/completions") -> str:
        return f"http://127.0.0.1:{self.port}/{spec}{path}"


class _StampedReader(io.RawIOBase):
    """The connection's reads made by `recvmsg`, keeping the kernel's receive stamp of the latest one's last packet
    (monotonic nanoseconds): when a request arrived, whatever this thread was doing then."""

    def __init__(self, sock: socket.socket):
        super().__init__()
        self.sock = sock
        self.offset = clock.realtime_offset_ns() if arrival.enable(sock) else None
        self.stamp_ns: int | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.offset is None:
            return self.sock.recv_into(buffer)
        n, ancillary, _flags, _addr = self.sock.recvmsg_into([buffer], socket.CMSG_SPACE(16))
        stamp = arrival.stamp_of(ancillary)
        if stamp is not None:
            self.stamp_ns = stamp - self.offset
        return n


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FaultServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stderr
        pass

    def setup(self) -> None:
        super().setup()
        # Each small write goes out at once: without TCP_NODELAY a JSON answer's body (written after its headers)
        # waits for the client's delayed ACK, ~40 ms on a kept-alive connection (Nagle), and a stream's chunk can
        # wait behind the one before it.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The request's arrival from the kernel's stamps, for a benchmark's reference (`arrived` in the log).
        self.rfile.close()
        self.raw_in = _StampedReader(self.connection)
        self.rfile = io.BufferedReader(self.raw_in)

    # ------------------------------------------------------------ routing

    def _route(self) -> tuple[str, dict[str, Any], str] | None:
        parts = self.path.split("?", 1)[0].split("/", 2)
        if len(parts) < 3:
            self._json(404, {"error": {"code": 404, "message": "no such route", "type": "not_found_error"}})
            return None
        mode, params = parse_spec(parts[1])
        params.update(self.server.override)
        return mode, params, "/" + parts[2]

    def _precheck(self, params: dict[str, Any]) -> bool:
        status = int(params["status"])
        if status:
            self._json(
                status, {"error": {"code": status, "message": f"injected status {status}", "type": "server_error"}}
            )
            return False
        if params["auth"] and self.headers.get("Authorization") != f"Bearer {self.server.token}":
            self._json(401, {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}})
            return False
        return True

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/metrics":
            return self._metrics()
        route = self._route()
        if route is None:
            return
        mode, params, path = route
        if mode == "redirect":
            return self._redirect(path)
        if not self._precheck(params):
            return
        if path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": params["model"], "object": "model"}]})
        elif path == "/props":
            self._json(200, {"build_info": params["fp"], "model_path": f"/models/{params['model']}.gguf"})
        elif path == "/health":
            self._json(200, {"status": "ok"})
        elif path == "/log":  # what it sent and when (its monotonic clock), for a benchmark in another process
            with self.server.lock:
                log = [{k: r[k] for k in ("id", "t0", "arrived", "sent", "kinds")} for r in self.server.requests]
            self._json(200, log)
        else:
            self._json(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})

    def _metrics(self) -> None:
        """`/metrics` at the root, as `llama-server --metrics` serves it: the requests in flight here plus
        `busy` other ones (an override: somebody else's traffic); `metrics=0` answers 501 as llama-server does
        without the flag."""
        params = {**DEFAULTS, **self.server.override}
        if not int(params.get("metrics", 1)):
            return self._json(501, {"error": {"code": 501, "message": "This server does not support metrics "
                                              "endpoint.", "type": "not_supported_error"}})
        with self.server.lock:
            processing = self.server.inflight + int(params.get("busy", 0))
        text = ("# HELP llamacpp:requests_processing Number of requests processing.\n"
                "# TYPE llamacpp:requests_processing gauge\n"
                f"llamacpp:requests_processing {processing}\n"
                "# HELP llamacpp:requests_deferred Number of requests deferred.\n"
                "# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path == "/override":  # a stand-in in another process changes behaviour: {"gap": 0.05, "busy": 3}
            with contextlib.suppress(ValueError, TypeError):
                self.server.override.update(dict(json.loads(raw)))
            return self._json(200, dict(self.server.override))
        t0 = time.perf_counter()  # injected delays count from the whole request's arrival
        # When its last packet reached the socket (kernel stamp; else t0): t0 is late when this thread was.
        arrived = t0 if self.raw_in.stamp_ns is None else min(t0, self.raw_in.stamp_ns / 1e9)
        route = self._route()
        if route is None:
            return
        mode, params, path = route
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self.server.lock:
            key = self.path.split("/")[1]
            self.server.counts[key] = self.server.counts.get(key, 0) + 1
            index = self.server.counts[key]
            record = {
                "mode": mode, "body": body, "headers": dict(self.headers), "index": index, "t0": t0, "sent": [],
                "arrived": arrived,
                "id": f"chatcmpl-fault-{len(self.server.requests)}", "kinds": [],
            }
            self.server.requests.append(record)
        if mode == "redirect":
            return self._redirect(path)
        if not self._precheck(params):
            return
        if path != "/v1/chat/completions":
            return self._json(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})
        if mode == "json":
            return self._json(200, {"choices": [{"message": {"role": "assistant", "content": "hi"}}]})
        with self.server.lock:
            self.server.inflight += 1
            others = self.server.inflight - 1
            record["peak"] = self.server.inflight
            for other in self.server.active:
                other["peak"] = max(other["peak"], self.server.inflight)
            self.server.active.append(record)
        try:
            if int(params["slowat"]):
                self._saturate(params, t0, record)
            params["first"] = (
                float(params["first"]) + float(params["perstream"]) * others
                if params["first"] is not None and params["perstream"]
                else params["first"]
            )
            self._stream(mode, params, body if isinstance(body, dict) else {}, t0, index, record)
        finally:
            with self.server.lock:
                self.server.inflight -= 1
                self.server.active.remove(record)

    def _saturate(self, params: dict[str, Any], t0: float, record: dict[str, Any]) -> None:
        """`slowat=N`: a server that holds up to N−1 streams and falls over at N. The request decides when its
        first token is due (`first`, default 0.05 s): if N or more streams were in flight at any moment since it
        arrived, its first token comes at `slowfirst` instead. Deciding then, not on arrival, lets the streams a
        client opens together see each other, so the level at which it degrades does not hang on thread timing."""
        due = float(params["first"]) if params["first"] is not None else 0.05
        self._wait_until(t0 + due)
        if record["peak"] >= int(params["slowat"]):
            params["first"] = max(due, float(params["slowfirst"]))

    # ------------------------------------------------------------ answers

    def _json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, path: str) -> None:
        self.send_response(307)
        self.send_header("Location", f"http://elsewhere.invalid:8080{path}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _wait_until(self, deadline: float) -> None:
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or self.server.stopping.is_set():
                return
            if remaining > 0.03:
                self.server.stopping.wait(remaining - 0.02)
            else:
                time.sleep(remaining)

    def _stream(self, mode: str, p: dict[str, Any], body: dict[str, Any], t0: float, index: int, record: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        keep = bool(int(p["keep"])) and mode not in ("disconnect", "stall", "huge")
        if not keep:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = not keep
        base = {
            "id": record["id"],
            "object": "chat.completion.chunk",
            "created": 0,
            "model": p["model"],
            "system_fingerprint": p["fp"],
        }

        def event(delta: dict[str, Any] | None = None, finish: str | None = None, extra: dict[str, Any] | None = None) -> bytes:
            choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
            return b"data: " + json.dumps({**base, "choices": choices, **(extra or {})}).encode() + b"\n\n"

        def send(data: bytes, kind: str = "other") -> None:
            # The time is taken as the write begins: a client's arrival time is never before it.
            record["sent"].append(time.perf_counter() - t0)
            record["kinds"].append(kind)
            self._chunk(data)
            if p["garbage"]:
                self._chunk(b"this is not an event\ndata: {broken json\n: keep-alive comment\n\n")

        if mode == "huge":
            return self._huge(p, event)
        limit = int(body.get("max_tokens") or 10**9)
        speed = float(p["fastdiv"]) if index <= int(p["fast"]) else 1.0
        think, thinkgap, gap = float(p["think"]) / speed, float(p["thinkgap"]) / speed, float(p["gap"]) / speed
        first = float(p["first"]) / speed if p["first"] is not None else (think + gap if think else 0.05 / speed)
        if p["role"]:
            send(event({"role": "assistant", "content": None}))
        plan: list[tuple[float, str, str, bool]] = []
        if think:
            t = thinkgap
            if p["tags"]:
                plan.append((t, "content", "<think>", False))
            while t < think:
                plan.append((t, "content" if p["tags"] else p["key"], "hmm ", False))
                t += thinkgap
            if p["tags"]:
                plan.append((t, "content", "</think>\n\n", False))
        for i in range(int(p["tokens"])):
            plan.append((first + i * gap, "content", f"tok{i} ", True))
        emitted = answered = 0
        for at, key, text, is_answer in plan:
            if emitted >= limit:
                break
            self._wait_until(t0 + at)
            if mode == "nonutf8" and answered == 1:
                self._chunk(b'data: {"choices":[{"index":0,"delta":{"content":"\xff\xfe bad"}}]}\n\n')
            send(event({key: text}), "answer" if is_answer else "reasoning")
            emitted += 1
            answered += is_answer
            if mode in ("disconnect", "stall") and answered >= int(p["after"]):
                if mode == "stall":
                    self.server.stopping.wait(120)
                self.connection.shutdown(socket.SHUT_RDWR)
                return
        timings = {
            "cache_n": int(p["cache_n"]),
            "prompt_n": 10,
            "prompt_ms": 5.0,
            "predicted_n": emitted,
            "predicted_ms": 1000.0 * (plan[min(emitted, len(plan)) - 1][0] if plan else 0),
        }
        send(event({}, "length" if emitted >= limit else "stop", {"timings": timings}))
        if p["usage"]:
            send(
                event(
                    None,
                    None,
                    {"usage": {"prompt_tokens": 10, "completion_tokens": emitted, "total_tokens": 10 + emitted}},
                )
            )
        if p["done"]:
            send(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _huge(self, p: dict[str, Any], event: Any) -> None:
        line = event({"content": "x" * 2000})
        total = int(p["mb"]) * 1024 * 1024
        sent = 0
        try:
            self._chunk(event({"role": "assistant", "content": None}))
            while sent < total and not self.server.stopping.is_set():
                block = line * 32
                self._chunk(block)
                sent += len(block)
            self._chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass


@contextmanager
def running() -> Iterator[FaultServer]:
    """A started fault server; stopped (and every stalled handler released) on exit."""
    server = FaultServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def main() -> None:
    """Serve in a process of its own (benchmarks: no shared GIL with the probe); print the port, run until killed."""
    server = FaultServer()
    print(server.port, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
