"""A raw HTTP/1.1 server on 127.0.0.1 for the probe's tests: it answers each request with the bytes a test
scripts, written in pieces, so replies can be framed (or broken) in ways a real server does not do on demand."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

# answer(n, on_connection): the pieces to write for the n-th request overall (1-based), which is the
# on_connection-th on its connection; None closes the connection without a byte of answer.
Answer = Callable[[int, int], "list[bytes] | None"]


class RawServer:
    """Serves every connection in a thread of its own; keeps each request's bytes in `requests`."""

    def __init__(self, answer: Answer, close_after: bool = True):
        self.answer, self.close_after = answer, close_after
        self.requests: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        # a client that stops reading or resets the connection (it refused the reply): nothing left to answer
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._serve_connection(conn)

    def _serve_connection(self, conn: socket.socket) -> None:
        with conn:
            buf, count = b"", 0
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = next(
                    (int(ln.split(b":")[1]) for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")), 0
                )
                while len(buf) < length:
                    buf += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + buf[:length])
                buf = buf[length:]
                count += 1
                pieces = self.answer(len(self.requests), count)
                if pieces is None:
                    return  # close without a byte of answer
                for piece in pieces:
                    conn.sendall(piece)
                if self.close_after:
                    return

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/chat/completions"

    def close(self) -> None:
        self.listener.close()
