"""`factreg import llama-bench` on output as people paste it: dates, documents, sweeps, repeats, ids, SQL text."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from factreg.measure import llamabench_output as lbo
from tests.llamabench_support import DATA


def one_line_error(r, contains: str, code: int = 2) -> None:
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr and contains in r.stderr, r.stderr


def fact_count(cli) -> int:
    r = cli("list", "--json")
    return 0 if r.exit_code == 2 else len(r.json())


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- 1. never a made-up date


@pytest.mark.parametrize("name", ["new.md", "old.md", "no-test-time.csv"])
def test_output_without_a_date_is_refused_without_measured_at(cli, tmp_path, name):
    if name.endswith(".csv"):  # CSV from a build that does not print test_time
        rows = list(csv.reader(io.StringIO((DATA / "new.csv").read_text(encoding="utf-8"))))
        drop = rows[0].index("test_time")
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([c for i, c in enumerate(row) if i != drop] for row in rows)
        path = write(tmp_path, name, buf.getvalue())
        assert "test_time" not in lbo.read_file(path)[1][0].fields
    else:
        path = DATA / name
    r = cli("import", "llama-bench", str(path))
    one_line_error(r, "--measured-at")
    assert "carries no date" in r.stderr
    assert fact_count(cli) == 0
    r = cli("import", "llama-bench", str(path), "--measured-at", "2026-10-26T14:05:00+02:00", "--json")
    assert r.exit_code == 0, r.stderr
    facts = cli("list", "--json").json()
    assert facts and {f["measured_at"] for f in facts} == {"2026-10-26T12:05:00Z"}
    assert {f["recorded_at"] for f in facts} == {"2026-11-30T12:00:00Z"}  # the import's time stays recorded_at


@pytest.mark.parametrize("bad", ["yesterday", "26/10/2026", "0001-01-01", "2026-13-01", ""])
def test_an_invalid_measured_at_is_one_line_and_stores_nothing(cli, bad):
    r = cli("import", "llama-bench", str(DATA / "new.md"), "--measured-at", bad)
    one_line_error(r, "--measured-at")
    assert fact_count(cli) == 0


def test_a_dated_format_keeps_its_own_test_time(cli):
    r = cli("import", "llama-bench", str(DATA / "new.json"), "--measured-at", "2020-01-01", "--json")
    assert r.exit_code == 0, r.stderr
    assert "dated by llama-bench's own test_time" in r.stderr
    got = {f["id"]: f["measured_at"] for f in cli("list", "--json").json()}
    # `bench`'s ids: <machine>/<model file's stem>/<test>
    assert got == {"testhost/qwen3-35b-a3b-q4-k-m/pp512": "2026-10-26T02:10:00Z",
                   "testhost/qwen3-35b-a3b-q4-k-m/tg32": "2026-10-26T02:10:20Z"}


def test_cond_info_and_id_apply_to_every_imported_fact(cli):
    r = cli("import", "llama-bench", str(DATA / "new.md"), "--measured-at", "2026-10-26", "--id", "gamebox/a3b",
            "--cond", "machine=gamebox", "-c", "gpu_driver=580.1", "--info", "who=ops", "--json")
    assert r.exit_code == 0, r.stderr
    facts = {f["id"]: f for f in cli("list", "--json").json()}
    assert sorted(facts) == ["gamebox/a3b/pp512", "gamebox/a3b/pp512-tg128", "gamebox/a3b/tg32",
                             "gamebox/a3b/tg32-d4096"]
    for f in facts.values():
        assert f["conditions"]["identity"]["machine"] == "gamebox"
        assert f["conditions"]["identity"]["gpu_driver"] == "580.1"
        assert f["conditions"]["info"]["who"] == "ops"
    for bad, contains in ((["--cond", "novalue"], "key=value"), (["--id", "Bad Id!"], "id"),
                          (["--info", "=x"], "--info")):
        r = cli("import", "llama-bench", str(DATA / "new.md"), "--measured-at", "2026-10-26", *bad)
        one_line_error(r, contains)
    r = cli("import", "jsonl", str(DATA / "new.json"), "--measured-at", "2026-10-26")  # not a JSONL option
    one_line_error(r, "import llama-bench")
    assert fact_count(cli) == 4


# ---------------------------------------------------------------- 2. tables as people paste them

DOCUMENT = """\
---
title: "Benchmarks on the 3090"
tags: [llama.cpp, bench]
---

# Results

Logs first, then the table:

```
ggml_cuda_init: found 1 CUDA devices:
llama_model_loader: loaded meta data with 33 key-value pairs
```

| model                          |       size |     params | backend    | ngl | n_ubatch |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | -------: | --------------: | -------------------: |
| qwen3moe 30B.A3B Q4_K - Medium |  16.47 GiB |    30.53 B | CUDA       |  99 |      512 |           pp512 |      3008.35 ± 25.11 |
llama_perf_context_print: load time = 1234.5 ms
| qwen3moe 30B.A3B Q4_K - Medium |  16.47 GiB |    30.53 B | CUDA       |  99 |      512 |           tg128 |        152.71 ± 0.42 |
| qwen3moe 30B.A3B Q4_K - Medium |  16.47 GiB |    30.53 B | CUDA       |  99 |     1024 |           pp512 |      3120.02 ± 11.90 |
| qwen3moe 30B.A3B Q4_K - Medium |  16.47 GiB |    30.53 B | CUDA       |  99 |     1024 |           tg128 |        151.98 ± 0.37 |

build: 7f6980fa (6512)

## With the KV cache filled

| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| qwen3moe 30B.A3B Q4_K - Medium |  16.47 GiB |    30.53 B | CUDA       |  99 |   tg128 @ d4096 |        131.06 ± 1.18 |
| qwen3moe 30B.A3B Q4_K - Medium |  16.47 GiB |    30.53 B | CUDA       |  99 |      tg64@pp512 |        148.20 ± 0.90 ||

build: 7f6980fa (6512)

| other table | test | x |
| --- | --- | --- |
| not llama-bench | 1 | 2 |
"""


def test_every_table_of_a_pasted_document_is_imported(cli, tmp_path):
    path = write(tmp_path, "post.md", DOCUMENT)
    r = cli("import", "llama-bench", str(path), "--measured-at", "2026-10-20", "--json")
    assert r.exit_code == 0, r.stderr
    facts = {f["id"]: f for f in cli("list", "--json").json()}
    m = "testhost/qwen3moe-30b.a3b-q4-k-medium"  # no file name in a table: the model's type
    # Read by hand from DOCUMENT: the first table sweeps n_ubatch (512, 1024); the second has depth tests.
    want = {
        f"{m}/pp512-ub512": ("pp_rate", 3008.35, 25.11, "0", "512"),
        f"{m}/tg128-ub512": ("tg_rate", 152.71, 0.42, "0", "512"),
        f"{m}/pp512-ub1024": ("pp_rate", 3120.02, 11.90, "0", "1024"),
        f"{m}/tg128-ub1024": ("tg_rate", 151.98, 0.37, "0", "1024"),
        f"{m}/tg128-d4096": ("tg_rate", 131.06, 1.18, "4096", None),
        f"{m}/tg64-d512": ("tg_rate", 148.20, 0.90, "512", None),
    }
    assert sorted(facts) == sorted(want)
    for fid, (metric, value, spread, depth, ubatch) in want.items():
        f = facts[fid]
        assert (f["metric"], f["value"], f["spread"], f["n"]) == (metric, value, spread, None), fid
        ident = f["conditions"]["identity"]
        assert ident["n_depth"] == depth and ident.get("n_ubatch") == ubatch, fid
        assert (ident["build_commit"], ident["build_number"]) == ("7f6980fa", "6512"), fid
        assert ident["model_type"] == "qwen3moe 30B.A3B Q4_K - Medium" and ident["n_gpu_layers"] == "99"
        assert f["measured_at"] == "2026-10-20T00:00:00Z"
    assert facts[f"{m}/tg64-d512"]["conditions"]["identity"]["n_prompt"] == "0"  # ik's -gp: after a 512 prompt
    assert facts[f"{m}/tg64-d512"]["conditions"]["identity"]["n_gen"] == "64"
    # stderr says where the tables were and which lines were skipped.
    err = r.stderr
    # (counted by hand: front matter to the code block 1-13, the heading 25, the other table 34-36; build lines and
    # blank lines are not reported)
    assert "read 6 result(s) from 2 llama-bench table(s) at lines 15-21, 27-30" in err, err
    assert "skipped 14 non-blank line(s) outside the tables" in err and "lines 1-13, 25, 34-36" in err, err
    assert "skipped 1 line(s) inside tables: line 18 (not a table row)" in err, err


def test_a_console_capture_with_logs_and_a_log_row(cli, tmp_path):
    text = ("$ ./llama-bench -m q.gguf -p 64 -n 16\n"
            "ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\n"
            "llama_model_load: error loading model hparams\n"
            "| model | size | params | backend | threads | test | t/s |\n"
            "| ----- | ---: | -----: | ------- | ------: | ---: | --: |\n"
            "| ============ Repacked 12 tensors | | | | | | |\n"
            "| llama 8B Q4_0 | 4.33 GiB | 8.03 B | CPU | 8 | pp64 | 55.50 ± 0.25 |\n"
            "| llama 8B Q4_0 | 4.33 GiB | 8.03 B | CPU | 8 | tg16 | 9.75 ± 0.05 |\n"
            "build: 1a2b3c4d (4000)\n")
    path = write(tmp_path, "console.txt", text)
    reading = lbo.read(path)
    assert reading.fmt == "md" and reading.tables == [(4, 8)]
    assert [(r.n_prompt, r.n_gen, r.avg_ts, r.stddev_ts, r.line) for r in reading.results] == [
        (64, 0, 55.5, 0.25, 7), (0, 16, 9.75, 0.05, 8)]
    assert reading.skipped == [(1, 3)] and reading.skipped_count == 3
    assert reading.skipped_rows == [(6, "no test name (a log line captured as a row)")]
    assert reading.results[0].fields["build_commit"] == "1a2b3c4d"
    r = cli("import", "llama-bench", str(path), "--measured-at", "2026-10-20", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["ids"] == ["testhost/llama-8b-q4-0/pp64@1", "testhost/llama-8b-q4-0/tg16@1"]


@pytest.mark.parametrize("text, contains", [
    ("# Notes\n\nno table here\n", "a Markdown table with 'test' and 't/s' columns"),
    ("| a | b |\n| - | - |\n| 1 | 2 |\n", "a Markdown table with 'test' and 't/s' columns"),
    ("| model | test | t/s |\n| - | - | - |\n| m | | |\n", "no llama-bench table"),
    ("| model | test | t/s |\n| - | - | - |\n| m | pp512 | 1 ± 0 | 3 |\n", "line 3: 4 cells"),
    ("| model | test | t/s |\n| - | - | - |\n| m | tg64@zz | 1 ± 0 |\n", "test name"),
])
def test_documents_without_a_readable_table_are_refused(cli, tmp_path, text, contains):
    r = cli("import", "llama-bench", str(write(tmp_path, "doc.md", text)), "--measured-at", "2026-10-20")
    one_line_error(r, contains)
    assert fact_count(cli) == 0


# ---------------------------------------------------------------- 3. sweeps, repeats, runs

SWEEP = """\
| model                  |       size |     params | backend | threads | moe-cache |         lm |  test |          t/s |
| ---------------------- | ---------: | ---------: | ------- | ------: | --------: | ---------: | ----: | -----------: |
| llama 8B Q4_K - Medium |   4.58 GiB |     8.03 B | CPU     |       8 |         0 |       mmap | tg128 | 10.00 ± 0.10 |
| llama 8B Q4_K - Medium |   4.58 GiB |     8.03 B | CPU     |       8 |         1 |       mmap | tg128 | 12.00 ± 0.20 |
| llama 8B Q4_K - Medium |   4.58 GiB |     8.03 B | CPU     |       8 |         0 |     direct | tg128 |  9.00 ± 0.30 |
| llama 8B Q4_K - Medium |   4.58 GiB |     8.03 B | CPU     |       8 |         1 |     direct | tg128 | 11.00 ± 0.40 |
| llama 8B Q4_K - Medium |   4.58 GiB |     8.03 B | CPU     |       8 |         1 |     direct | tg128 | 11.50 ± 0.30 |

build: 5e6f7a8b (6600)
"""


def test_a_swept_column_factreg_does_not_know_is_identity_and_in_the_id(cli, tmp_path):
    """moe-cache is unknown to factreg, lm is llama.cpp's title for load_mode; both vary within the run. The last
    row repeats the one before it (same test, every column the same): one measurement, merged, not two versions."""
    path = write(tmp_path, "sweep.md", SWEEP)
    r = cli("import", "llama-bench", str(path), "--measured-at", "2026-10-20", "--json")
    assert r.exit_code == 0, r.stderr
    assert "merged 1 repeated row(s)" in r.stderr
    facts = {f["id"]: f for f in cli("list", "--json").json()}
    m = "testhost/llama-8b-q4-k-medium"
    assert sorted(facts) == sorted([f"{m}/tg128-lmmmap-moe-cache0", f"{m}/tg128-lmmmap-moe-cache1",
                                    f"{m}/tg128-lmdirect-moe-cache0", f"{m}/tg128-lmdirect-moe-cache1"])
    one = facts[f"{m}/tg128-lmmmap-moe-cache1"]
    assert (one["value"], one["spread"], one["n"]) == (12.0, 0.2, None)
    assert one["conditions"]["identity"]["moe-cache"] == "1" and one["conditions"]["identity"]["load_mode"] == "mmap"
    assert "lm" not in one["conditions"]["identity"] and "lm" not in one["conditions"]["info"]
    merged = facts[f"{m}/tg128-lmdirect-moe-cache1"]
    assert merged["samples"] == [11.0, 11.5] and merged["n"] == 2 and merged["value"] == pytest.approx(11.25)
    assert merged["conditions"]["info"]["repeats"] == "2"
    assert len(cli("history", f"{m}/tg128-lmdirect-moe-cache1", "--json").json()) == 1


def test_repeated_json_results_pool_their_samples(cli, tmp_path):
    one = json.loads((DATA / "new.json").read_text(encoding="utf-8"))[1]  # tg32, samples 4, 6, 11, 18.5, 20
    again = {**one, "samples_ts": [10.0, 12.0], "samples_ns": [3.2e9, 2.6666e9], "avg_ts": 11.0}
    path = write(tmp_path, "twice.json", json.dumps([one, again]))
    r = cli("import", "llama-bench", str(path), "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["ids"] == ["testhost/qwen3-35b-a3b-q4-k-m/tg32@1"]
    f = cli("show", "testhost/qwen3-35b-a3b-q4-k-m/tg32", "--json").json()
    assert f["samples"] == [4.0, 6.0, 11.0, 18.5, 20.0, 10.0, 12.0] and f["n"] == 7
    assert f["value"] == pytest.approx(81.5 / 7)


def test_the_same_test_in_two_runs_of_a_document(cli, tmp_path):
    """Two tables: told apart by what differs (the build), else by their run number."""
    table = ("| model | backend | threads | test | t/s |\n| --- | --- | ---: | ---: | ---: |\n"
             "| llama 8B Q4_0 | CPU | 16 | pp512 | {} ± 1.00 |\n\n")
    by_build = table.format("100.00") + "build: aaaa111 (1)\n\n" + table.format("120.00") + "build: bbbb222 (2)\n"
    r = cli("import", "llama-bench", str(write(tmp_path, "builds.md", by_build)), "--measured-at", "2026-10-20",
            "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["ids"] == ["testhost/llama-8b-q4-0/pp512-buildaaaa111@1",
                               "testhost/llama-8b-q4-0/pp512-buildbbbb222@1"]
    same = table.format("100.00") + "text between\n\n" + table.format("174.00")
    r = cli("import", "llama-bench", str(write(tmp_path, "runs.md", same)), "--measured-at", "2026-10-20", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["ids"] == ["testhost/llama-8b-q4-0/pp512-run1@1", "testhost/llama-8b-q4-0/pp512-run2@1"]
    values = {f["id"]: (f["value"], f["conditions"]["info"]["source_run"]) for f in cli("list", "--json").json()
              if f["id"].endswith(("-run1", "-run2"))}
    assert values == {"testhost/llama-8b-q4-0/pp512-run1": (100.0, "1"),
                      "testhost/llama-8b-q4-0/pp512-run2": (174.0, "2")}


def test_a_table_without_a_model_column_needs_an_id(cli, tmp_path):
    path = write(tmp_path, "cut.md", "| thp | test | t/s |\n| --: | ---: | ---: |\n| 1 | pp512 | 153.14 ± 1.29 |\n")
    one_line_error(cli("import", "llama-bench", str(path), "--measured-at", "2026-10-20"), "--id")
    r = cli("import", "llama-bench", str(path), "--measured-at", "2026-10-20", "--id", "box/ds", "--json")
    assert r.json()["ids"] == ["box/ds/pp512@1"]


def test_markdown_column_titles_are_llama_benchs_field_names():
    """From llama.cpp's and ik_llama.cpp's `get_field_display_name`."""
    mainline = {"ngl": "n_gpu_layers", "sm": "split_mode", "threads": "n_threads", "nkvo": "no_kv_offload",
                "fa": "flash_attn", "lm": "load_mode", "embd": "embeddings", "nopo": "no_op_offload",
                "noh": "no_host", "dev": "devices", "ts": "tensor_split", "ot": "tensor_buft_overrides",
                "fitt": "fit_target", "fitc": "fit_min_ctx"}
    ik = {"mla": "mla_attn", "amb": "attn_max_batch", "mmap": "use_mmap", "rtr": "repack", "thp": "use_thp",
          "fmoe": "fused_moe", "ger": "grouped_er"}
    for title, field in {**mainline, **ik}.items():
        assert lbo.MD_COLUMNS[title] == field, title


# ---------------------------------------------------------------- 4. -o sql text


def test_sql_text_imports_like_the_database(cli, tmp_path):
    r = cli("import", "llama-bench", str(DATA / "new.sql"), "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["sql"] == 1 and r.json()["facts"] == 2
    tg = cli("show", "testhost/qwen3-35b-a3b-q4-k-m/tg32", "--json").json()
    assert (tg["value"], tg["spread"], tg["measured_at"]) == (11.9, 7.197222, "2026-10-26T02:10:20Z")
    assert tg["conditions"]["identity"]["n_cpu_moe"] == "30" and tg["conditions"]["info"]["source_format"] == "sql"
    old = lbo.read_file(DATA / "old.sql")
    assert old[0] == "sql" and [(x.n_gen, x.avg_ts) for x in old[1]] == [(32, 28.0)]


NEW_SQL = (DATA / "new.sql").read_text(encoding="utf-8")
HOSTILE_SQL = {
    "attach": ("ATTACH DATABASE '{tmp}/x.db' AS x;\n" + NEW_SQL, "ATTACH"),
    "trigger": (NEW_SQL + "CREATE TRIGGER t AFTER INSERT ON llama_bench BEGIN DELETE FROM llama_bench; END;\n",
                "CREATE TRIGGER"),
    "drop": (NEW_SQL + "DROP TABLE llama_bench;\n", "not allowed"),
    "load_extension": ("SELECT load_extension('{tmp}/evil.so');\n" + NEW_SQL, "FUNCTION load_extension"),
    "pragma": ("PRAGMA writable_schema = ON;\n" + NEW_SQL, "PRAGMA"),
    "other_table": (NEW_SQL + "CREATE TABLE notes (x TEXT);\n", "CREATE TABLE notes"),
    "view": (NEW_SQL + "CREATE VIEW v AS SELECT 1;\n", "CREATE VIEW"),
    "read_back": (NEW_SQL + "INSERT INTO llama_bench SELECT * FROM llama_bench;\n", "READ llama_bench"),
    "recursive": (NEW_SQL + "INSERT INTO llama_bench (n_prompt, n_gen, avg_ts) WITH RECURSIVE c(x) AS "
                  "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 0, 1, x FROM c;\n", "RECURSIVE"),
    "zeroblob": (NEW_SQL + "INSERT INTO llama_bench (n_prompt, n_gen, avg_ts) VALUES (0, 1, zeroblob(1e9));\n",
                 "FUNCTION zeroblob"),
    "huge_value": (NEW_SQL + "INSERT INTO llama_bench (n_prompt, n_gen, avg_ts, cpu_info) VALUES "
                   "(0, 1, 1, '" + "x" * 2_000_000 + "');\n", "too"),
    "many_rows": (NEW_SQL.split("INSERT")[0] + "INSERT INTO llama_bench (n_prompt, n_gen, avg_ts) VALUES "
                  + ",".join(["(0,1,1)"] * (getattr(lbo, "MAX_SQL_ROWS", 100_000) + 1)) + ";\n", "more than llama-bench"),
    "transaction": ("BEGIN;\n" + NEW_SQL + "COMMIT;\n", "TRANSACTION"),
    "temp_table": ("CREATE TEMP TABLE llama_bench (n_prompt INTEGER, n_gen INTEGER, avg_ts REAL);\n", "not allowed"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_SQL))
def test_hostile_sql_is_refused_with_one_line(cli, tmp_path, name):
    text, contains = HOSTILE_SQL[name]
    path = write(tmp_path, f"{name}.sql", text.replace("{tmp}", str(tmp_path)))
    r = cli("import", "llama-bench", str(DATA / "new.json"), str(path))
    one_line_error(r, contains)
    assert "not llama-bench's -o sql output" in r.stderr or "more than" in r.stderr
    assert fact_count(cli) == 0
    assert not (tmp_path / "x.db").exists()


def test_sql_over_the_size_limit_is_refused_before_reading(cli, tmp_path):
    path = tmp_path / "huge.sql"
    with path.open("wb") as fh:
        fh.write(NEW_SQL.encode())
        fh.truncate(lbo.MAX_INPUT_BYTES + 1)
    one_line_error(cli("import", "llama-bench", str(path)), "too large")
    assert fact_count(cli) == 0
