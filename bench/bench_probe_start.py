"""The probe's fixed cost: CPU seconds `factreg probe` has used when its first request reaches the server (read from
/proc/PID/stat by the stand-in's handler as the request arrives), and the whole run's CPU, against the stand-in on
127.0.0.1 (one warm-up, two measured requests). Median of 7 runs.

Run: `python bench/bench_probe_start.py`."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import BIN, machine, write_section  # noqa: E402

from factreg.demo import standin  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of a running process (clock ticks of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main() -> None:
    watched: dict[str, int | None] = {"pid": None}
    first: list[float] = []
    lock = threading.Lock()
    original = standin.Handler.parse_request

    def parse_request(self):  # type: ignore[no-untyped-def]
        with lock:
            pid = watched["pid"]
            if pid is not None:
                watched["pid"] = None
                first.append(cpu_of(pid))
        return original(self)

    standin.Handler.parse_request = parse_request  # type: ignore[method-assign]
    rounds = 7
    with tempfile.TemporaryDirectory() as tmp, standin.running() as server:
        body = Path(tmp) / "body.json"
        body.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        env = {**os.environ, "FACTREG_DB": str(Path(tmp) / "r.db")}
        cmd = [str(BIN / "factreg"), "probe", server.url("ok,first=0.01,gap=0.002,tokens=4"), "--body", str(body),
               "--n", "2", "--warmup", "1", "--min-uptime", "0", "-q"]
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # .pyc files and page cache, not timed
        whole, walls = [], []
        load0 = os.getloadavg()
        for _ in range(rounds):
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with lock:
                watched["pid"] = proc.pid
            _, status, usage = os.wait4(proc.pid, 0)
            walls.append(time.perf_counter() - t0)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit("factreg probe failed")
            whole.append(usage.ru_utime + usage.ru_stime)
        load1 = os.getloadavg()
    assert len(first) == rounds, first
    text = "\n".join([
        "## Probe: fixed cost before the first request (`bench/bench_probe_start.py`)", "",
        f"{machine()}. `factreg probe` against the stand-in on 127.0.0.1 (1 warm-up, 2 measured requests); the "
        "CPU the probe process had used when its first request (the identity check) reached the server, read from "
        f"/proc/PID/stat in the server's handler (clock ticks of {1000 / TICK:.0f} ms), and the whole run's CPU. "
        f"Median of {rounds} runs; load average {load0[0]:.2f} before, {load1[0]:.2f} after.", "",
        "| | CPU median (s) | min | max |", "|---|---|---|---|",
        f"| before the first request | {statistics.median(first):.2f} | {min(first):.2f} | {max(first):.2f} |",
        f"| whole run (wall median {statistics.median(walls):.2f} s) | {statistics.median(whole):.2f} | "
        f"{min(whole):.2f} | {max(whole):.2f} |", ""])
    print(text)
    write_section("probe_start", text)


if __name__ == "__main__":
    main()
