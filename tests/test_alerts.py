"""`verify --notify` against real local receivers: an HTTP server on 127.0.0.1 (one JSON message per changing run,
none for an unchanged one, the message of a run it missed while down delivered by the next), an SMTP server
(aiosmtpd) that requires STARTTLS with a self-signed certificate made here, and a command reading stdin. A failing
receiver leaves the exit code and the records as they are without --notify; a probe header's token is in no
message."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import socket
import sqlite3
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ago


class Hook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.got.append({"headers": dict(self.headers), "body": json.loads(body)})  # type: ignore[attr-defined]
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Receiver(ThreadingHTTPServer):
    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Hook)
        self.got: list[dict[str, Any]] = []
        self.status = 200
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hooks/factreg"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    srv = Receiver()
    yield srv
    srv.stop()


def configure(isolated: Path, text: str) -> None:
    (isolated / ".factreg").mkdir(exist_ok=True)
    (isolated / ".factreg" / "config.toml").write_text(text, encoding="utf-8")


def stale_fact(cli, fid: str) -> None:  # type: ignore[no-untyped-def]
    """A fact measured 200 days ago, without a method: unverifiable (nothing can re-measure it) by time alone."""
    r = cli("record", fid, "-m", "ttft", "--value", "0.4", "-c", "model=m", "-c", "endpoint=e",
            "--measured-at", ago(days=200))
    assert r.exit_code == 0, r.stderr


def records(db_path: Path) -> list[Any]:
    """The registry's records: every fact version and verification (what --notify must never change)."""
    with sqlite3.connect(db_path) as conn:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in ("fact_version", "verification")]


def test_one_json_message_per_changing_run_and_none_for_an_unchanged_one(cli, receiver, isolated) -> None:
    configure(isolated, f'[notify.webhook]\nurl = "{receiver.url}"\n')
    stale_fact(cli, "x/old")
    assert cli("record", "x/new", "-m", "ttft", "--value", "0.3", "-c", "model=m", "-c", "endpoint=e").exit_code == 0
    first = cli("verify", "--due", "--notify")
    assert len(receiver.got) == 1, first.stderr
    body = receiver.got[0]["body"]
    assert receiver.got[0]["headers"]["Content-Type"] == "application/json"
    assert "x/old: unverifiable" in body["text"] and "factreg method x/old" in body["text"]  # the command to act
    assert "x/new" not in body["text"] and [c["name"] for c in body["changes"]] == ["x/old"]
    assert "notify: delivered 1 message(s): webhook" in first.stderr

    unchanged = cli("verify", "--due", "--notify")
    assert len(receiver.got) == 1 and "nothing changed since the last message; nothing sent" in unchanged.stderr
    always = cli("verify", "--due", "--notify-always")
    assert len(receiver.got) == 2 and "nothing changed" in receiver.got[1]["body"]["text"]

    stale_fact(cli, "x/older")  # a new change: one message, with only what changed
    cli("verify", "--due", "--notify")
    assert len(receiver.got) == 3 and [c["name"] for c in receiver.got[2]["body"]["changes"]] == ["x/older"]
    assert first.exit_code == unchanged.exit_code == always.exit_code


def test_a_receiver_that_was_down_gets_the_message_at_the_next_run(cli, isolated, db_path) -> None:
    down = Receiver()
    port, url = down.server_address[1], down.url
    down.stop()  # nothing listens on the port now
    configure(isolated, f'[notify.webhook]\nurl = "{url}"\n')
    stale_fact(cli, "x/old")
    before = records(db_path)
    plain = cli("verify", "--due")
    failing = cli("verify", "--due", "--notify")
    assert failing.exit_code == plain.exit_code and failing.stdout == plain.stdout
    assert records(db_path) == before
    assert "notify: webhook failed:" in failing.stderr and "kept in the outbox" in failing.stderr
    assert "Traceback" not in failing.stderr
    up = Receiver(port)
    try:
        later = cli("verify", "--due", "--notify")  # nothing changed since: only the queued message goes
        assert len(up.got) == 1 and "x/old: unverifiable" in up.got[0]["body"]["text"], later.stderr
        assert later.exit_code == plain.exit_code
        cli("verify", "--due", "--notify")
        assert len(up.got) == 1  # delivered once, not again
        up.status = 500  # a receiver that answers an error: reported and queued like one that is down
        stale_fact(cli, "x/older")
        answered = cli("verify", "--due", "--notify")
        assert "HTTP 500" in answered.stderr and answered.exit_code == plain.exit_code
    finally:
        up.stop()


def test_a_command_gets_the_message_on_stdin_and_a_failing_one_changes_nothing(cli, isolated, db_path) -> None:
    out = isolated / "message.txt"
    write = f"import sys; open({str(out)!r}, 'w').write(sys.stdin.read())"
    configure(isolated, f"[notify.command]\nargv = {json.dumps([sys.executable, '-c', write])}\n")
    stale_fact(cli, "x/old")
    r = cli("verify", "--due", "--notify")
    assert "x/old: unverifiable" in out.read_text() and "to act:" in out.read_text(), r.stderr
    fail = "import sys; sys.stdin.read(); sys.stderr.write('relay refused'); sys.exit(4)"
    configure(isolated, f"[notify.command]\nargv = {json.dumps([sys.executable, '-c', fail])}\n")
    stale_fact(cli, "x/older")
    before = records(db_path)
    failed = cli("verify", "--due", "--notify")
    assert failed.exit_code == r.exit_code and records(db_path) == before
    assert "command failed: [notify.command]" in failed.stderr and "exited 4: relay refused" in failed.stderr


def test_verify_notify_without_a_notifier_is_one_line_and_runs_nothing(cli, isolated) -> None:
    stale_fact(cli, "x/old")
    r = cli("verify", "--due", "--notify")
    assert r.exit_code == 2 and r.stderr.startswith("Error: --notify needs a notifier")
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


# ---------------------------------------------------------------- e-mail


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made now (cryptography), valid around the real date."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "factreg test SMTP")])
    day = dt.timedelta(days=1)
    start = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)  # no wall clock in tests: valid from 2000 to 2100
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(start + 36500 * day)
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class Mailbox:
    def __init__(self) -> None:
        self.mails: list[dict[str, Any]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.mails.append({"tls": session.ssl is not None, "login": session.login_data,
                           "from": envelope.mail_from, "to": list(envelope.rcpt_tos),
                           "content": envelope.content.decode("utf-8", "replace")})
        return "250 OK"


@pytest.fixture
def smtp_server(tmp_path: Path) -> Iterator[tuple[Any, Mailbox, Path]]:
    import ssl

    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    cert, key = self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    box = Mailbox()

    def auth(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = data.login == b"alerts" and data.password == b"pw-0123456789abcdef"
        return AuthResult(success=ok, handled=False)

    with socket.socket() as probe:  # a free port: aiosmtpd's controller connects to the port it was given
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(box, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
                            authenticator=auth, auth_require_tls=True)
    controller.start()
    try:
        yield controller, box, cert
    finally:
        controller.stop()


def test_an_email_over_starttls_reaches_a_local_smtp_server(cli, isolated, smtp_server, monkeypatch) -> None:
    controller, box, cert = smtp_server
    port = controller.port
    monkeypatch.setenv("ALERT_USER", "alerts")
    monkeypatch.setenv("ALERT_PASSWORD", "pw-0123456789abcdef")
    configure(isolated, f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\nfrom = "factreg@testhost"\n'
                        f'to = ["ops@example.invalid"]\nusername_env = "ALERT_USER"\npassword_env = "ALERT_PASSWORD"\n'
                        f'cafile = "{cert}"\n')
    stale_fact(cli, "x/old")
    r = cli("verify", "--due", "--notify")
    assert len(box.mails) == 1, r.stderr
    [mail] = box.mails
    assert mail["tls"] and mail["to"] == ["ops@example.invalid"] and mail["from"] == "factreg@testhost"
    assert "Subject: factreg on testhost: 1 change(s)" in mail["content"] and "x/old: unverifiable" in mail["content"]
    assert "pw-0123456789abcdef" not in mail["content"] + r.stderr + r.stdout
    # a server whose certificate is not trusted: refused before any credential is sent, kept for the next run
    configure(isolated, f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\nfrom = "factreg@testhost"\n'
                        f'to = ["ops@example.invalid"]\nusername_env = "ALERT_USER"\npassword_env = "ALERT_PASSWORD"\n')
    stale_fact(cli, "x/older")
    untrusted = cli("verify", "--due", "--notify")
    assert len(box.mails) == 1 and "smtp failed:" in untrusted.stderr and "CERTIFICATE_VERIFY_FAILED" in untrusted.stderr


# ---------------------------------------------------------------- secrets


def test_a_token_in_a_probe_header_is_in_no_message(cli, isolated, receiver, db_path, monkeypatch, tmp_path) -> None:
    from factreg.demo import standin

    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "any", "messages": [{"role": "user", "content": "hi"}]}))
    out = isolated / "message.txt"
    write = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read())"
    with standin.running() as server:
        token = server.token
        monkeypatch.setenv("MY_TOKEN", token)
        url = server.url("ok,auth=1,first=0.02,tokens=3,model=sec")
        r = cli("probe", url, "--body", str(body), "--n", "2", "--warmup", "0", "--header",
                "Authorization: Bearer ${MY_TOKEN}", "--record", "sec/p")
        assert r.exit_code == 0, r.stderr
        configure(isolated, f'[probe]\nallow_env = ["MY_TOKEN"]\n[notify.webhook]\nurl = "{receiver.url}?token='
                            f'{token}"\n[notify.command]\nargv = {json.dumps([sys.executable, "-c", write])}\n')
        monkeypatch.setenv("MY_TOKEN", "wrong-token-abcdef0123")  # the server now refuses: auth_failed
        verified = cli("verify", "sec/p/ttft", "sec/p/e2e", "--notify")
    assert "auth_failed" in verified.stdout and len(receiver.got) == 1 and out.exists()
    text = json.dumps(receiver.got) + out.read_text() + verified.stdout + verified.stderr
    assert "sec/p/ttft: unverifiable" in text
    with sqlite3.connect(db_path) as conn:
        kept = json.dumps(conn.execute("SELECT * FROM notified").fetchall() + conn.execute(
            "SELECT * FROM outbox").fetchall())
    for secret in (token, "wrong-token-abcdef0123"):
        assert secret not in text and secret not in kept


def test_a_renamed_fact_keeps_what_was_reported_and_a_removed_one_leaves_nothing(cli, receiver, isolated,
                                                                                 db_path) -> None:
    configure(isolated, f'[notify.webhook]\nurl = "{receiver.url}"\n')
    stale_fact(cli, "x/old")
    cli("verify", "--due", "--notify")
    assert len(receiver.got) == 1
    assert cli("mv", "x/old", "x/renamed").exit_code == 0
    cli("verify", "--due", "--notify")
    assert len(receiver.got) == 1  # the same fact under its new id: already reported
    assert cli("rm", "x/renamed").exit_code == 0
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT * FROM notified").fetchall() == []


MEMO = """\
from pathlib import Path

from factreg.plugins import Notifier, hookimpl


def send(message, options, settings):
    with open(options["path"], "a", encoding="utf-8") as fh:
        fh.write(message.subject + "\\n")


@hookimpl
def register_notifiers(register):
    register(Notifier("memo", "appends the subject to a file", send))
"""


def test_a_plugins_notifier_gets_the_message_like_a_built_in(cli, isolated, tmp_path, monkeypatch) -> None:
    from factreg import plugins
    from tests.test_plugins import install_fake

    plugins.forget()
    try:
        install_fake(tmp_path / "site", monkeypatch, "factreg-memo", MEMO)
        memo = isolated / "memo.txt"
        configure(isolated, f'[notify.memo]\npath = "{memo}"\n')
        stale_fact(cli, "x/old")
        r = cli("verify", "--due", "--notify")
        assert memo.read_text() == "factreg on testhost: 1 change(s) — 1 unverifiable\n", r.stderr
        assert "delivered 1 message(s): memo" in r.stderr
    finally:
        plugins.forget()


def test_a_message_is_redacted_before_it_is_queued() -> None:
    """Whatever a reason quotes (a server's reply echoing the header it got), the message masks a known secret."""
    from factreg import secrets
    from factreg.notify import alerts

    token = "tok-5f0e1d2c3b4a59687"
    secrets.remember(token)
    change = alerts.Change("fact:x/p", "x/p", "unverifiable", None, f"the server said: bad token {token}",
                           f"fix the key, then `factreg verify x/p` (Authorization: Bearer {token})")
    msg = alerts.message([change], "testhost")
    assert token not in msg.subject + msg.text + json.dumps(msg.changes)
    assert "x/p: unverifiable" in msg.text and secrets.MASK in msg.text
