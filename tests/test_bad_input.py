"""Bad input as a new user would type it: one line `Error: …`, exit 2, nothing recorded."""

import json
import os
from pathlib import Path

import pytest

from factreg.cli import app  # noqa: F401  (the cli fixture runs it)


def assert_one_line_error(r, code=2, contains=""):
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert r.stderr.startswith("Error: "), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert contains in r.stderr
    assert r.stdout == ""


def registry_is_empty(cli):
    r = cli("list", "--json")
    return r.exit_code == 2 or r.json() == []


@pytest.mark.parametrize(
    "args, contains",
    [
        (["--value", "fast"], "--value must be a number"),
        (["--value", "nan"], "finite"),
        (["--value", "inf"], "finite"),
        (["--value", "-inf"], "finite"),
        (["--samples", ""], "--samples"),
        (["--samples", "1,,2"], "--samples"),
        (["--samples", "1,x,2"], "every sample must be a number"),
        (["--samples", "1,nan"], "finite"),
        (["--value", "1", "--samples", "1,2"], "exactly one of"),
        ([], "exactly one of"),
        (["--value", "1", "--spread", "-1"], "negative"),
        (["--value", "1", "--n", "0"], "--n"),
        (["--samples", "1,2,3", "--n", "5"], "does not match"),
        (["--value", "1", "--cond", "novalue"], "key=value"),
        (["--value", "1", "--cond", "a=1", "--info", "a=2"], "both identity and info"),
        (["--value", "1", "--measured-at", "yesterday"], "ISO-8601"),
        (["--value", "1", "--warn-after", "soon"], "invalid duration"),
        (["--value", "1", "--warn-after", "90d", "--error-after", "30d"], "cannot be longer"),
        (["--value", "1", "--unit", "ms"], "measured in 's'"),
    ],
)
def test_record_bad_values(cli, args, contains):
    r = cli("record", "gamebox/a3b/ttft", "--metric", "ttft", *args)
    assert_one_line_error(r, 2, contains)
    assert registry_is_empty(cli)


def test_unknown_metric_without_unit(cli):
    assert_one_line_error(cli("record", "a/b", "--metric", "speediness", "--value", "3"), 2, "unknown metric")
    assert registry_is_empty(cli)


@pytest.mark.parametrize("bad_id", ["Gamebox/TG", "../etc/passwd", "/abs/path", "a/../b", "a//b", "a b", "x" * 201,
                                    "a/./b", "trailing/", "ünï/code", "a;rm -rf"])
def test_bad_ids_refused(cli, bad_id):
    r = cli("record", bad_id, "--metric", "ttft", "--value", "1")
    assert_one_line_error(r, 2, "fact id")
    assert registry_is_empty(cli)


def test_unreadable_db_path(cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    r = cli("record", "a/b", "-m", "ttft", "--value", "1", "--db", str(blocker / "sub" / "reg.db"))
    assert_one_line_error(r, 2, "cannot create the registry folder")


def test_db_in_read_only_folder_is_one_line(cli, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    target = ro / "reg.db"
    # a directory where the file should be: cannot be opened as a database by anyone, root included
    target.mkdir()
    assert_one_line_error(cli("list", "--db", str(target)), 2, "cannot use the registry")


def test_corrupt_db_file(cli, tmp_path):
    p = tmp_path / "corrupt.db"
    p.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    r = cli("record", "a/b", "-m", "ttft", "--value", "1", "--db", str(p))
    assert_one_line_error(r, 2)
    p2 = tmp_path / "text.db"
    p2.write_text("hello, I am not a database\n" * 100)
    assert_one_line_error(cli("list", "--db", str(p2)), 2)


def test_show_on_missing_registry_does_not_create_one(cli, tmp_path):
    target = tmp_path / "nothing-here.db"
    assert_one_line_error(cli("show", "a/b", "--db", str(target)), 2, "no registry")
    assert not target.exists()


@pytest.mark.parametrize(
    "content, contains",
    [
        ('{"id": "a/b", "metric": "ttft", "value": 1}\n{"id": "c/d", "metric": "ttft", "value": \n', ":3: not valid JSON"),
        ('{"id": "a/b", "metric": "ttft", "value": NaN}\n', "NaN"),
        ('[1, 2]\n', "expected a JSON object"),
        ('{"id": "A/B", "metric": "ttft", "value": 1}\n', "invalid fact id"),
        ('{"id": "a/b", "metric": "ttft", "value": "1"}\n', "'value' must be a number"),
        ('{"id": "a/b", "metric": "ttft", "samples": []}\n', "empty"),
        ('{"id": "a/b", "metric": "ttft", "value": 1, "color": "red"}\n', "unknown field"),
        ('{"kind": "spaceship"}\n', "unknown kind"),
        ('{"kind": "fact", "id": "a/b"}\n', "versions"),
    ],
)
def test_bad_jsonl_imports_nothing(cli, tmp_path, content, contains):
    f = tmp_path / "in.jsonl"
    f.write_text('{"id": "good/one", "metric": "ttft", "value": 1}\n' + content)
    r = cli("import", str(f))
    assert_one_line_error(r, 2, contains)
    assert registry_is_empty(cli)


def test_non_utf8_jsonl(cli, tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_bytes(b'{"id": "a/b", "metric": "ttft", "value": 1, "note": "\xff\xfe"}\n')
    assert_one_line_error(cli("import", str(f)), 2, "not UTF-8")
    assert registry_is_empty(cli)


def test_import_missing_file(cli):
    assert_one_line_error(cli("import", "nope.jsonl"), 2, "no such file")


def test_bad_config_file(cli, tmp_path):
    Path(".factreg").mkdir()
    Path(".factreg/config.toml").write_text("[freshness\nwarn_after = ")
    assert_one_line_error(cli("list"), 2, "cannot read config file")


# ---------------------------------------------------------------- tracebacks → one `Error:` line (exit 2)


def _import_text(cli, tmp_path, text: str, name: str = "in.jsonl"):  # type: ignore[no-untyped-def]
    f = tmp_path / name
    f.write_text(text, encoding="utf-8", errors="surrogatepass")
    return cli("import", str(f))


HOSTILE_IMPORT_LINES = [
    ('{"id": "a/b", "metric": "ttft", "value": ' + "9" * 400 + "}", "out of range"),
    ('{"id": "a/b", "metric": "ttft", "n": ' + "9" * 30 + ', "value": 1}', "out of range"),
    ('{"id": "a/b", "metric": "ttft", "value": 1, "note": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
    ('{"id": "a/b", "metric": "ttft", "value": 1, "method": {"kind": "manual", "x": ' + "[" * 40 + "]" * 40 + "}}",
     "nested"),
    ('{"id": "a/b", "metric": "ttft", "value": 1, "note": "\\ud800"}', "surrogate"),
    ('{"id": "a/b", "metric": "ttft", "value": 1, "cond": {"model": "x\\udfff"}}', "surrogate"),
    ('{"id": "a/b", "metric": "ttft", "value": 1e999}', "out of range"),
    ('{"id": "a/b", "metric": "ttft", "samples": [1, -1e999]}', "out of range"),
    ('{"id": "a/b", "metric": "ttft", "samples": [1e308, 1e308, 1e308]}', "within"),
    ('{"id": "a/b", "metric": "ttft", "value": 1, "n": 99999999999}', "--n"),
]


@pytest.mark.parametrize("line, contains", HOSTILE_IMPORT_LINES, ids=range(len(HOSTILE_IMPORT_LINES)))
def test_hostile_import_lines_are_one_error_line(cli, tmp_path, line, contains):
    r = _import_text(cli, tmp_path, '{"id": "good/one", "metric": "ttft", "value": 1}\n' + line + "\n")
    assert_one_line_error(r, 2, contains)
    assert registry_is_empty(cli)


def _fact_line(**version_changes) -> str:  # type: ignore[no-untyped-def]
    version = {"version": 1, "metric": "ttft", "unit": "s", "direction": "lower", "value": 1.0,
               "measured_at": "2026-10-26T00:00:00Z", "recorded_at": "2026-10-26T00:00:00Z",
               "flags": '["few_samples"]', "method": '{"kind": "manual"}', "samples": [], **version_changes}
    return json.dumps({"kind": "fact", "id": "a/b", "current_version": 1, "created_at": "2026-10-26T00:00:00Z",
                       "versions": [version], "verifications": []})


@pytest.mark.parametrize("changes, contains", [
    ({"flags": "few_samples"}, "flags 'few_samples' is not a JSON list"),
    ({"method": "manual"}, "method 'manual' is not a JSON object"),
    ({"measured_at": "1-01-01T00:00:00Z"}, "measured_at"),
    ({"warn_after": "soon"}, "warn_after"),
    ({"n": 0}, "n '0'"),
    ({"samples": "1,2"}, "samples must be a list"),
])
def test_fact_lines_a_reader_could_not_read_are_refused(cli, tmp_path, changes, contains):
    r = _import_text(cli, tmp_path, _fact_line(**changes) + "\n")
    assert_one_line_error(r, 2, contains)
    assert registry_is_empty(cli)
    line = json.loads(_fact_line())
    line["current_version"] = 5
    assert_one_line_error(_import_text(cli, tmp_path, json.dumps(line) + "\n"), 2, "current_version 5")
    assert registry_is_empty(cli)


def test_an_imported_1e999_never_breaks_export_or_list(cli, tmp_path):
    for text in ('{"id": "a/b", "metric": "ttft", "value": 1e999}', _fact_line().replace('"value": 1.0', '"value": 1e999')):
        assert_one_line_error(_import_text(cli, tmp_path, text + "\n"), 2, "out of range")
    assert cli("import", str(_write(tmp_path, _fact_line() + "\n"))).exit_code == 0
    r = cli("export")
    assert r.exit_code == 0 and r.stderr == "" and json.loads(r.stdout)["id"] == "a/b"
    assert cli("list", "--json").json()[0]["id"] == "a/b"


def _write(tmp_path, text):  # type: ignore[no-untyped-def]
    f = tmp_path / "line.jsonl"
    f.write_text(text, encoding="utf-8")
    return f


@pytest.mark.parametrize("args, contains", [
    (["record", "a/b", "-m", "ttft", "--samples", "1e308,1e308,1e308"], "within"),
    (["record", "a/b", "-m", "ttft", "--value", "1e300"], "within"),
    (["record", "a/b", "-m", "ttft", "--value", "1", "--n", "99999999999999999999"], "--n takes a whole number"),
    (["record", "a/b", "-m", "ttft", "--value", "1", "--n", "2000000000"], "--n must be a whole number from 1"),
    (["record", "a/b", "-m", "ttft", "--value", "1", "--tolerance", "nan"], "--tolerance takes a finite number"),
    (["record", "a/b", "-m", "ttft", "--value", "1", "--note", "bad \udcff byte"], "not valid UTF-8"),
    (["show", "a/b", "--version", "99999999999999999999"], "--version takes a whole number"),
    (["decision", "show", "99999999999999999999"], "N takes a whole number"),
])
def test_out_of_range_command_line_values_are_one_error_line(cli, args, contains):
    assert_one_line_error(cli(*args), 2, contains)
    assert registry_is_empty(cli)


@pytest.fixture
def body(tmp_path):  # type: ignore[no-untyped-def]
    f = tmp_path / "body.json"
    f.write_text('{"messages": [{"role": "user", "content": "hi"}]}')
    return str(f)


@pytest.mark.parametrize("args, contains", [
    (["http://[::1"], "Invalid IPv6 URL"),
    (["http://[::1/v1/chat/completions"], "URL must be"),
    (["http://127.0.0.1:99999/v1/chat/completions"], "Port out of range"),
    (["http://127.0.0.1:port/v1"], "URL must be"),
    (["http://127.0.0.1:9/v1", "--timeout", "nan"], "--timeout takes a finite number"),
    (["http://127.0.0.1:9/v1", "--timeout", "inf"], "--timeout takes a finite number"),
    (["http://127.0.0.1:9/v1", "--timeout", "1e9"], "--timeout must be"),
    (["http://127.0.0.1:9/v1", "--spacing", "inf"], "--spacing takes a finite number"),
    (["http://127.0.0.1:9/v1", "--spacing", "100000"], "--spacing must be"),
    (["http://127.0.0.1:9/v1", "--n", "99999999999999999999"], "--n takes a whole number"),
    (["http://127.0.0.1:9/v1", "--n", "100000"], "--n must be from 1"),
    (["http://127.0.0.1:9/v1", "--warmup", "1_0"], "--warmup takes a whole number"),
    (["http://127.0.0.1:9/v1", "--min-uptime", "-inf"], "--min-uptime takes a finite number"),
])
def test_probe_values_that_cannot_work_are_one_error_line(cli, body, args, contains):
    assert_one_line_error(cli("probe", *args, "--body", body), 2, contains)


def test_a_stored_probe_method_is_bounded_too(registry):
    """A stored `spacing: 100000` would sleep 28 h: the spec a stored method becomes is checked like the options."""
    from factreg.measure import probe

    for key, value in (("spacing", 100000), ("timeout", 1e9), ("n", 10**12), ("spacing", float("inf")),
                       ("n", float("inf")), ("url", "http://[::1")):
        method = {"kind": "probe", "url": "http://127.0.0.1:9/v1/chat/completions", "body": {}, key: value}
        got = probe.remeasure(method, [{"id": "a/b", "conditions": {"identity": {}}}], None)  # type: ignore[arg-type]
        assert got["a/b"].failure == "error", (key, value)


def test_export_and_init_where_nothing_can_be_written(cli, tmp_path):
    assert cli("record", "a/b", "-m", "ttft", "--value", "1").exit_code == 0
    assert_one_line_error(cli("export", "--out", "/"), 2, "cannot write /")
    assert_one_line_error(cli("export", "--out", str(tmp_path)), 2, f"cannot write {tmp_path}")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_one_line_error(cli("export", "--out", str(blocker / "sub" / "x.jsonl")), 2, "cannot write")
    assert_one_line_error(cli("init", "--dir", str(blocker)), 2, "cannot create")
    if Path("/proc/1").is_dir():
        assert_one_line_error(cli("init", "--dir", "/proc/1"), 2, "cannot create /proc/1/.factreg")


def _disk_full(monkeypatch):  # type: ignore[no-untyped-def]
    """Every atomic write fails as on a full disk (ENOSPC) once it has written its first bytes."""
    import errno
    import os as os_

    from factreg import atomic

    real = os_.fdopen

    class Full:
        def __init__(self, fh):  # type: ignore[no-untyped-def]
            self.fh = fh

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            self.fh.close()

        def write(self, data):  # type: ignore[no-untyped-def]
            self.fh.write(data[:10])
            raise OSError(errno.ENOSPC, os_.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode: Full(real(fd, mode)))


def test_a_full_disk_during_report_and_docs_sync_is_one_line(cli, tmp_path, monkeypatch):
    assert cli("record", "a/b", "-m", "ttft", "--value", "1").exit_code == 0
    assert cli("report", "--out", "site").exit_code == 0
    docs = Path("docs")
    docs.mkdir()
    (docs / "x.md").write_text("TTFT is <!-- fact: a/b -->0.5 s<!-- /fact -->.\n")
    assert cli("record", "a/b", "-m", "ttft", "--value", "2").exit_code == 0
    before = {p: p.read_bytes() for p in [*Path("site").rglob("*"), *docs.rglob("*")] if p.is_file()}
    _disk_full(monkeypatch)
    assert_one_line_error(cli("report", "--out", "site"), 2, "No space left on device")
    assert_one_line_error(cli("docs", "sync", "docs"), 2, "No space left on device")
    after = {p: p.read_bytes() for p in [*Path("site").rglob("*"), *docs.rglob("*")] if p.is_file()}
    assert after == before  # old files whole, no temp file left


@pytest.mark.parametrize("toml, contains", [
    ('[freshness]\nwarn_after = 5\n', "freshness.warn_after must be text"),
    ('freshness = 3\n', "[freshness] must be a table"),
    ('[freshness.metrics]\nttft = "7d"\n', "[freshness.metrics.ttft] must be a table"),
    ('[verify]\ntolerance = "ten percent"\n', "verify.tolerance must be a number"),
    ('[verify]\ntolerance = nan\n', "verify.tolerance must be a number"),
    ('[verify.tolerance_by_metric]\nttft = true\n', "verify.tolerance_by_metric.ttft must be a number"),
    ('[docs]\nroots = "."\n', "docs.roots must be a list of text"),
    ('[probe]\nmin_uptime_s = "300"\n', "probe.min_uptime_s must be a number"),
    ('[probe]\nmin_uptime_s = inf\n', "probe.min_uptime_s must be a number"),
    ('[verify]\nconfirm_refutes = 1.5\n', "verify.confirm_refutes must be a whole number"),
    # issue 30: keys read only when a command uses them were not checked when the file was read
    ('[probe]\nallow_env = 5\n', "probe.allow_env must be a list of text"),
    ('[probe]\nallow_env = "AWS_SECRET_ACCESS_KEY"\n', "probe.allow_env must be a list of text"),
    ('[bench]\nmodel_roots = "/"\n', "bench.model_roots must be a list of text"),
    ('[verify]\ncontrol = {a = 1}\n', "verify.control must be true or false"),
    ('[verify]\ncontrol = "sometimes"\n', "verify.control must be true or false"),
    ('[report]\nlang = 5\n', "report.lang must be text"),
    ('report = 5\n', "[report] must be a table"),
    ("".join(f"[t{i}]\nk = 1\n" for i in range(120_000)), "is over 1024 KiB"),
])
def test_wrong_types_in_the_config_file(cli, toml, contains):
    Path(".factreg").mkdir()
    Path(".factreg/config.toml").write_text(toml)
    assert cli("record", "a/b", "-m", "ttft", "--value", "1").exit_code == 2
    for args in (["list"], ["status"], ["show", "a/b"]):
        assert_one_line_error(cli(*args), 2, contains)


@pytest.mark.parametrize("where", ["cond", "note", "unit"])
def test_user_text_never_reaches_rich_markup(cli, where):
    text = "[/bold] [red]x[/red] [link=http://e.invalid]y"
    extra = {"cond": ["--cond", f"model={text}"], "note": ["--value", "1", "--note", text],
             "unit": ["--unit", text, "--direction", "higher"]}[where]
    args = ["record", "a/b", "-m", "custom_metric" if where == "unit" else "ttft", *extra]
    if "--value" not in args:
        args += ["--value", "1"]
    r = cli(*args)
    assert r.exit_code == 0, r.stderr
    assert text in r.stdout
    for cmd in (["show", "a/b"], ["history", "a/b"], ["list"]):
        r = cli(*cmd)
        assert r.exit_code == 0 and r.stderr.startswith(("", "1 fact")), r.stderr
        if where != "note" and cmd != ["history", "a/b"] and not (where == "cond" and cmd == ["list"]):
            assert text in r.stdout.replace("\n", "")


def test_an_unexpected_exception_is_one_internal_error_line(cli, monkeypatch):
    from factreg.registry import facts

    def broken(*_a, **_k):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom\nsecond line")

    assert cli("record", "a/b", "-m", "ttft", "--value", "1").exit_code == 0
    monkeypatch.setattr(facts, "list_facts", broken)
    r = cli("list")
    assert r.exit_code == 70
    assert r.stderr.startswith("Error: internal error: RuntimeError: boom (traceback in ") and r.stderr.count("\n") == 1
    trace = Path(r.stderr.split("traceback in ", 1)[1].split(";", 1)[0])
    assert "Traceback" in trace.read_text() and "boom" in trace.read_text()
    trace.unlink()
    monkeypatch.setenv("FACTREG_DEBUG", "1")
    r = cli("list")
    assert r.exit_code == 70 and "Traceback" in r.stderr
    assert r.stderr.splitlines()[-1] == "Error: internal error: RuntimeError: boom (traceback above)"


# ---------------------------------------------------------------- a fact keeps its metric


def test_a_new_version_with_another_metric_is_refused(cli, tmp_path):
    assert cli("record", "a/b", "-m", "ttft", "--samples", "0.4,0.5").exit_code == 0
    assert cli("record", "a/c", "-m", "ttft", "--samples", "0.2,0.25").exit_code == 0
    before = cli("export").stdout
    assert_one_line_error(cli("record", "a/b", "-m", "tg_rate", "--value", "10"), 2,
                          "fact a/b measures ttft (s); a new version cannot measure tg_rate")
    assert_one_line_error(cli("record", "a/b", "-m", "lat", "--unit", "ms", "--direction", "lower", "--value", "3"),
                          2, "a new version cannot measure lat")
    r = cli("compare", "a/b", "a/c", "--record", "a/b")
    assert r.exit_code == 2 and "a new version cannot measure ratio" in r.stderr
    assert_one_line_error(_import_text(cli, tmp_path, '{"id": "a/c", "metric": "e2e", "value": 1}\n'), 2,
                          "fact a/c measures ttft")
    two = json.loads(before.splitlines()[0])
    two["versions"].append({**two["versions"][0], "version": 2, "metric": "tg_rate", "unit": "tok/s"})
    two["current_version"] = 2
    assert_one_line_error(_import_text(cli, tmp_path, json.dumps(two) + "\n"), 2, "measures tg_rate")
    assert_one_line_error(_import_text(cli, tmp_path, '{"id": "n/x", "metric": "ttft", "value": 1}\n'
                                       '{"id": "n/x", "metric": "e2e", "value": 1}\n'), 2, "fact n/x measures ttft")
    assert cli("export").stdout == before  # nothing stored
    assert cli("record", "a/b", "-m", "ttft", "--value", "0.6").exit_code == 0  # the same metric still records


# ---------------------------------------------------------------- smaller


@pytest.mark.parametrize("args, contains", [
    (["record", "a/b", "-m", "ttft", "--samples", "1_000"], "every sample must be a number"),
    (["record", "a/b", "-m", "ttft", "--value", "1_000"], "--value must be a number"),
    (["record", "a/b", "-m", "ttft", "--value", "١٢"], "--value must be a number"),
    (["record", "a/b", "-m", "ttft", "--value", "1", "--n", "1_0"], "--n takes a whole number"),
    (["record", "a/b", "-m", "ttft", "--value", "1", "--spread", "0_5"], "--spread must be a number"),
    (["record", "a/b", "-m", "ttft", "--value", "1", "--tolerance", "0_1"], "--tolerance takes a finite number"),
])
def test_underscores_in_numbers_are_refused(cli, args, contains):
    assert_one_line_error(cli(*args), 2, contains)
    assert registry_is_empty(cli)


@pytest.mark.parametrize("date", ["2026-99-99", "2026-02-30", "0001-01-01", "2026-1-1"])
def test_decision_dates_must_be_real_days(cli, date):
    assert cli("record", "a/b", "-m", "ttft", "--value", "1").exit_code == 0
    r = cli("decision", "add", "Use it", "--cites", "a/b", "--date", date)
    assert_one_line_error(r, 2, "--date must be YYYY-MM-DD")
    assert cli("decision", "list", "--json").json() == []


def test_jsonl_with_a_byte_order_mark_imports(cli, tmp_path):
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b'\xef\xbb\xbf{"id": "a/b", "metric": "ttft", "value": 1}\n')
    r = cli("import", str(f))
    assert r.exit_code == 0, r.stderr
    assert [x["id"] for x in cli("list", "--json").json()] == ["a/b"]


def test_import_of_an_endless_device_stops_at_once(cli, tmp_path):
    """An endless input is refused from its first chunk: a real pipe fed NUL bytes without end has been read
    for at most a few chunks when the reader gives up (counted in bytes, not seconds)."""
    import threading

    for device in ("/dev/zero", "/dev/urandom"):
        if Path(device).exists():
            assert_one_line_error(cli("import", device), 2, "binary file")
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    fed = [0]

    def feed() -> None:
        with open(fifo, "wb") as fh:
            try:
                while fed[0] < 64 * 1024 * 1024:  # bounded: a reader that never stops fails the count below
                    fh.write(b"\0" * 65536)
                    fed[0] += 65536
            except BrokenPipeError:  # the reader closed the pipe: what it did not read is not counted
                pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    assert_one_line_error(cli("import", str(fifo)), 2, "binary file")
    feeder.join(timeout=60)
    assert not feeder.is_alive()
    assert fed[0] <= 8 * 1024 * 1024, fed[0]  # a chunk of 1 MB and the pipe's buffer, not the 256 MB limit
    assert registry_is_empty(cli)


def test_import_line_limit(monkeypatch, tmp_path, cli):
    from factreg.registry import jsonl

    monkeypatch.setattr(jsonl.parse, "MAX_LINE", 100)
    assert_one_line_error(_import_text(cli, tmp_path, '{"id": "a/b", "metric": "ttft", "value": 1, "note": "'
                                       + "x" * 200 + '"}\n'), 2, "line longer than 100")


# Values no measurement of the metric can have: (metric, --value or --samples, what the error names).
IMPOSSIBLE_VALUES = [
    ("ttft", ["--value=-1"], "ttft (s) cannot be below 0"),
    ("tg_rate", ["--samples=-5,-6,-7"], "tg_rate (tok/s) cannot be below 0"),
    ("e2e", ["--samples=0.5,-0.1,0.6"], "e2e (s) cannot be below 0"),
    ("ttft_p90", ["--value=-0.2"], "ttft_p90 (s) cannot be below 0"),
    ("answer_tokens", ["--value=-3"], "answer_tokens (tok) cannot be below 0"),
    ("goodput", ["--value=1.5"], "goodput (share) cannot be above 1"),
    ("reachable", ["--value=2"], "reachable (bool) cannot be above 1"),
    ("ratio", ["--value=-2"], "ratio (×) cannot be below 0"),
]


@pytest.mark.parametrize("metric, given, contains", IMPOSSIBLE_VALUES)
def test_a_value_its_metric_cannot_have_is_refused_by_every_entry_point(cli, tmp_path, metric, given, contains):
    """One rule per metric (`metrics.check_value`, applied by `facts.build_rows` and to imported `fact` lines):
    `record`, an import's record line and its fact line refuse it alike, nothing stored (before: the first two
    stored `-1.00 s` and `-6.00 ± 1.00 tok/s`, the third a negative version). The MCP tool: tests/test_mcp.py."""
    args = ["record", "a/b", "-m", metric, *given, "--cond", "model=m", "--cond", "endpoint=e", "--cond", "machine=x"]
    assert_one_line_error(cli(*args), 2, contains)
    assert registry_is_empty(cli)
    option, _, numbers = given[0].partition("=")
    values = [float(x) for x in numbers.split(",")]
    line = {"id": "a/b", "metric": metric, **({"value": values[0]} if option == "--value" else {"samples": values})}
    assert_one_line_error(_import_text(cli, tmp_path, json.dumps(line) + "\n"), 2, contains)
    unit = {"ttft": "s", "e2e": "s", "ttft_p90": "s", "tg_rate": "tok/s", "answer_tokens": "tok", "goodput": "share",
            "reachable": "bool", "ratio": "×"}[metric]
    fact = json.loads(_fact_line(metric=metric, unit=unit, value=values[len(values) // 2] if option == "--samples"
                                 else values[0], samples=values if option == "--samples" else []))
    assert_one_line_error(_import_text(cli, tmp_path, json.dumps(fact) + "\n"), 2, contains)
    assert registry_is_empty(cli)


def test_a_custom_metric_may_be_negative_and_a_latency_may_be_zero(cli):
    assert cli("record", "a/t", "-m", "temp_change", "--unit", "°C", "--value=-3").exit_code == 0
    assert cli("record", "a/z", "-m", "ttfb", "--samples", "0,0.001,0.002", "--cond", "model=m").exit_code == 0
    assert cli("record", "a/g", "-m", "goodput", "--value", "1", "--cond", "model=m").exit_code == 0


def test_samples_per_version_are_capped_at_every_entry_point(cli, tmp_path, db_url):
    """At most stats.MAX_SAMPLES (100,000) samples per version, refused before anything is stored, by `record`,
    an import's record and fact lines, llama-benchy's values and the MCP `record` tool (before: the MCP tool took
    1,000,000 samples, 46 s and a 66 MB registry); exactly the cap is recorded."""
    from factreg import stats
    from tests.test_mcp import session_calls

    over = [0.5] * (stats.MAX_SAMPLES + 1)
    cond = ["--cond", "model=m", "--cond", "endpoint=e"]
    assert_one_line_error(cli("record", "a/b", "-m", "ttft", "--samples", ",".join(map(str, over)), *cond), 2,
                          "at most 100,000")
    line = json.dumps({"id": "a/b", "metric": "ttft", "samples": over})
    assert_one_line_error(_import_text(cli, tmp_path, line + "\n"), 2, "at most 100,000")
    assert_one_line_error(_import_text(cli, tmp_path, _fact_line(samples=over) + "\n"), 2, "at most 100,000")
    benchy = {"version": "0.3", "model": "m", "timestamp": "2026-10-26T00:00:00Z", "benchmarks": [
        {"concurrency": 1, "prompt_size": 8, "response_size": 8, "e2e_ttft": {"values": [500.0] * len(over)}}]}
    path = tmp_path / "benchy.json"
    path.write_text(json.dumps(benchy), encoding="utf-8")
    assert_one_line_error(cli("import", "llama-benchy", str(path)), 2, "at most 100,000")
    _, [(is_error, text, _)] = session_calls(db_url, [
        ("record", {"id": "a/b", "metric": "ttft", "samples": over, "identity": {"model": "m"}})], "--allow-write")
    assert is_error and "at most 100,000" in text, text
    assert registry_is_empty(cli)
    at_cap = ",".join(map(str, over[:-1]))
    assert cli("record", "a/b", "-m", "ttft", "--samples", at_cap, *cond).exit_code == 0
    assert cli("show", "a/b", "--json").json()["n"] == stats.MAX_SAMPLES


def test_status_reads_no_sample(cli, tmp_path, db_path):
    """`status` is independent of how many samples facts hold: it answers the same with the sample table gone."""
    import sqlite3

    cond = ["--cond", "model=m", "--cond", "endpoint=e"]
    assert cli("record", "a/big", "-m", "ttft", "--samples", ",".join(["0.5"] * 20_000), *cond).exit_code == 0
    assert cli("record", "a/small", "-m", "ttft", "--samples", "0.4,0.5,0.6", *cond).exit_code == 0
    before = cli("status", "--json")
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("ALTER TABLE sample RENAME TO sample_gone")
    conn.close()
    after = cli("status", "--json")
    assert after.exit_code == before.exit_code == 0, after.stderr
    assert after.stdout == before.stdout and after.stderr == before.stderr


def _fact_line_with_verification(**changes) -> str:  # type: ignore[no-untyped-def]
    line = json.loads(_fact_line(samples=[0.9, 1.0, 1.1], n=3))
    verification = {"fact_version": 1, "verified_at": "2026-10-27T00:00:00Z", "verdict": "confirmed",
                    "method_kind": "manual", "hostname": "h", "value": 1.0, "spread": 0.1, "n": 3,
                    "samples": "[0.9, 1.0, 1.1]", "observed": "{}", "diff": "{}", "message": "ok", **changes}
    line["verifications"] = [{k: v for k, v in verification.items() if v is not ...}]
    return json.dumps(line)


@pytest.mark.parametrize("changes, contains", [
    ({"value": "abc"}, "value 'abc' is not a finite number"),  # was exit 70: could not convert string to float
    ({"value": -5.0}, "cannot be below 0"),
    ({"samples": "[[[not"}, "samples '[[[not' is not a JSON list"),
    ({"samples": "[0.5, \"x\"]"}, "a sample that is not a finite number"),
    ({"samples": json.dumps([1.0] * 100_001)}, "at most 100,000"),
    ({"verdict": "pwned"}, "verdict 'pwned'"),
    ({"observed": "[1, 2]"}, "observed '[1, 2]' is not a JSON object"),
    ({"fact_version": 99}, "version '99'"),
    ({"n": 0}, "n '0'"),
    ({"pk": "abc"}, "pk 'abc'"),
    ({"method_kind": ...}, "no method_kind"),
])
def test_imported_verifications_are_checked_like_what_verify_writes(cli, tmp_path, changes, contains):
    """A `fact` line's verifications are checked field by field before anything is stored (before: stored as
    they came — an unknown verdict shown by `history`, samples that were not JSON — or exit 70 for a value that
    is not a number)."""
    assert_one_line_error(_import_text(cli, tmp_path, _fact_line_with_verification(**changes) + "\n"), 2, contains)
    assert registry_is_empty(cli)


def test_a_good_imported_verification_is_stored(cli, tmp_path):
    r = _import_text(cli, tmp_path, _fact_line_with_verification(pk=7) + "\n")
    assert r.exit_code == 0, r.stderr
    assert cli("history", "a/b", "--json").json()[0]["verifications"][0]["verdict"] == "confirmed"


@pytest.mark.parametrize("args", [["--min-segment", "1_0"], ["--min-segment", "\u0664"], ["--alpha", "nan"],
                                  ["--alpha", "1_0e-2"]])
def test_changes_options_take_plain_numbers(cli, args):
    assert cli("record", "a/b", "-m", "ttft", "--value", "1", "-c", "model=m").exit_code == 0
    assert_one_line_error(cli("changes", *args), 2, args[0])
