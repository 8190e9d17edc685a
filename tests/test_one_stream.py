"""One streamed request (issue 33): every streamed POST factreg sends — the sequential probe's over `http://` and
`https://`, the identity check's 1-token request, each request of a load run — is written by one function,
`stream.Exchange._open`, and read, timed, bounded by its deadline and judged by the one exchange around it
(`stream.astream_request`). Before, the same request was written three times (a sync httpx path with a watchdog
thread, the lean client's exchange and an async httpx exchange), each with its own deadline and failure mapping.

The source test reads factreg's code (every module, by its syntax tree); the others count what the one function
really sent against what the probe reports, over real stand-in servers on 127.0.0.1 (one of them speaking TLS).
"""

from __future__ import annotations

import ast
import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import factreg
from factreg.demo import standin
from factreg.measure import http, stream
from factreg.measure import probe as core

PACKAGE = Path(factreg.__file__).parent
BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}]}
ONE = "factreg/measure/stream.py::Exchange._open"


# ---------------------------------------------------------------- in the source


def _opens(call: ast.Call) -> str | None:
    """What a call does to send a streamed request, or None: raw request bytes for a socket, httpx's `stream` with
    an HTTP method other than GET (GitPython's `odb.stream(sha)` is no request), `send(..., stream=True)`, a POST
    request built for sending."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    first = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None
    if name == "request_head":
        return "raw request bytes"
    if name == "stream" and isinstance(first, str) and first.upper() != "GET":
        return f"client.stream({first!r})"
    if name == "send" and any(k.arg == "stream" for k in call.keywords):
        return "send(stream=True)"
    if name == "build_request" and first == "POST":
        return "build_request('POST')"
    return None


class _Calls(ast.NodeVisitor):
    """Per function (module::Class.function), what it calls by name, and what it does to send a streamed request."""

    def __init__(self, module: str):
        self.module = module
        self.scope: list[str] = []
        self.calls: dict[str, set[str]] = {}
        self.opens: dict[str, list[str]] = {}

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._function(node)  # type: ignore[arg-type]

    def visit_Call(self, node: ast.Call) -> None:
        where = f"{self.module}::{'.'.join(self.scope)}"
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        self.calls.setdefault(where, set()).add(name)
        what = _opens(node)
        if what is not None:
            self.opens.setdefault(where, []).append(what)
        self.generic_visit(node)


def _read_package() -> _Calls:
    every = _Calls("")
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE.parent).as_posix()
        seen = _Calls(module)
        seen.visit(ast.parse(path.read_text(encoding="utf-8")))
        every.calls.update(seen.calls)
        every.opens.update(seen.opens)
    return every


def test_one_function_in_factreg_sends_a_streamed_request() -> None:
    opens = _read_package().opens
    assert list(opens) == [ONE], opens
    # Both clients, in that one function: the lean one's raw request for http://, httpx's for any other URL.
    assert sorted(opens[ONE]) == ["build_request('POST')", "raw request bytes", "send(stream=True)"]


def test_the_probe_the_identity_check_and_load_runs_all_reach_it() -> None:
    calls = _read_package().calls
    # Who sends what: each caller's request is the one exchange, from async code or through the sync client.
    assert "astream_request" in calls["factreg/measure/load.py::run.one"]
    assert "stream_request" in calls["factreg/measure/probe.py::_one_at_a_time"]
    assert "stream_request" in calls["factreg/measure/identity.py::check_identity"]
    assert "request" in calls["factreg/measure/stream.py::stream_request"]
    assert "astream_request" in calls["factreg/measure/stream.py::OneAtATime.request"]
    assert {"Exchange", "run", "finish"} <= calls["factreg/measure/stream.py::astream_request"]
    assert "_open" in calls["factreg/measure/stream.py::Exchange.run"]
    # The exchange is made in one place, so its deadline, failure mapping and retry are the only ones.
    makers = sorted(where for where, names in calls.items() if "Exchange" in names)
    assert makers == ["factreg/measure/stream.py::astream_request"]
    gone = {"_wire_exchange", "_httpx_exchange", "_Exchange"}
    assert not [where for where, names in calls.items() if names & gone]


# ---------------------------------------------------------------- on the wire


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URL of every request the one function sent."""
    urls: list[str] = []
    real = stream.Exchange._open

    async def counted(self: stream.Exchange, client: Any) -> Any:
        urls.append(self.url)
        return await real(self, client)

    monkeypatch.setattr(stream.Exchange, "_open", counted)
    return urls


@pytest.fixture(scope="module")
def server() -> Iterator[standin.FaultServer]:
    with standin.running() as srv:
        yield srv


def _tls_pair(tmp: Path) -> tuple[Path, Path, bytes]:
    """A self-signed certificate for 127.0.0.1 and its key, written to `tmp`, and the certificate's PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    start = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)  # fixed: the test reads no clock
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(1).not_valid_before(start).not_valid_after(start + datetime.timedelta(days=365 * 80))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    (tmp / "cert.pem").write_bytes(pem)
    (tmp / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ))
    return tmp / "cert.pem", tmp / "key.pem", pem


@pytest.fixture
def tls_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[standin.FaultServer]:
    """The stand-in behind TLS, and factreg's clients trusting its certificate (and only it)."""
    cert, key, pem = _tls_pair(tmp_path)
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    trusted = ssl.create_default_context(cadata=pem.decode("ascii"))
    monkeypatch.setattr(http, "tls_context", lambda: trusted)
    with standin.running() as srv:
        srv.socket = served.wrap_socket(srv.socket, server_side=True)
        yield srv


def test_a_sequential_probe_over_http_sends_every_request_through_it(server, sent) -> None:
    url = server.url("ok,first=0.01,tokens=3,model=one")
    result = core.probe(core.ProbeSpec(url=url, body=dict(BODY), n=3, warmup=1, min_uptime=0), hostname="h")
    assert result.verdict == "ok", result.message
    assert [r.kind for r in result.requests] == ["identity", "warmup", "measured", "measured", "measured"]
    assert sent == [url] * 5
    assert all(r.connected is not None for r in result.requests)  # a connection each: ttft includes set-up


def test_a_sequential_probe_over_https_sends_every_request_through_it(tls_server, sent) -> None:
    url = tls_server.url("ok,first=0.01,tokens=3,model=tls").replace("http://", "https://")
    result = core.probe(core.ProbeSpec(url=url, body=dict(BODY), n=2, warmup=1, min_uptime=0), hostname="h")
    assert result.verdict == "ok", result.message
    assert result.observed["model"] == "tls"
    assert [r.kind for r in result.requests] == ["identity", "warmup", "measured", "measured"]
    assert sent == [url] * 4
    assert all(r.connected is not None for r in result.requests)  # one connection per request over TLS too
    assert all(r.arrival_clock == "user" for r in result.requests)  # TLS reads happen inside OpenSSL
    assert all(r.metrics()["ttft"] >= 0.01 for r in result.requests if r.kind == "measured")


def test_an_https_stream_that_stalls_ends_at_the_one_deadline(tls_server, sent) -> None:
    url = tls_server.url("stall,after=1").replace("http://", "https://")
    with http.make_client(0.5, keepalive=False) as client, pytest.raises(stream.ProbeFailure) as failed:
        stream.stream_request(client, url, {}, BODY, 0.5)
    assert sent == [url]
    assert failed.value.verdict in ("error", "unreachable"), failed.value.message
    assert "0.5 s" in failed.value.message


def test_a_load_run_sends_every_request_through_it(server, sent) -> None:
    url = server.url("ok,first=0.01,tokens=2,model=load")
    result = core.probe(
        core.ProbeSpec(url=url, body=dict(BODY), n=4, warmup=1, concurrency=2, min_uptime=0), hostname="h"
    )
    assert result.verdict == "ok", result.message
    assert sorted(r.kind for r in result.requests) == ["identity", "measured", "measured", "measured", "measured",
                                                       "warmup"]
    assert sent == [url] * 6
