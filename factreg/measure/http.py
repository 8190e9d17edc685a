"""The one HTTP client factory: time-outs always set, redirects never followed, factreg's user agent."""

from __future__ import annotations

import importlib.util
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from factreg import __version__

if TYPE_CHECKING:  # httpx is imported lazily so that `factreg show` stays fast
    import httpx

USER_AGENT = f"factreg/{__version__}"


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
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
        limits=limits,
        trust_env=False,
        mounts=_stamped_mounts(httpx.HTTPTransport(limits=limits), sync=True),
    )


def remember_missing_sniffio() -> None:
    """Make a failed `import sniffio` cost a dictionary look-up instead of a search of every path entry.

    httpcore asks `import sniffio` each time it sets up an async lock (several times per request); anyio ≥ 4
    no longer installs sniffio, and a failed import is not cached, so each ask walked sys.path (~0.3 ms, 1.7 ms
    of CPU per request under load). A `None` in sys.modules gives the same ImportError at once. Nothing changes
    where sniffio is installed."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


def make_async_client(timeout: float) -> httpx.AsyncClient:
    """The asyncio twin of `make_client` for load runs: same rules, keep-alive on, the pool unbounded (the load
    decides how many requests are in flight, not the client)."""
    import httpx

    remember_missing_sniffio()

    if not timeout or timeout <= 0:
        raise ValueError("a time-out must be positive")
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
        limits=limits,
        trust_env=False,
        mounts=_stamped_mounts(httpx.AsyncHTTPTransport(limits=limits), sync=False),
    )


def _stamped_mounts(transport: Any, *, sync: bool) -> dict[str, Any]:
    """`http://` through a transport whose connections keep the kernel's arrival stamp of every read
    (`measure/arrival.py`); `https://` keeps httpx's own (TLS reads happen inside OpenSSL). Empty (httpx's own
    transport everywhere, arrival times on the user-space clock) when httpx's transport is not built as expected."""
    import httpcore

    from factreg.measure import arrival

    pool = getattr(transport, "_pool", None)
    expected = httpcore.SyncBackend if sync else httpcore.AsyncNetworkBackend
    if not isinstance(getattr(pool, "_network_backend", None), expected):
        return {}
    pool._network_backend = arrival.StampingBackend() if sync else arrival.AsyncStampingBackend()  # type: ignore[union-attr]
    return {"http://": transport}


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
