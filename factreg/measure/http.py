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
    """
    import httpx

    if not timeout or timeout <= 0:
        raise ValueError("a time-out must be positive")
    limits = httpx.Limits(max_keepalive_connections=None if keepalive else 0)
    return httpx.Client(
        verify=tls_context(),
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
        limits=limits,
        trust_env=False,
        mounts=_stamped_mounts(httpx.HTTPTransport(verify=tls_context(), limits=limits)),
    )


def remember_missing_sniffio() -> None:
    """Make a failed `import sniffio` cost a dictionary look-up instead of a search of every path entry.

    httpcore asks `import sniffio` each time it sets up an async lock (several times per request); anyio ≥ 4
    no longer installs sniffio, and a failed import is not cached, so each ask walked sys.path (~0.3 ms, 1.7 ms
    of CPU per request under load). A `None` in sys.modules gives the same ImportError at once. Nothing changes
    where sniffio is installed."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]  # None: import fails at once (typeshed: no None)


def make_async_client(timeout: float) -> wire.Pool:
    """The client of load runs: `http://` through the lean HTTP/1.1 client of `measure/wire.py` (kept-alive
    connections, kernel arrival stamps, a fraction of httpx's CPU per read), anything else through
    `make_httpx_async_client`, made on first use. Same rules: no redirect followed, nothing from the environment,
    factreg's user agent; the load run puts one deadline on each whole request."""
    from factreg.measure import wire

    if not timeout or timeout <= 0:
        raise ValueError("a time-out must be positive")
    return wire.Pool(timeout, fallback=make_httpx_async_client)


def make_httpx_async_client(timeout: float) -> httpx.AsyncClient:
    """The asyncio twin of `make_client` for the load runs' `https://` URLs: same rules, keep-alive on, the pool
    unbounded (the load decides how many requests are in flight, not the client)."""
    import httpx

    remember_missing_sniffio()

    if not timeout or timeout <= 0:
        raise ValueError("a time-out must be positive")
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    return httpx.AsyncClient(
        verify=tls_context(),
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
        limits=limits,
        trust_env=False,
    )


def _stamped_mounts(transport: Any) -> dict[str, Any]:
    """`http://` through a transport whose connections keep the kernel's arrival stamp of every read
    (`measure/arrival.py`); `https://` keeps httpx's own (TLS reads happen inside OpenSSL). Empty (httpx's own
    transport everywhere, arrival times on the user-space clock) when httpx's transport is not built as expected."""
    import httpcore

    from factreg.measure import arrival

    pool = getattr(transport, "_pool", None)
    if pool is None or not isinstance(getattr(pool, "_network_backend", None), httpcore.SyncBackend):
        return {}
    pool._network_backend = arrival.StampingBackend()
    return {"http://": transport}


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
