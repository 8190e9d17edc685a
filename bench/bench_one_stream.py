"""The one streamed request (issue 33), before and after in the same run: whole-run CPU of `factreg probe` (identity
check, 1 warm-up, 2 measured; sequential) and of a `--concurrency 4` run (4 warm-up, 40 measured), and the ttft error
against the stand-in's injected first token (300 ms), the code before and after in alternating order.

Run: `BENCH_BEFORE=/path/to/a/copy/of/the/code/before python bench/bench_one_stream.py` (e.g. `git archive main
factreg | tar -x -C /tmp/before`); each probe runs outside the repository, so that it imports the tree it is given
(`PYTHONPATH`), not the working directory's. `ROUNDS` (7). Writes bench/results/one_stream.md."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import ROOT, write_section  # noqa: E402

from factreg.demo import standin  # noqa: E402

TREES = {"main": os.environ["BENCH_BEFORE"], "branch": str(ROOT)}
PY = sys.executable
ROUNDS = int(os.environ.get("ROUNDS", "7"))


def run(tree: str, url: str, body: str, extra: list[str], db: str) -> tuple[float, dict]:
    """One `factreg probe --json` from `tree`: its CPU seconds (user + system) and its JSON."""
    env = {**os.environ, "PYTHONPATH": tree, "FACTREG_DB": db}
    code = "import sys; from factreg.__main__ import main; sys.argv=['factreg']+sys.argv[1:]; main()"
    cmd = [PY, "-c", code, "probe", url, "--body", body, "--min-uptime", "0", "--json", *extra]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, _status, usage = os.wait4(proc.pid, 0)
    data = json.loads(out)
    assert data["verdict"] == "ok", data.get("message")
    return usage.ru_utime + usage.ru_stime, data


def main() -> None:
    cpu: dict[str, list[float]] = {k: [] for k in TREES}
    load: dict[str, list[float]] = {k: [] for k in TREES}
    err: dict[str, list[float]] = {k: [] for k in TREES}
    with tempfile.TemporaryDirectory() as tmp, standin.running() as server:
        body = Path(tmp) / "body.json"
        body.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        seq = server.url("ok,first=0.01,gap=0.002,tokens=4")
        acc = server.url("ok,first=0.3,gap=0.02,tokens=10")
        for tree in TREES.values():  # .pyc files and page cache, not timed
            run(tree, seq, str(body), ["--n", "2", "--warmup", "1"], str(Path(tmp) / "w.db"))
        la0 = os.getloadavg()[0]
        for i in range(ROUNDS):
            for name, tree in list(TREES.items())[:: 1 if i % 2 == 0 else -1]:
                db = str(Path(tmp) / f"{name}.db")
                cpu[name].append(run(tree, seq, str(body), ["--n", "2", "--warmup", "1"], db)[0])
                load[name].append(run(tree, seq, str(body), ["--n", "40", "--warmup", "4", "--concurrency", "4"], db)[0])
                data = run(tree, acc, str(body), ["--n", "5", "--warmup", "1"], db)[1]
                err[name] += [abs(x - 0.3) * 1000 for x in data["metrics"]["ttft"]["samples"]]
        la1 = os.getloadavg()[0]
    med = statistics.median

    def p95(xs: list[float]) -> float:
        return sorted(xs)[int(0.95 * (len(xs) - 1))]

    text = "\n".join([
        "### One streamed request (issue 33): before and after, same run (`bench/bench_one_stream.py`)", "",
        f"`factreg probe` against the stand-in on 127.0.0.1, the code before and after in alternating order, {ROUNDS} "
        f"rounds; CPU is the probe process's user + system time (`wait4`); load average {la0:.1f} at the start, "
        f"{la1:.1f} at the end.", "",
        "| | before | after | after / before |", "|---|---|---|---|",
        f"| sequential probe (identity check, 1 warm-up, 2 measured): CPU median | {med(cpu['main']):.3f} s | "
        f"{med(cpu['branch']):.3f} s | {med(cpu['branch']) / med(cpu['main']):.2f} |",
        f"| load run (`--concurrency 4`, 4 warm-up, 40 measured): CPU median | {med(load['main']):.3f} s | "
        f"{med(load['branch']):.3f} s | {med(load['branch']) / med(load['main']):.2f} |",
        f"| `ttft` against the injected 300 ms (n={len(err['main'])} each): median / p95 abs. error | "
        f"{med(err['main']):.2f} / {p95(err['main']):.2f} ms | {med(err['branch']):.2f} / {p95(err['branch']):.2f} ms | |",
        ""])
    print(text)
    write_section("one_stream", text)


if __name__ == "__main__":
    main()
