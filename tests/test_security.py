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
