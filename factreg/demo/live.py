"""The demo's live part: the real llama-bench and llama-server on a tiny generated model, here and now."""

from __future__ import annotations

import json
from typing import Any

SETTLE_S = 8  # the demo's stand-in for --min-uptime 300: long enough to show the difference, short enough to wait


def run(demo: Any) -> None:
    """bench → verify with llama-bench, then a cold and a settled probe of llama-server, side by side."""
    from factreg.config import resolve
    from factreg.demo import llamaserver, tinymodel
    from factreg.registry import display, facts
    from factreg.registry.store import Registry

    live = demo.work / "live"
    live.mkdir(exist_ok=True)
    model = tinymodel.write_tiny_model(live / "tiny.gguf")

    demo.step("10. Live: the real llama-bench on a tiny random-weight model, then verify it")
    demo.run("bench", "--id", "live/tiny", "--", "-m", str(model), "-p", "32", "-n", "16", "-r", "5", "-t", "1")
    reg = Registry(resolve().db_url)
    ids = [f["id"] for f in facts.list_facts(reg) if f["id"].startswith("live/tiny")]
    demo.run("verify", *ids, label="live_verify")

    demo.step("11. Live: llama-server probed right after its start (cold) and once settled")
    body = live / "body.json"  # a random-weight model may pick end-of-text first: every reply must have an answer
    body.write_text(json.dumps({"messages": [{"role": "user", "content": "hello"}], "max_tokens": 16,
                                "ignore_eos": True, "stream": True}), encoding="utf-8")
    with llamaserver.llama_server(live) as server:
        demo.run("probe", server.url, "--body", str(body), "--n", "5", "--warmup", "0", "--no-cache",
                 "--record", "live/server/cold")
        demo.say(f"   (waiting until the server has been up {SETTLE_S} s; real use: --min-uptime 300)")
        demo.run("probe", server.url, "--body", str(body), "--n", "5", "--warmup", "2", "--no-cache",
                 "--min-uptime", str(SETTLE_S), "--wait-for-uptime", "--record", "live/server/settled")
    demo.say()
    demo.say(f"   {'metric':<12} {'cold (no warm-up, just started)':>34} {'settled (warm-up discarded)':>30}")
    for metric in ("ttft", "e2e", "decode_rate"):
        row = []
        for phase in ("cold", "settled"):
            try:
                f = facts.get(reg, f"live/server/{phase}/{metric}")
                row.append(f"{display.text(f)} {'[cold]' if 'cold' in f['flags'] else ''}")
            except Exception:
                row.append("—")
        demo.say(f"   {metric:<12} {row[0]:>34} {row[1]:>30}")
    reg.close()
