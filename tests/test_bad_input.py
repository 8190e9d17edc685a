"""Bad input as a new user would type it: one line `Error: …`, exit 2, nothing recorded."""

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
