"""Every fact can get a method: `factreg method ID --probe URL --body FILE` or `--bench -- ARGS` on a typed fact too;
`record` says once that a typed fact cannot be re-verified until it has one; `verify --all` counts the facts without
a method; `status` shows them `unverifiable (no method)` once they are stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ago
from tests.llamabench_support import tiny_model  # noqa: F401

BODY = {"model": "any", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


@pytest.fixture
def body(tmp_path: Path) -> Path:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(BODY), encoding="utf-8")
    return path


def test_record_says_once_that_a_typed_fact_needs_a_method(cli) -> None:
    first = cli("record", "gamebox/a3b/decode_rate", "--metric", "decode_rate", "--value", "400", "--cond",
                "model=fault-model")
    assert first.exit_code == 0
    assert "gamebox/a3b/decode_rate was typed by hand: `verify` cannot re-measure it until it has a method" in \
        first.stderr and "factreg method gamebox/a3b/decode_rate --probe URL --body FILE" in first.stderr
    again = cli("record", "gamebox/a3b/decode_rate", "--metric", "decode_rate", "--value", "401")
    assert again.exit_code == 0 and "typed by hand" not in again.stderr


def test_a_typed_fact_gets_a_probe_and_verify_runs_it(cli, server, body: Path) -> None:
    cli("record", "front/decode_rate", "--metric", "decode_rate", "--value", "4000", "--cond", "model=fault-model")
    skipped = cli("verify", "front/decode_rate", "--json")
    [res] = skipped.json()
    assert res["verdict"] == "skipped" and "typed by hand" in res["message"]
    assert "factreg method front/decode_rate --probe URL --body FILE" in res["message"]
    url = server.url("ok,gap=0.01,tokens=12")
    r = cli("method", "front/decode_rate", "--probe", url, "--body", str(body), "--n", "4", "--warmup", "1",
            "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json() == {"ids": ["front/decode_rate@2"]}
    fact = cli("show", "front/decode_rate", "--json").json()
    assert fact["version"] == 2 and fact["value"] == 4000 and fact["method"]["kind"] == "probe"
    assert fact["method"]["select"] == {"metric": "decode_rate"} and fact["method"]["url"] == url
    assert fact["conditions"]["identity"] == {"model": "fault-model"}
    ran = cli("verify", "front/decode_rate", "--json")
    [res] = ran.json()
    assert res["verdict"] == "refuted" and res["recorded"] is True, res["message"]  # ~100 tok/s, not 4000


def test_a_typed_fact_gets_a_llama_bench_run(cli, tiny_model: Path) -> None:  # noqa: F811
    cli("record", "box/tiny/tg16", "--metric", "tg_rate", "--value", "1e9")
    r = cli("method", "box/tiny/tg16", "--bench", "--", "-m", str(tiny_model), "-p", "0", "-n", "16", "-r", "3",
            "-t", "1")
    assert r.exit_code == 0, r.stderr
    fact = cli("show", "box/tiny/tg16", "--json").json()
    method = fact["method"]
    assert method["kind"] == "llama-bench" and method["args"][:2] == ["-m", str(tiny_model.resolve())]
    assert method["select"] == {"n_prompt": "0", "n_gen": "16", "n_depth": "0"}
    [res] = cli("verify", "box/tiny/tg16", "--json").json()
    assert res["verdict"] == "refuted" and res["new"]["value"] < 1e8, res["message"]


@pytest.mark.parametrize("args, message", [
    (["--bench", "--", "-m", "nope.gguf", "-n", "16"], "model file not found"),
    (["--bench"], "give llama-bench's arguments after --"),
    (["--probe", "http://127.0.0.1:9/v1/chat/completions"], "--probe needs --body FILE"),
    ([], "give the method"),
])
def test_a_method_that_cannot_be_given_is_one_error_line(cli, args: list[str], message: str) -> None:
    cli("record", "box/tg16", "--metric", "tg_rate", "--value", "10")
    r = cli("method", "box/tg16", *args)
    assert r.exit_code == 2 and r.stderr.startswith("Error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert cli("show", "box/tg16", "--json").json()["version"] == 1


def test_tg_rate_needs_arguments_that_run_one_test(cli, tiny_model: Path) -> None:  # noqa: F811
    cli("record", "box/tg", "--metric", "tg_rate", "--value", "10")
    r = cli("method", "box/tg", "--bench", "--", "-m", str(tiny_model), "-n", "16,32")
    assert r.exit_code == 2 and "exactly one" in r.stderr and "-p 0 -n 32" in r.stderr


def test_verify_all_counts_facts_without_a_method(cli) -> None:
    cli("record", "a/one", "--metric", "e2e", "--value", "1")
    cli("record", "a/two", "--metric", "e2e", "--value", "2")
    r = cli("verify", "--all")
    assert r.exit_code == 0
    assert "2 without a method (skipped: `factreg method ID` gives one)" in r.stderr


def test_status_shows_a_stale_fact_without_a_method_as_unverifiable(cli, server, body: Path, tmp_path: Path) -> None:
    cli("record", "old/typed", "--metric", "decode_rate", "--value", "40", "--measured-at", ago(100))
    cli("record", "old/probed", "--metric", "decode_rate", "--value", "40", "--measured-at", ago(100))
    cli("record", "new/typed", "--metric", "decode_rate", "--value", "40")
    assert cli("method", "old/probed", "--probe", server.url("ok"), "--body", str(body)).exit_code == 0
    r = cli("status")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    typed = next(line for line in lines if " old/typed " in line)
    assert typed.startswith("unverifiable (no method) ") and "no method to re-run it: last measured" in typed
    assert next(line for line in lines if " old/probed " in line).startswith("stale ")
    assert next(line for line in lines if " new/typed " in line).startswith("fresh ")
    rows = {f["id"]: f for f in cli("status", "--json").json()["facts"]}
    assert rows["old/typed"]["status"] == "unverifiable" and "method" not in rows["old/typed"]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("<!-- fact: old/typed -->?<!-- /fact -->\n", encoding="utf-8")
    cli("docs", "sync", str(docs))
    check = cli("docs", "check", str(docs))
    assert "fix: give it a method, then verify it: `factreg method old/typed --probe URL --body FILE`" in check.stdout
