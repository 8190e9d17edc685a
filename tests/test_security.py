"""Security properties (docs/security.md states the threat model; each test here shows one property).

- Credentials never travel to a redirected host: real servers on 127.0.0.1 and 127.0.0.2 record what they get.
- Secrets are never persisted or printed: a probe token is absent from the database files, every output, the export,
  the rendered report and the synced documents; a credential pasted into a decision, a revert or a correction cause
  (`password: …`, `token=…`, a URL's password or `?key=…`, a bearer token, an API key) is absent from the registry,
  the decision file and its name, the correction note, the report, every output and the git history.
- Stored methods are data: an imported method naming a shell runs nothing.
- Ids cannot escape the docs root: refused at record and at import; a tampered registry cannot make the report
  or a correction write outside its folder.
- Document and registry text never becomes template source: `{{ 7*7 }}` and `{% for %}` render literally.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from factreg.demo.standin import running
from factreg.registry import facts
from factreg.registry.facts import NewFact
from factreg.registry.store import Registry
from tests.decisions_support import git, init_repo, seed

SECRET = "sk-test-0123456789abcdefSECRET"
BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}]}


class Recorder(ThreadingHTTPServer):
    """A server that records every request's headers; it answers 307 to `target`, or a short SSE stream."""

    def __init__(self, host: str, target: str | None = None):
        self.seen: list[dict[str, str]] = []
        self.target = target
        super().__init__((host, 0), _Handler)

    @property
    def base(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()} | {":path": self.path})
        if self.server.target:
            self.send_response(307)
            self.send_header("Location", self.server.target + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.endswith("/models"):
            data = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
        else:
            data = (b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n' * 3) + b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer


def serve(server: Recorder) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def redirecting() -> Iterator[tuple[Recorder, Recorder]]:
    """`first` on 127.0.0.1 redirects everything to `other` on 127.0.0.2 (another host)."""
    other = Recorder("127.0.0.2")
    first = Recorder("127.0.0.1", target=other.base)
    threads = [serve(other), serve(first)]
    yield first, other
    for s, t in zip((other, first), threads, strict=True):
        s.shutdown()
        s.server_close()
        t.join(5)


@pytest.fixture
def body_file(tmp_path: Path) -> str:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(BODY), encoding="utf-8")
    return str(path)


def test_probe_never_sends_credentials_to_a_redirected_host(cli, redirecting, body_file, monkeypatch, db_path):
    first, other = redirecting
    monkeypatch.setenv("API_KEY", SECRET)
    for auth in (("--header", "Authorization: Bearer ${API_KEY}"), ("--api-key-env", "API_KEY")):
        r = cli("probe", f"{first.base}/v1/chat/completions", "--body", body_file, "--n", "2", "--warmup", "0",
                *auth, "--json")  # fmt: skip
        assert r.exit_code == 3, r.stderr
        assert "127.0.0.2" in r.json()["message"] and "not followed" in r.json()["message"]
        assert SECRET not in r.stdout + r.stderr
    assert first.seen, "the probe reached the first host"
    assert any(h.get("authorization") == f"Bearer {SECRET}" for h in first.seen)  # the intended host got it
    assert other.seen == []  # the redirected host got nothing at all, so no credentials either


def test_probe_without_redirect_reaches_the_other_host_directly(cli, redirecting, body_file):
    # the control: the recorder on 127.0.0.2 does record requests when it is the probed host itself
    _, other = redirecting
    r = cli("probe", f"{other.base}/v1/chat/completions", "--body", body_file, "--n", "1", "--warmup", "0", "--json")
    assert r.exit_code == 0, r.stderr
    assert len(other.seen) >= 1


def test_secret_is_nowhere_in_database_outputs_report_or_docs(cli, body_file, db_path, tmp_path, monkeypatch):
    with running() as server:
        token = server.token
        monkeypatch.setenv("MY_TOKEN", token)
        url = server.url("ok,auth=1,first=0.02,tokens=3,model=sec")
        r = cli("probe", url, "--body", body_file, "--n", "2", "--warmup", "0", "--header",
                "Authorization: Bearer ${MY_TOKEN}", "--record", "sec/hdr")  # fmt: skip
        assert r.exit_code == 0, r.stderr
        outputs = [r.stdout, r.stderr]
        docs = tmp_path / "work" / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        doc = docs / "notes.md"
        doc.write_text("TTFT is <!-- fact: sec/hdr/ttft -->?<!-- /fact --> here.\n", encoding="utf-8")
        for args in (("docs", "sync", str(docs)), ("report", "--out", str(tmp_path / "site")), ("export",),
                     ("list", "--json"), ("show", "sec/hdr/ttft", "--json"), ("history", "sec/hdr/ttft", "--json"),
                     ("verify", "sec/hdr/ttft", "--json", "--api-key-env", "MY_TOKEN"),
                     ("status", "--json")):  # fmt: skip
            run = cli(*args)
            assert run.exit_code in (0, 1), (args, run.stderr)
            outputs += [run.stdout, run.stderr]
        assert any(q["headers"].get("Authorization") == f"Bearer {token}" for q in server.requests)
    assert "?" not in doc.read_text(encoding="utf-8").split("-->")[1]  # the doc was synced
    rendered = [p for p in (tmp_path / "site").rglob("*") if p.is_file()]
    assert len(rendered) >= 3
    for text in outputs:
        assert token not in text
    for path in [*rendered, doc, *db_path.parent.glob(db_path.name + "*")]:
        assert token.encode() not in path.read_bytes(), path


PASTED = [
    ("password: hunter2xyz", "hunter2xyz"),
    ("password=hunter2xyz", "hunter2xyz"),
    ("api_key=k3y-abcdef123", "k3y-abcdef123"),
    ("token=tok3n-abcdef99", "tok3n-abcdef99"),
    ("secret=s3cr3t-value", "s3cr3t-value"),
    ("the board https://alice:pa55word-xyz@grafana.example.invalid/d", "pa55word-xyz"),
    ("https://api.example.invalid/v1?key=AIzaSyQ1w2e3r4t5", "AIzaSyQ1w2e3r4t5"),
    ("curl -H 'Authorization: Bearer abcDEF123456ghi'", "abcDEF123456ghi"),
    ("OPENAI_API_KEY=sk-proj-abcdef0123456789", "abcdef0123456789"),
]


@pytest.mark.parametrize(("pasted", "secret"), PASTED)
def test_credential_pasted_into_decisions_and_corrections_is_nowhere(cli, registry, db_path, isolated, pasted, secret):
    seed(registry)
    init_repo(isolated)
    r = cli("decision", "add", f"Rotate {pasted}", "--cites", "night/35b-a3b/e2e",
            "--context", f"Found {pasted} in the logs; TTFT 0.41 s, token=42 tokens.", "--outcome", f"drop {pasted}",
            "--by", f"alice {pasted}", "--commit", "--json")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    outputs = [r.stdout, r.stderr]
    for args in (("decision", "show", "1"), ("decision", "show", "1", "--json"), ("decision", "list"),
                 ("decision", "list", "--json"), ("correct", "night/35b-a3b/e2e", "--by", "day/35b-a3b/e2e",
                 "--cause", f"measured with {pasted}", "--commit", "--json"), ("status",), ("status", "--json"),
                 ("report", "--commit"), ("export",), ("decision", "revert", "1", "--because", f"leaked {pasted}",
                 "--commit"), ("show", "night/35b-a3b/e2e", "--json")):  # fmt: skip
        run = cli(*args)
        assert run.exit_code in (0, 1), (args, run.stderr)
        outputs += [run.stdout, run.stderr]
    decision = next((isolated / "decisions").glob("0001-*.md"))
    text = decision.read_text(encoding="utf-8")
    assert "TTFT 0.41 s, token=42 tokens." in text  # the prose around it stays
    assert "Rotate" in text and "drop" in text and "alice" in text
    assert (isolated / "facts" / "corrections").is_dir() and (isolated / "facts" / "README.md").is_file()
    files = [p for p in isolated.rglob("*") if p.is_file() and ".git" not in p.relative_to(isolated).parts]
    outputs += [str(p) for p in files]  # file names too (the decision's slug comes from its title)
    outputs.append(git(isolated, "log", "-p", "--all"))  # commit messages and committed contents
    for out in outputs:
        assert secret not in out
    for path in [*files, *db_path.parent.glob(db_path.name + "*")]:
        assert secret.encode() not in path.read_bytes(), path


def test_imported_method_naming_a_shell_runs_nothing(cli, tmp_path, isolated):
    pwned = isolated / "pwned"
    lines = [
        {"id": "evil/sh/tg32", "metric": "tg_rate", "value": 10.0,
         "method": {"kind": "llama-bench", "binary": "/bin/sh", "args": ["-c", f"touch {pwned}"]}},
        {"id": "evil/str/tg32", "metric": "tg_rate", "value": 10.0,
         "method": {"kind": "llama-bench", "args": f"-m x.gguf; touch {pwned}"}},
        {"id": "evil/probe/ttft", "metric": "ttft", "value": 0.1,
         "method": {"kind": "probe", "url": f"file://{pwned}", "body": BODY, "n": 1}},
    ]  # fmt: skip
    src = tmp_path / "evil.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    r = cli("import", str(src))
    if r.exit_code == 0:  # stored as data; verifying must not execute it
        v = cli("verify", "--all", "--json")
        assert v.exit_code == 3, v.stdout + v.stderr
        assert {res["verdict"] for res in v.json()} <= {"error", "unreachable"}
    else:
        assert r.exit_code == 2
    assert not pwned.exists()


@pytest.mark.parametrize("bad", ["../x", "a/../../x", "/etc/passwd", "a/./b", "a//b", "A/B", "a\\b", "..", "x/.."])
def test_ids_that_escape_are_refused_at_record_and_import(cli, tmp_path, bad, registry):
    r = cli("record", bad, "-m", "ttft", "--value", "1")
    assert r.exit_code == 2 and r.stderr.startswith("Error:")
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps({"id": bad, "metric": "ttft", "value": 1.0}) + "\n", encoding="utf-8")
    assert cli("import", str(src)).exit_code == 2
    fact_line = {"kind": "fact", "id": bad, "current_version": 1, "created_at": "2026-10-01T00:00:00Z",
                 "versions": [{"version": 1, "metric": "ttft", "unit": "s", "value": 1.0,
                               "measured_at": "2026-10-01T00:00:00Z", "recorded_at": "2026-10-01T00:00:00Z"}]}  # fmt: skip
    src.write_text(json.dumps(fact_line) + "\n", encoding="utf-8")
    assert cli("import", str(src)).exit_code == 2
    assert facts.count(registry) == 0


def tamper_id(reg: Registry, good: str, bad: str) -> None:
    """Rename a fact in the database file directly, as someone with write access to the file could."""
    import sqlite3

    assert reg.sqlite_path
    con = sqlite3.connect(reg.sqlite_path)
    with con:
        for table, col in (("fact", "id"), ("fact_version", "fact_id"), ("sample", "fact_id"),
                           ("condition", "fact_id")):  # fmt: skip
            con.execute(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", (bad, good))
    con.close()


@pytest.mark.parametrize("bad", ["../../escaped/x", "/tmp/escaped-abs/x"])
def test_tampered_ids_cannot_make_the_report_write_outside_its_folder(cli, registry, tmp_path, bad):
    facts.record(registry, NewFact(id="ok/one/ttft", metric="ttft", value=0.5, measured_at="2026-10-01T00:00:00Z"))
    facts.record(registry, NewFact(id="ok/two/ttft", metric="ttft", value=0.6, measured_at="2026-10-01T00:00:00Z"))
    tamper_id(registry, "ok/two/ttft", bad)
    site = tmp_path / "a" / "b" / "site"
    r = cli("report", "--out", str(site))
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and "escaped" in str(p)]
    assert outside == [] and not Path("/tmp/escaped-abs").exists()
    if r.exit_code == 0:
        assert all(site in p.parents for p in site.rglob("*"))
    else:
        assert r.exit_code == 2 and r.stderr.startswith("Error:")


def test_template_syntax_in_documents_and_facts_renders_literally(cli, registry, tmp_path):
    evil = "{{ 7*7 }} {% for x in range(3) %}loop{% endfor %} {# c #}"
    facts.record(registry, NewFact(id="tpl/x/ttft", metric="ttft", value=0.5, note=evil,
                                   identity={"model": evil}, measured_at="2026-10-01T00:00:00Z"))  # fmt: skip
    docs = tmp_path / "docs"
    docs.mkdir()
    doc = docs / "a.md"
    doc.write_text(f"# {evil}\n\nTTFT <!-- fact: tpl/x/ttft -->?<!-- /fact --> {evil}\n", encoding="utf-8")
    assert cli("docs", "sync", str(docs)).exit_code == 0
    synced = doc.read_text(encoding="utf-8")
    assert synced.count(evil) == 2 and "49" not in synced and "looploop" not in synced
    assert cli("report", "--out", str(tmp_path / "site")).exit_code == 0
    page = (tmp_path / "site" / "facts" / "tpl" / "x" / "ttft.md").read_text(encoding="utf-8")
    assert "7*7" in page and "49" not in page and "looploop" not in page


# ---------------------------------------------------------------- stored methods from outside are data, not authority

AWS = "aws-secret-0123456789abcdefEXFIL"


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A server on 127.0.0.1 that records every request it gets (headers and path)."""
    server = Recorder("127.0.0.1")
    thread = serve(server)
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def probe_line(fact_id: str, url: str, headers: dict[str, str], **method: object) -> dict:
    return {"id": fact_id, "metric": "ttft", "samples": [0.1, 0.11, 0.1],
            "cond": {"endpoint": url, "body_sha256": "x"},
            "method": {"kind": "probe", "url": url, "body": BODY, "n": 1, "warmup": 0, "headers": headers,
                       "timeout": 5, **method, "select": {"metric": "ttft"}}}  # fmt: skip


def write_jsonl(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_imported_method_cannot_send_an_environment_variable_anywhere(cli, tmp_path, recorder, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS)
    url = f"{recorder.base}/v1/chat/completions"
    src = write_jsonl(tmp_path / "theirs.jsonl", [probe_line("their/gw/ttft", url, {"X-Trace": "${AWS_SECRET_ACCESS_KEY}"})])
    assert cli("import", str(src)).exit_code == 0
    shown = cli("show", "their/gw/ttft", "--json").json()
    assert shown["provenance"]["origin"] == "imported" and shown["provenance"]["source"] == "theirs.jsonl"
    # imported: not trusted, so nothing runs — not a request, not a process
    v = cli("verify", "--all", "--json")
    assert v.exit_code == 3
    [res] = v.json()
    assert res["verdict"] == "error" and res["recorded"] is False
    assert res["message"] == "imported method not trusted: run verify --trust-imported or import --trust"
    assert recorder.seen == []
    # trusted, by the flag or at import: the variable is still not one the configuration allows
    v = cli("verify", "--all", "--json", "--trust-imported")
    assert v.exit_code == 3 and "AWS_SECRET_ACCESS_KEY" in v.json()[0]["message"]
    assert "allow_env" in v.json()[0]["message"]
    other = tmp_path / "other.db"
    assert cli("import", "--trust", str(src), "--db", str(other)).exit_code == 0
    v2 = cli("verify", "--all", "--json", "--db", str(other), "--api-key-env", "MY_TOKEN")
    assert v2.exit_code == 3 and "AWS_SECRET_ACCESS_KEY" in v2.json()[0]["message"]
    assert recorder.seen == []
    for run in (v, v2):
        assert AWS not in run.stdout + run.stderr


def test_allowed_variables_are_expanded_and_sent_only_when_trusted(cli, tmp_path, recorder, monkeypatch, isolated):
    """The control: the same harness sees the request once the method is trusted and its variable allowed."""
    monkeypatch.setenv("MY_TOKEN", SECRET)
    url = f"{recorder.base}/v1/chat/completions"
    src = write_jsonl(tmp_path / "mine.jsonl", [probe_line("mine/gw/ttft", url, {"Authorization": "Bearer ${MY_TOKEN}"})])
    assert cli("import", str(src)).exit_code == 0
    assert cli("verify", "--all", "--json").json()[0]["verdict"] == "error" and recorder.seen == []
    # allowed by the command line now
    v = cli("verify", "--all", "--json", "--trust-imported", "--api-key-env", "MY_TOKEN")
    assert v.json()[0]["verdict"] != "error" or "not trusted" not in v.json()[0]["message"]
    assert any(h.get("authorization") == f"Bearer {SECRET}" for h in recorder.seen)
    # trust is remembered; the variable allowed by the configuration instead
    recorder.seen.clear()
    (isolated / ".factreg").mkdir()
    (isolated / ".factreg" / "config.toml").write_text('[probe]\nallow_env = ["MY_TOKEN"]\n', encoding="utf-8")
    cli("verify", "--all", "--json")
    assert any(h.get("authorization") == f"Bearer {SECRET}" for h in recorder.seen)


@pytest.mark.parametrize(("field", "value", "says"), [
    ("url", "file:///etc/passwd", "URL must be http(s)"),
    ("url", "http://user:pw@127.0.0.1:9/v1/chat/completions", "not in the URL"),
    ("n", 10**9, "outside"),
    ("n", True, "whole number"),
    ("warmup", 10**6, "outside"),
    ("timeout", 86400 * 365, "outside"),
    ("timeout", 0, "outside"),
    ("spacing", 10**7, "outside"),
    ("spacing", -1, "outside"),
    ("min_uptime", "soon", "must be a number"),
    ("body", "x" * 10, "JSON object"),
    ("body", {"pad": "x" * (9 * 2**20)}, "larger than"),
    ("headers", {"X-A": "a\r\nX-Injected: 1"}, "not a valid header"),
    ("headers", {"Bad Name": "x"}, "not a valid header"),
    ("no_cache", "yes", "true or false"),
])  # fmt: skip
def test_every_field_of_a_trusted_stored_probe_method_is_checked(cli, registry, recorder, field, value, says):
    """Even a trusted method (someone who can write the database can make one) is checked field by field."""
    url = f"{recorder.base}/v1/chat/completions"
    method = {**probe_line("x/y/ttft", url, {})["method"], field: value}
    facts.record(registry, NewFact(id="x/y/ttft", metric="ttft", value=0.1, method=method))
    r = cli("verify", "x/y/ttft", "--json")
    assert r.exit_code == 3
    assert r.json()[0]["verdict"] == "error" and says in r.json()[0]["message"], r.json()[0]["message"]
    assert "\n" not in r.json()[0]["message"]
    assert recorder.seen == []


def test_restoring_your_own_export_keeps_trust_others_and_edits_do_not(cli, tmp_path, recorder, db_path, monkeypatch):
    monkeypatch.setenv("MY_TOKEN", SECRET)
    url = f"{recorder.base}/v1/chat/completions"
    assert cli("record", "first/x/ttft", "-m", "ttft", "--value", "1").exit_code == 0  # the registry has its keys
    backup, backup2 = tmp_path / "backup.db", tmp_path / "backup2.db"
    copy_registry(db_path, backup)  # two older copies of this registry
    copy_registry(db_path, backup2)
    reg = Registry(f"sqlite:///{db_path}")
    method = probe_line("mine/gw/ttft", url, {"Authorization": "Bearer ${MY_TOKEN}"})["method"]
    facts.record(reg, NewFact(id="mine/gw/ttft", metric="ttft", samples=[0.1, 0.11], method=method))
    reg.close()
    export = tmp_path / "export.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    line = next(json.loads(x) for x in export.read_text().splitlines() if "mine/gw/ttft" in x)
    assert line["versions"][0]["origin"] == "recorded" and line["versions"][0]["recorded_by"]
    assert line["versions"][0]["registry_id"] and line["versions"][0]["trust"]

    def verify(db: Path) -> dict:
        recorder.seen.clear()
        return cli("verify", "mine/gw/ttft", "--json", "--db", str(db), "--api-key-env", "MY_TOKEN").json()[0]

    # the older copy of the same registry, restored from the export: trusted, it runs
    assert cli("import", str(export), "--db", str(backup)).exit_code == 0
    assert "not trusted" not in verify(backup)["message"] and recorder.seen
    # another registry: the same lines, not trusted
    fresh = tmp_path / "fresh.db"
    assert cli("import", str(export), "--db", str(fresh)).exit_code == 0
    assert "not trusted" in verify(fresh)["message"] and recorder.seen == []
    # the export with the method's URL edited, restored into the older copy: the tag no longer matches
    edited = json.loads(json.dumps(line).replace(url, url.replace("/v1/", "/v2/")))
    assert cli("import", str(write_jsonl(tmp_path / "edited.jsonl", [edited])), "--db", str(backup2)).exit_code == 0
    assert "not trusted" in verify(backup2)["message"] and recorder.seen == []


def copy_registry(src: Path, dst: Path) -> None:
    """A consistent copy of a SQLite registry (its WAL included), by SQLite's backup API."""
    import sqlite3

    a, b = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        a.backup(b)
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------- secrets reaching the registry by other roads

LITERAL = "literal-k3y-0123456789abcdef"


class Echo(ThreadingHTTPServer):
    """A server that echoes the credential it receives (bearer token, `apikey`/`X-Auth` header or `?key=`) as its
    model name, build, model ids and model path, in every answer."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        super().__init__(("127.0.0.1", 0), _EchoHandler)

    @property
    def base(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class _EchoHandler(BaseHTTPRequestHandler):
    server: Echo

    def log_message(self, *args: object) -> None:
        pass

    def _credential(self) -> str:
        from urllib.parse import parse_qs, urlsplit

        auth = self.headers.get("Authorization", "")
        query = parse_qs(urlsplit(self.path).query)
        return (auth.split(" ", 1)[1] if " " in auth else "") or self.headers.get("apikey", "") \
            or self.headers.get("X-Auth", "") or (query.get("key") or [""])[0]

    def _send(self, content_type: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        token = self._credential()
        self.server.seen.append(token)
        if "/models" in self.path:
            self._send("application/json", json.dumps({"object": "list", "data": [{"id": token}]}).encode())
        else:
            self._send("application/json", json.dumps({"model_path": f"/models/{token}.gguf",
                                                       "build_info": token}).encode())

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        token = self._credential()
        self.server.seen.append(token)
        chunk = {"model": token, "system_fingerprint": token, "choices": [{"delta": {"content": "hi"}}]}
        self._send("text/event-stream", (f"data: {json.dumps(chunk)}\n\n" * 3 + "data: [DONE]\n\n").encode())


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_a_server_echoing_the_credential_never_gets_it_stored_or_shown(cli, echo, body_file, db_path, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("MY_TOKEN", SECRET)
    url = f"{echo.base}/v1/chat/completions"
    r = cli("probe", url, "--body", body_file, "--n", "2", "--warmup", "0", "--api-key-env", "MY_TOKEN",
            "--record", "echo/gw", "--json")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert r.json()["observed"]["model"] == "***" and r.json()["observed"]["build"] == "***"
    outputs = [r.stdout, r.stderr]
    export = tmp_path / "export.jsonl"
    for args in (("list", "--json"), ("show", "echo/gw/ttft", "--json"), ("show", "echo/gw/ttft"),
                 ("history", "echo/gw/ttft", "--json"), ("export", "--out", str(export)),
                 ("verify", "echo/gw/ttft", "--json", "--api-key-env", "MY_TOKEN"), ("verify", "--all"),
                 ("status", "--json"), ("report", "--out", str(tmp_path / "site"))):  # fmt: skip
        run = cli(*args)
        assert run.exit_code in (0, 1, 3), (args, run.stderr)
        outputs += [run.stdout, run.stderr]
    assert echo.seen and set(echo.seen) == {SECRET}  # the server got it, and echoed it in every answer
    rendered = [p for p in (tmp_path / "site").rglob("*") if p.is_file()]
    assert rendered
    for text in outputs:
        assert SECRET not in text
    for path in [export, *rendered, *db_path.parent.glob(db_path.name + "*")]:
        assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("how", [
    ("--header", f"apikey: {LITERAL}"),
    ("--header", f"X-Auth: {LITERAL}"),
    ("--header", f"X-Auth: Token {LITERAL}"),
    ("?key=",),
])  # fmt: skip
def test_a_literal_credential_is_refused_for_record_and_masked_otherwise(cli, echo, body_file, db_path, how):
    url = f"{echo.base}/v1/chat/completions"
    args = list(how)
    if how == ("?key=",):
        url, args = f"{url}?key={LITERAL}", []
    r = cli("probe", url, "--body", body_file, "--n", "1", "--warmup", "0", *args, "--record", "lit/gw")
    assert r.exit_code == 2 and r.stderr.startswith("Error:") and len(r.stderr.strip().splitlines()) == 1
    assert echo.seen == []  # refused before any request
    assert LITERAL not in r.stdout + r.stderr
    ok = cli("probe", url, "--body", body_file, "--n", "1", "--warmup", "0", *args, "--json")
    assert ok.exit_code == 0, ok.stderr
    human = cli("probe", url, "--body", body_file, "--n", "1", "--warmup", "0", *args)
    assert any(LITERAL in seen for seen in echo.seen)  # it was sent and echoed back as model, build, ids, path
    for text in (ok.stdout, ok.stderr, human.stdout, human.stderr):
        assert LITERAL not in text
    for path in db_path.parent.glob(db_path.name + "*"):
        assert LITERAL.encode() not in path.read_bytes()


def test_credentials_never_go_to_a_proxy_from_the_environment(cli, echo, body_file, monkeypatch):
    proxy = Recorder("127.0.0.2")
    thread = serve(proxy)
    try:
        monkeypatch.setenv("MY_TOKEN", SECRET)
        for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
            monkeypatch.setenv(var, proxy.base)
        r = cli("probe", f"{echo.base}/v1/chat/completions", "--body", body_file, "--n", "1", "--warmup", "0",
                "--api-key-env", "MY_TOKEN", "--json")  # fmt: skip
        assert r.exit_code == 0, r.stdout + r.stderr
        assert proxy.seen == []  # not one request through the proxy, so not the Authorization header either
        assert echo.seen and set(echo.seen) == {SECRET}  # the endpoint itself got it
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(5)


# ---------------------------------------------------------------- stored llama-bench arguments are checked before running

LLAMA_JSON = Path(__file__).parent / "data" / "llamabench" / "new.json"


@pytest.fixture
def fake_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A llama-bench that writes a marker file (its arguments) whenever it is run, then prints real JSON output."""
    marker = tmp_path / "llama-bench-ran"
    script = tmp_path / "bin" / "llama-bench"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\necho \"$@\" >> '{marker}'\ncat '{LLAMA_JSON}'\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("FACTREG_LLAMA_BENCH", str(script))
    return marker


@pytest.fixture
def models(tmp_path: Path) -> Path:
    """A model folder with a GGUF file, a .gguf that is not one, a text file and a link out to /etc/passwd; and
    a real GGUF file in another folder."""
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "good.gguf").write_bytes(b"GGUF" + bytes(60))
    (folder / "fake.gguf").write_bytes(b"not a model at all")
    (folder / "notes.txt").write_bytes(b"GGUF" + bytes(60))
    (folder / "link.gguf").symlink_to("/etc/passwd")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "other.gguf").write_bytes(b"GGUF" + bytes(60))
    return folder


def bench_method(args: list[str]) -> dict:
    return {"kind": "llama-bench", "binary": "llama-bench", "args": args,
            "select": {"test": "tg32", "n_prompt": "0", "n_gen": "32", "n_depth": "0"}}  # fmt: skip


def record_bench_fact(registry: Registry, fact_id: str, args: list[str]) -> None:
    """A llama-bench fact recorded in this registry on this machine (trusted: as `bench` records them)."""
    facts.record(registry, NewFact(id=fact_id, metric="tg_rate", samples=[10.0, 10.5, 9.8],
                                   identity={"machine": "testhost"}, method=bench_method(args)))  # fmt: skip


def hash_cache_text(isolated: Path, tmp_path: Path) -> str:
    found = [*isolated.rglob("model-hashes.json"), *(tmp_path / "userdata").rglob("model-hashes.json")]
    return "".join(p.read_text(encoding="utf-8") for p in found)


BAD_BENCH_ARGS = [
    (["-m", "{good}", "-rpc", "10.66.66.66:50052"], "network"),
    (["-m", "{good}", "-r", "100000000"], "outside 1…1000"),
    (["-m", "/etc/passwd"], "outside the model folders"),
    (["--model=/etc/passwd"], "as two arguments"),
    (["--model=/etc/passwd,{good}"], "as two arguments"),
    (["-m", "{good}", "-hf", "ggml-org/tiny"], "downloads"),
    (["-m", "{good}", "-hft", "hf_abc"], "token"),
    (["-m", "{other}"], "outside the model folders"),
    (["-m", "{good},{other}"], "outside the model folders"),
    (["-m", "{models}/fake.gguf"], "GGUF magic"),
    (["-m", "{models}/notes.txt"], "not a .gguf"),
    (["-m", "{models}/link.gguf"], "outside the model folders"),
    (["-m", "models/good.gguf"], "not absolute"),
    (["-m", "{good}", "-p", "1-1000"], "more than 64"),
    (["-m", "{good}", "-p", "1-100000000"], "outside"),
    (["-m", "{good}", "-n", "99999999"], "outside"),
    (["-m", "{good}", "-t", "0"], "outside"),
    (["-m", "{good}", "--delay", "100000"], "outside"),
    (["-m", "{good}", "--list-devices"], "not an option"),
    (["-m", "{good}", "-oe", "json"], "output"),
    (["-m", "{good}", "-n"], "needs a value"),
    (["-p", "0", "-n", "32"], "names no model"),
]


@pytest.mark.parametrize(("args", "says"), BAD_BENCH_ARGS, ids=[" ".join(a) for a, _ in BAD_BENCH_ARGS])
def test_stored_llama_bench_arguments_are_checked_before_anything_runs(cli, registry, fake_bench, models, isolated,
                                                                          tmp_path, args, says):
    (isolated / ".factreg").mkdir()
    (isolated / ".factreg" / "config.toml").write_text(f'[bench]\nmodel_roots = ["{models}"]\n', encoding="utf-8")
    where = {"good": str(models / "good.gguf"), "other": str(tmp_path / "elsewhere" / "other.gguf"),
             "models": str(models)}  # fmt: skip
    record_bench_fact(registry, "t/bad/tg32", [a.format(**where) for a in args])
    r = cli("verify", "t/bad/tg32", "--json")
    assert r.exit_code == 3, r.stdout + r.stderr
    [res] = r.json()
    assert res["verdict"] == "error" and says in res["message"], res["message"]
    assert "\n" not in res["message"] and "Traceback" not in r.stdout + r.stderr
    assert not fake_bench.exists()  # llama-bench never ran
    assert "passwd" not in hash_cache_text(isolated, tmp_path)  # and no file outside was hashed


def test_a_good_stored_method_runs_the_fake_llama_bench(cli, registry, fake_bench, models, isolated, tmp_path):
    """The control: with the folder allowed by default (a model benched here), the same harness sees it run."""
    record_bench_fact(registry, "t/good/tg32", ["-m", str(models / "good.gguf"), "-p", "0", "-n", "32", "-r", "3"])
    cli("verify", "t/good/tg32", "--json")
    ran = fake_bench.read_text().splitlines()  # the measured run, between the control's two (docs/machine.md)
    assert [line for line in ran if line.startswith(f"-m {models / 'good.gguf'} -p 0 -n 32 -r 3")]


def test_model_folders_come_from_models_benched_here_not_imported(cli, registry, fake_bench, models, tmp_path):
    record_bench_fact(registry, "t/good/tg32", ["-m", str(models / "good.gguf"), "-n", "32"])
    other = str(tmp_path / "elsewhere" / "other.gguf")
    line = {"id": "their/x/tg32", "metric": "tg_rate", "samples": [10.0, 10.5], "cond": {"machine": "testhost"},
            "method": bench_method(["-m", other, "-n", "32"])}  # fmt: skip
    src = write_jsonl(tmp_path / "theirs.jsonl", [line])
    assert cli("import", str(src)).exit_code == 0
    r = cli("verify", "their/x/tg32", "--json")  # untrusted: nothing runs
    assert r.json()[0]["message"].startswith("imported method not trusted")
    r = cli("verify", "their/x/tg32", "--json", "--trust-imported")  # trusted now, but its folder is not allowed
    assert r.exit_code == 3 and "outside the model folders" in r.json()[0]["message"], r.json()
    allowed = r.json()[0]["message"].split("allows (", 1)[1].split(";", 1)[0]
    assert allowed == str(models)  # the benched model's folder, not the imported one's
    assert not fake_bench.exists()


@pytest.mark.parametrize("args", [["-m", "{good}", "-rpc", "10.66.66.66:50052"], ["-m", "/etc/passwd"]])
def test_imported_llama_bench_arguments_run_nothing_trusted_or_not(cli, fake_bench, models, tmp_path, args):
    where = {"good": str(models / "good.gguf")}
    line = {"id": "their/x/tg32", "metric": "tg_rate", "samples": [10.0, 10.5], "cond": {"machine": "testhost"},
            "method": bench_method([a.format(**where) for a in args])}  # fmt: skip
    src = write_jsonl(tmp_path / "theirs.jsonl", [line])
    for trust in ((), ("--trust",)):
        db = tmp_path / f"r{len(trust)}.db"
        assert cli("import", *trust, str(src), "--db", str(db)).exit_code == 0
        r = cli("verify", "--all", "--json", "--db", str(db))
        assert r.exit_code == 3 and r.json()[0]["verdict"] == "error"
        assert ("not trusted" in r.json()[0]["message"]) == (not trust)
    assert not fake_bench.exists()


# What a server (or a registry) may put in a string that reaches a terminal: colour, a window title (OSC 0), a
# hyperlink (OSC 8), clearing the screen, a one-byte CSI (C1), a bidirectional override.
TERMINAL_ESCAPES = ["\x1b[31mRED\x1b[0m", "\x1b]0;pwned title\x07", "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
                    "\x1b[2J", "\x9b2J", "\u202eevil"]
OBEYED = ("\x1b", "\x07", "\x9b", "\u202e")


def _escape_server(ok_first_post: bool):  # type: ignore[no-untyped-def]
    """A raw server whose every POST but (optionally) the first is HTTP 500 with a body of terminal escapes, half
    as text, half as an OpenAI-shaped JSON error."""
    from tests.raw_server import RawServer

    events = [{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}]
    sse = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    ok = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (len(sse), sse)
    text = " ".join(TERMINAL_ESCAPES).encode("utf-8")
    as_json = json.dumps({"error": {"message": " ".join(TERMINAL_ESCAPES)}}).encode()
    posts = {"n": 0}
    holder: dict[str, RawServer] = {}

    def answer(n: int, _on_connection: int) -> list[bytes]:
        request = holder["server"].requests[n - 1]
        if request.startswith(b"GET"):
            return [b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text)]
        posts["n"] += 1
        if ok_first_post and posts["n"] == 1:
            return [ok]
        body = text if posts["n"] % 2 else as_json
        kind = b"text/plain" if body is text else b"application/json"
        return [b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"
                % (kind, len(body), body)]

    holder["server"] = RawServer(answer, close_after=False)
    return holder["server"]


@pytest.mark.parametrize("path", ["httpx", "lean"])
def test_terminal_escapes_from_a_server_are_shown_not_obeyed(cli, body_file, path):
    """An HTTP 500 whose body holds escape sequences: the `Error:`/verdict lines print them as `\\x1b…`, on the
    identity check's path (httpx) and a load run's (the lean client of measure/wire.py); before, raw."""
    server = _escape_server(ok_first_post=path == "lean")
    try:
        extra = ["--concurrency", "2"] if path == "lean" else []
        r = cli("probe", server.url, "--body", body_file, "--n", "2", "--warmup", "0", *extra)
    finally:
        server.close()
    assert r.exit_code == 3, (r.stdout, r.stderr)
    out = r.stdout + r.stderr
    assert "HTTP 500" in out and "\\x1b[31mRED" in out and "\\x9b2J" in out and "\\u202eevil" in out, out
    for ch in OBEYED:
        assert ch not in out, (ch, out)


def test_terminal_escapes_in_the_registry_are_shown_not_obeyed(cli, tmp_path):
    """A fact imported with escapes in its note, a condition and a custom unit: `show`, `list`, `history`,
    `status` and an `Error:` line naming its metric print them visibly."""
    text = " ".join(TERMINAL_ESCAPES)
    line = {"id": "esc/x", "metric": "temp", "unit": "°C" + TERMINAL_ESCAPES[0], "value": 1.0, "note": text,
            "identity": {"model": text}}
    path = tmp_path / "esc.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert cli("import", str(path)).exit_code == 0
    runs = [cli("show", "esc/x"), cli("list"), cli("history", "esc/x"), cli("status"),
            cli("record", "esc/x", "-m", "ttft", "--value", "1")]
    assert runs[-1].exit_code == 2 and "\\x1b[31m" in runs[-1].stderr
    for r in runs:
        for ch in OBEYED:
            assert ch not in r.stdout + r.stderr, (ch, r.stdout, r.stderr)
    assert "\\x1b]0;pwned title\\x07" in runs[0].stdout


def _gzip_server(bomb_on: str):  # type: ignore[no-untyped-def]
    """A raw server that gzips whatever it is asked (64 MiB of zeros: 64 KiB on the wire) where `bomb_on` says:
    the identity check's GET of /v1/models, its 1-token POST, or a load run's POSTs after a plain identity check."""
    import gzip

    from tests.raw_server import RawServer

    bomb = gzip.compress(b"\0" * (64 * 2**20), compresslevel=9)
    events = [{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}]
    sse = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    posts = {"n": 0}
    holder: dict[str, RawServer] = {}

    def reply(kind: bytes, body: bytes, coded: bool) -> list[bytes]:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n" % (kind, len(body))
        return [head + (b"Content-Encoding: gzip\r\n" if coded else b"") + b"\r\n" + body]

    def answer(n: int, _on_connection: int) -> list[bytes]:
        request = holder["server"].requests[n - 1]
        if request.startswith(b"GET"):
            coded = bomb_on == "get" and b"/v1/models" in request.split(b"\r\n")[0]
            return reply(b"application/json", bomb if coded else b'{"data": [{"id": "m"}]}', coded)
        posts["n"] += 1
        coded = bomb_on == "post" or (bomb_on == "load" and posts["n"] > 1)
        return reply(b"text/event-stream", bomb if coded else sse, coded)

    holder["server"] = RawServer(answer, close_after=False)
    return holder["server"]


@pytest.mark.parametrize("bomb_on", ["get", "post", "load"])
def test_a_compressed_reply_is_refused_not_inflated(cli, body_file, bomb_on):
    """Every request asks for `Accept-Encoding: identity` (the identity GETs too); a reply compressed anyway is
    refused with one line naming its coding, and nothing is inflated: the probe's traced peak stays under 16 MB (a
    single 64 KiB read of it inflated to 64 MB before, 176 MB peak), on the identity check's GET and POST (httpx)
    and a load run's POSTs (the lean client)."""
    import tracemalloc

    server = _gzip_server(bomb_on)
    try:
        extra = ["--concurrency", "2"] if bomb_on == "load" else []
        tracemalloc.start()
        try:
            r = cli("probe", server.url, "--body", body_file, "--n", "2", "--warmup", "0", *extra)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        requests = list(server.requests)
    finally:
        server.close()
    assert r.exit_code == 3, (r.stdout, r.stderr)
    assert "Content-Encoding 'gzip'" in r.stdout + r.stderr and "refused, not inflated" in r.stdout + r.stderr
    assert peak < 16 * 2**20, peak
    heads = [q.split(b"\r\n\r\n", 1)[0].lower() for q in requests]
    assert heads and all(b"\r\naccept-encoding: identity" in h for h in heads), heads
    assert any(h.startswith(b"get /v1/models") for h in heads)
