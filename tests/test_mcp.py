"""factreg mcp, end to end: the MCP SDK's own client talks to `factreg mcp` over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

READ_TOOLS = {"search_facts", "get_fact", "check_text", "cite", "status"}


def session_calls(
    db_url: str, calls: list[tuple[str, Any]], *args: str, env: dict[str, str] | None = None
) -> tuple[list[str], list[tuple[bool, str, Any]]]:
    """Start `factreg mcp ARGS`, list its tools, make each call (("tool", {args}) or ("resource", uri)); return the
    tool names and (is_error, text, structured) per call."""

    async def run() -> tuple[list[str], list[tuple[bool, str, Any]]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "factreg", "mcp", *args],
            env={**os.environ, "FACTREG_DB": db_url, **(env or {})},
            cwd=str(Path(db_url.removeprefix("sqlite:///")).parent),
        )
        out: list[tuple[bool, str, Any]] = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            for kind, arg in calls:
                if kind == "resource":
                    res = await session.read_resource(arg)
                    text = "".join(getattr(c, "text", "") for c in res.contents)
                    out.append((False, text, None))
                else:
                    result = await session.call_tool(kind, arg)
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    out.append((bool(result.is_error), text, result.structured_content))
        return names, out

    return asyncio.run(asyncio.wait_for(run(), timeout=120))


@pytest.fixture
def refuted(cli, db_url):  # type: ignore[no-untyped-def]
    """The skill doc's 28 tok/s, refuted by llama-bench's 11.9 ± 7.2 tok/s on the same machine and model."""
    cli("record", "skill/gamebox/a3b-decode", "-m", "tg_rate", "--value", "28", "-c", "machine=gamebox",
        "-c", "model=35B-A3B", "--measured-at", "2026-09-14T10:00:00Z")
    cli("record", "gamebox/35b-a3b/tg32", "-m", "tg_rate", "--value", "11.9", "--spread", "7.2", "--n", "5",
        "-c", "machine=gamebox", "-c", "model=35B-A3B", "-c", "build_commit=8cf427ff")
    r = cli("verify", "skill/gamebox/a3b-decode", "--against", "gamebox/35b-a3b/tg32")
    assert r.exit_code == 1, r.stderr
    return cli


def candidate(check: dict[str, Any], claim: str, fact_id: str) -> dict[str, Any]:
    (item,) = [u for u in check["unsourced"] if u["text"] == claim]
    (cand,) = [c for c in item["candidates"] if c["fact_id"] == fact_id]
    return cand


def test_tools_conditions_status_and_the_refuted_claim(refuted, db_url) -> None:
    text = "gamebox decodes at 28 tok/s"
    names, [fact, check, search, stat, cite, missing, llms] = session_calls(db_url, [
        ("get_fact", {"id": "skill/gamebox/a3b-decode"}),
        ("check_text", {"text": text}),
        ("search_facts", {"query": "gamebox", "metric": "tg_rate"}),
        ("status", {}),
        ("cite", {"id": "gamebox/35b-a3b/tg32"}),
        ("get_fact", {"id": "no/such/fact"}),
        ("resource", "facts://llms.txt"),
    ])
    assert set(names) == READ_TOOLS  # read-only: no record without --allow-write
    got = json.loads(fact[1])
    assert got["conditions"]["identity"] == {"machine": "gamebox", "model": "35B-A3B"}
    assert got["status"] == "refuted" and "gamebox/35b-a3b/tg32" in got["status_reason"]
    assert got["value"] == 28.0 and got["history"][0]["verifications"][0]["verdict"] == "refuted"
    assert got["cite"]["citable"] is False

    cand = candidate(json.loads(check[1]), "28 tok/s", "skill/gamebox/a3b-decode")
    assert cand["status"] == "refuted" and cand["citable"] is False
    assert cand["current"]["measured_now"]["text"] == "11.9 ± 7.2 tok/s"  # the value that holds now

    assert {f["id"] for f in json.loads(search[1])["facts"]} == {"skill/gamebox/a3b-decode", "gamebox/35b-a3b/tg32"}
    assert [p["id"] for p in json.loads(stat[1])["do_not_rely_on"]] == ["skill/gamebox/a3b-decode"]
    assert json.loads(cite[1])["marker"] == "<!-- fact: gamebox/35b-a3b/tg32 -->11.9 ± 7.2 tok/s<!-- /fact -->"
    assert missing[0] is True and "Error: no fact" in missing[1] and "Traceback" not in missing[1]
    assert llms[1].startswith("# factreg facts") and "skill/gamebox/a3b-decode" in llms[1]


def test_after_the_correction_check_text_gives_the_successor(refuted, db_url) -> None:
    r = refuted("correct", "skill/gamebox/a3b-decode", "--by", "gamebox/35b-a3b/tg32", "--as", "gamebox/35b-a3b/tg32",
                "--cause", "old machine state")  # superseded by the measured fact (`--as`)
    assert r.exit_code == 0, r.stderr
    marker = "<!-- fact: skill/gamebox/a3b-decode -->28.0 tok/s<!-- /fact -->"
    _, [check, cited] = session_calls(db_url, [
        ("check_text", {"text": "gamebox decodes at 28 tok/s"}),
        ("check_text", {"text": f"gamebox decodes at {marker}."}),
    ])
    cand = candidate(json.loads(check[1]), "28 tok/s", "skill/gamebox/a3b-decode")
    assert cand["status"] == "superseded"
    assert cand["current"]["fact_id"] == "gamebox/35b-a3b/tg32"
    assert cand["current"]["text"] == "11.9 ± 7.2 tok/s"
    assert cand["current"]["marker"] == "<!-- fact: gamebox/35b-a3b/tg32 -->11.9 ± 7.2 tok/s<!-- /fact -->"
    problems = json.loads(cited[1])["citations"]
    assert {p["kind"] for p in problems} >= {"superseded"}
    assert problems[0]["expected"] == "11.9 ± 7.2 tok/s"


def test_record_only_with_allow_write_and_validated_as_the_cli(cli, db_url) -> None:
    names, _ = session_calls(db_url, [])
    assert "record" not in names
    names, [bad, missing, good, both] = session_calls(db_url, [
        ("record", {"id": "box/m/ttft", "metric": "ttfx", "value": 0.2, "identity": {"model": "m"}}),
        ("record", {"id": "../box ttft", "metric": "ttft", "value": 0.2, "identity": {"model": "m"}}),
        ("record", {"id": "box/m/ttft", "metric": "ttft", "samples": [0.2, 0.21, 0.22, 0.2, 0.19],
                    "identity": {"model": "m", "machine": "box"}}),
        ("record", {"id": "box/m/e2e", "metric": "e2e", "value": 1.0, "samples": [1.0]}),
    ], "--allow-write")
    assert set(names) == READ_TOOLS | {"record"}
    assert bad[0] and "Error: " in bad[1] and "unknown metric" in bad[1]
    assert missing[0] and "Error: " in missing[1] and "id" in missing[1]
    assert not good[0] and json.loads(good[1])["text"].startswith("0.200 ± ")
    assert both[0] and "exactly one of value and samples" in both[1]
    assert cli("show", "box/m/ttft", "--json").json()["n"] == 5
    assert cli("show", "box/m/e2e").exit_code != 0  # nothing stored by a refused call


def test_a_probe_token_appears_in_no_tool_output(cli, db_url, tmp_path, server, monkeypatch) -> None:
    token = server.token
    monkeypatch.setenv("MY_TOKEN", token)
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}), encoding="utf-8")
    url = server.url("ok,auth=1,first=0.02,tokens=3,model=sec")
    r = cli("probe", url, "--body", str(body), "--n", "2", "--warmup", "0", "--api-key-env", "MY_TOKEN",
            "--record", "sec/env")
    assert r.exit_code == 0, r.stderr
    assert any(q["headers"].get("Authorization") == f"Bearer {token}" for q in server.requests)
    ttft = cli("show", "sec/env/ttft", "--json").json()
    marker = f"<!-- fact: sec/env/ttft -->{ttft['value']} s<!-- /fact -->"
    calls: list[tuple[str, Any]] = [
        ("search_facts", {"query": "sec"}),
        ("search_facts", {"query": "Authorization"}),
        ("get_fact", {"id": "sec/env/ttft"}),
        ("get_fact", {"id": "sec/env/e2e"}),
        ("check_text", {"text": f"sec answers in {marker}, and 0.5 s end to end at 127.0.0.1 for model sec."}),
        ("check_text", {"text": f"Authorization: Bearer {token}"}),
        # a stale marker text on the line of a pasted header: the diff it returns shows that line
        ("check_text", {"text": f"<!-- fact: sec/env/ttft -->9 s<!-- /fact --> Bearer {token}"}),
        ("cite", {"id": "sec/env/ttft"}),
        ("status", {}),
        ("get_fact", {"id": token[:60].replace("-", "/")}),
        ("resource", "facts://llms.txt"),
    ]
    _, outputs = session_calls(db_url, calls, env={"MY_TOKEN": token})
    assert not outputs[2][0] and json.loads(outputs[2][1])["id"] == "sec/env/ttft"
    assert "text_differs" in outputs[6][1]  # the line was read, and shown masked
    for _is_error, text, structured in outputs:
        assert token not in text
        assert token not in json.dumps(structured or {})


def test_the_record_tool_refuses_values_its_metric_cannot_have(cli, db_url) -> None:
    """The MCP `record` tool applies the metric's bounds as `factreg record` does (it stored -1 s before)."""
    _, results = session_calls(db_url, [
        ("record", {"id": "box/m/ttft", "metric": "ttft", "value": -1, "identity": {"model": "m"}}),
        ("record", {"id": "box/m/tg", "metric": "tg_rate", "samples": [-5, -6, -7], "identity": {"machine": "b"}}),
        ("record", {"id": "box/m/good", "metric": "goodput", "value": 1.5, "identity": {"model": "m"}}),
    ], "--allow-write")
    for is_error, text, _ in results:
        assert is_error and "Error: " in text and "cannot be" in text, text
    assert cli("list", "--json").json() == []


UNREADABLE_FRAMES = [
    (b"{not json", -32700),
    (b"\xff\xfe not utf-8", -32700),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "ping"', -32700),  # cut short
    (b"[" * 100_000 + b"]" * 100_000, -32700),  # deeper than any parser recurses
    (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "get_fact", "arguments": '
     b'{"id": "\\ud800"}}}', -32700),  # a lone surrogate: not I-JSON
    (b'{"jsonrpc": "1.0", "id": 7, "method": "ping"}', -32600),
    (b'{"id": 8}', -32600),
    (b'[{"jsonrpc": "2.0", "id": 9, "method": "ping"}]', -32600),  # a batch: not in MCP
    (b'"just a string"', -32600),
]


def test_unreadable_frames_get_the_json_rpc_error_and_the_server_goes_on(db_url) -> None:
    """JSON-RPC 2.0 (and so MCP) answers a frame that is not JSON with -32700 and a JSON value that is no request
    with -32600, `"id": null`; before, the SDK's server dropped both and a client waited for ever. 9 frames, then
    a ping on the same connection is still answered."""
    import select
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "factreg", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "FACTREG_DB": db_url})
    assert proc.stdin is not None and proc.stdout is not None

    def exchange(frame: bytes) -> dict[str, Any] | None:
        proc.stdin.write(frame + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        return json.loads(proc.stdout.readline()) if ready else None

    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        assert exchange(json.dumps(hello).encode())["id"] == 1  # type: ignore[index]
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for frame, code in UNREADABLE_FRAMES:
            answer = exchange(frame)
            assert answer is not None, frame[:60]
            assert answer["id"] is None and answer["error"]["code"] == code, (frame[:60], answer)
        assert exchange(b'{"jsonrpc": "2.0", "id": 10, "method": "ping"}') == {"jsonrpc": "2.0", "id": 10, "result": {}}
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == 0


def test_malformed_tool_calls_from_the_official_client_are_tool_errors(cli, db_url) -> None:
    """The official SDK client's calls with wrong types, unknown tools and names, missing arguments, oversized text
    and values JSON cannot carry: each one tool error (isError), nothing stored, the session goes on."""
    _, results = session_calls(db_url, [
        ("get_fact", {"id": 123}),
        ("get_fact", {}),
        ("no_such_tool", {}),
        ("search_facts", {"limit": "many"}),
        ("check_text", {"text": "x" * 300_000}),
        ("record", {"id": "a/b", "metric": "ttft", "value": "nan", "identity": {"model": "m"}}),
        ("record", {"id": "a/b", "metric": "ttft", "samples": ["0.5", None], "identity": {"model": "m"}}),
        ("record", {"id": "../../x", "metric": "ttft", "value": 0.5}),
        ("record", {"id": "a/b", "metric": "ttft", "value": 0.5, "identity": {"model": ["not", "text"]}}),
        ("get_fact", {"id": "a/b\x1b[2J"}),
    ], "--allow-write")
    for is_error, text, _ in results:
        assert is_error, text
    assert cli("list", "--json").json() == []
