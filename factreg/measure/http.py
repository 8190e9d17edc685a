"""The one HTTP client factory: time-outs always set, redirects never followed, factreg's user agent."""

from __future__ import annotations

import functools
import importlib.util
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from factreg import __version__

if TYPE_CHECKING:  # httpx (and ssl) are imported lazily so that `factreg show` stays fast
    import ssl

    import httpx

    from factreg.measure import wire

USER_AGENT = f"factreg/{__version__}"
# Every request asks for replies as they are: a compressed reply would be inflated before any size cap applies
# (64 KiB of gzip is 64 MB of zeros), and a probe times bytes as the server sent them.
ACCEPT_ENCODING = "identity"


def skip_httpx_command_line() -> None:
    """Keep httpx from importing its command-line client whenever httpx itself is imported.

    `import httpx` imports `httpx._main` (rich, pygments, click) only to offer `httpx.main`, which factreg never
    calls: 20–35 ms of CPU at the start of every command that talks HTTP. A None in sys.modules makes that import
    fail at once, and httpx then defines its own stand-in `main` (its fallback for a missing `httpx[cli]` extra).
    Nothing changes once httpx is imported."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: import fails at once


skip_httpx_command_line()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context for the process (certifi's roots, as httpx's default): httpx otherwise loads the
    roots again for every client and transport, about 17 ms each."""
    import httpx

    return httpx.create_ssl_context()


def make_client(timeout: float, *, keepalive: bool = True) -> httpx.Client:
    """An httpx client with every time-out set to `timeout` seconds and redirects off.

    Redirects are never followed: a 3xx answer reaches the caller, which reports it with the Location host
    (credentials must not travel to another host). Nothing comes from the environment (`trust_env=False`): an
    `HTTP_PROXY`/`ALL_PROXY` would otherwise receive every request with its Authorization header, and a `.netrc`
    would add credentials nobody asked for. `keepalive=False` opens one connection per request, as
    curl does, so that time to first byte includes connection set-up.

    Its streamed requests (`stream.stream_request`) go through `make_async_client`'s client with the same
    keep-alive rule, on one event loop of its own, made on first use and closed with it.
    """
    options = _options(timeout, keepalive=keepalive, bounded=True)
    client: httpx.Client = _client_class()((timeout, keepalive), **options)
    return client


def make_async_client(timeout: float, *, keepalive: bool = True) -> wire.Pool:
    """The client of streamed requests: `http://` through the lean HTTP/1.1 client of `measure/wire.py` (kernel
    arrival stamps, a fraction of httpx's CPU per read), anything else through httpx's asyncio client with
    `make_client`'s rules, made on first use. Same rules: no redirect followed, nothing from the environment,
    factreg's user agent; `stream.astream_request` puts one deadline on each whole request. `keepalive=False`
    opens a connection per request (the sequential probe); with it on (load runs) the pool is unbounded: the load
    decides how many requests are in flight, not the client."""
    from factreg.measure import wire

    _options(timeout, keepalive=keepalive, bounded=False)  # the same checks, before anything is made

    def fallback(timeout: float) -> httpx.AsyncClient:
        import httpx

        remember_missing_sniffio()
        return httpx.AsyncClient(**_options(timeout, keepalive=keepalive, bounded=False))

    return wire.Pool(timeout, keepalive=keepalive, fallback=fallback)


def _options(timeout: float, *, keepalive: bool, bounded: bool) -> dict[str, Any]:
    """What every httpx client of factreg is made with (`make_client`, `make_async_client`'s `https://` one)."""
    import httpx

    if not timeout or timeout <= 0:
        raise ValueError("a time-out must be positive")
    keep = None if keepalive else 0
    limits = httpx.Limits(max_keepalive_connections=keep) if bounded else httpx.Limits(
        max_connections=None, max_keepalive_connections=keep
    )
    return {
        "verify": tls_context(),
        "timeout": httpx.Timeout(timeout),
        "follow_redirects": False,
        "headers": {"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
        "limits": limits,
        "trust_env": False,
    }


@functools.cache
def _client_class() -> Any:
    """httpx's client with room for its streamed requests (made here: httpx is imported on first use)."""
    import httpx

    class Client(httpx.Client):
        def __init__(self, stream_rule: tuple[float, bool], **options: Any):
            super().__init__(**options)
            self.stream_rule = stream_rule  # (time-out, keep-alive): how `stream.streams_of` makes its streams
            self.streams: Any = None

        def close(self) -> None:
            self._close_streams()
            super().close()

        def __exit__(self, *exc: Any) -> None:  # httpx's own does not call `close`
            self._close_streams()
            super().__exit__(*exc)

        def _close_streams(self) -> None:
            if self.streams is not None:
                self.streams.close()
                self.streams = None

    return Client


def remember_missing_sniffio() -> None:
    """Make a failed `import sniffio` cost a dictionary look-up instead of a search of every path entry.

    httpcore asks `import sniffio` each time it sets up an async lock (several times per request); anyio ≥ 4
    no longer installs sniffio, and a failed import is not cached, so each ask walked sys.path (~0.3 ms, 1.7 ms
    of CPU per request under load). A `None` in sys.modules gives the same ImportError at once. Nothing changes
    where sniffio is installed."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]  # None: import fails at once (typeshed: no None)


def unasked_encoding(content_encoding: str | None) -> str | None:
    """The Content-Encoding of a reply when it is one factreg did not ask for (anything but `identity`), else None.

    Such a reply is refused, never inflated: every body is read as the bytes that came (httpx's `iter_raw`, the
    lean client's reads), so no read is larger than the network's, whatever a server compresses."""
    coding = (content_encoding or "").strip().lower()
    return None if coding in ("", ACCEPT_ENCODING) else coding[:40]


def redirect_message(status: int, location: str | None, url: str) -> str:
    """One line naming where a 3xx answer pointed, without following it."""
    if not location:
        return f"HTTP {status} redirect without a Location; not followed"
    target = urlsplit(location)
    here = urlsplit(url)
    host = target.hostname or here.hostname or "?"
    if target.hostname and (target.hostname, target.port) != (here.hostname, here.port):
        return f"HTTP {status} redirect to another host ({host}); not followed, credentials stay here"
    return f"HTTP {status} redirect to {target.path or '/'} on the same host; not followed, probe that URL instead"


def where(url: str) -> str:
    """host[:port]/path of `url`, as failure messages name an endpoint (never its query or credentials)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}{parts.path}" if parts.port else f"{parts.hostname}{parts.path}"


def encoding_message(url: str, coding: str) -> str:
    """Why a compressed reply is refused."""
    return (f"{where(url)} answered with Content-Encoding {coding!r} though factreg asked for {ACCEPT_ENCODING}: "
            "refused, not inflated")
