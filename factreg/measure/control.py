"""The control measurement: a short fixed workload run right before and right after every measured run, so that a
verdict can tell a claim that is wrong from a machine that is, for now, faster or slower.

- llama-bench facts: a tiny random-weight model (`tinygguf`, cached next to the model-hash cache) through the
  same llama-bench, with the measured run's device and thread settings (`-t`, `-ngl`, `-dev`, `-C`, …; a swept
  list's first value), `-p 0 -n 16 -r 5`. Unit tok/s.
- probes have no control: the client's speed says nothing about the server a probe measures. Their verdicts
  are judged with the endpoint's own evidence instead (`measure/endpoint.py`), gathered by `bracket` too.

A llama-bench fact's own measurement interleaves them: a control run before its first measured run and after each
one (C M C M … C, `measure/interleave.py`), so that every run is judged beside the control runs around it.

Its cost is bounded: each control run is stopped after half of max(`BUDGET_S`, `BUDGET_SHARE` × the measured
run's time — the run it follows, when interleaved), keeping the tests that finished — only on a machine so busy
that none has, it may run on to `HARD_STOP` × that for its first one. A control that could not run is recorded
with its reason and the verdict then says the machine could not be compared. A control is kept as the info
condition `control` (compact JSON) of a fact, and in the `observed` conditions of a verification (both are
`ALWAYS_INFO`, so a correction carries them as info).

At verification the control is re-run; **speed factor** = control now / control then (how much faster the machine
ran). `measure/speed.py` (`adjust`) applies it, and the control-relative comparison, to a verdict (docs/machine.md).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from factreg.errors import FactregError
from factreg.measure import interleave, machine, sched

if TYPE_CHECKING:
    from factreg.config import Settings

KEY = "control"
BUDGET_S = 0.3  # the two control runs together: at most this …
BUDGET_SHARE = 0.15  # … or this share of the measured run, whichever is larger
# One test is tg64 × 4 repetitions (≈ 1–2 ms a sample: long enough to be preempted like a measured sample, so
# the control feels the same share of the CPU); TINY_TESTS of them stream out one JSON line each and the run is
# stopped at its budget, keeping the tests that finished. Samples (not their count) are what is compared.
TINY_GEN, TINY_REPS, TINY_TESTS = 64, 4, 12
TINY_WORKLOAD = ["-p", "0", "-n", ",".join([str(TINY_GEN)] * TINY_TESTS), "-r", str(TINY_REPS)]
# How closely two workloads follow one change of the machine's speed: a scaled measurement agrees when it lies
# within tolerance + the factor's own 95% interval + TRACKING × |ln factor| of the fact.
TRACKING = 0.25
HARD_STOP = 4  # a control run that has no finished test at its budget may go on to 4× it for its first test
MAX_GAP = 0.5  # … and never wider than ±50%: a claim 3× off stays refuted however noisy the control was
TINY_NAME = "control-tiny-v1.gguf"
# llama-bench options that say where and how the model runs (copied into the control, first value of a list).
DEVICE_OPTIONS = {
    "-t": "threads", "--threads": "threads", "-ngl": "n_gpu_layers", "--n-gpu-layers": "n_gpu_layers",
    "-dev": "device", "--device": "device", "-sm": "split_mode", "--split-mode": "split_mode",
    "-mg": "main_gpu", "--main-gpu": "main_gpu", "-C": "cpu_mask", "--cpu-mask": "cpu_mask",
    "--cpu-strict": "cpu_strict", "--poll": "poll", "--prio": "prio", "--numa": "numa",
    "-nkvo": "no_kv_offload", "--no-kv-offload": "no_kv_offload", "-fa": "flash_attn", "--flash-attn": "flash_attn",
}  # fmt: skip

T = TypeVar("T")


@dataclass
class Control:
    """One control: what was run (`spec`, must match to compare), its samples, and how long it took."""

    kind: str
    spec: dict[str, str]
    unit: str
    samples: list[float] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    server_ms: list[float] = field(default_factory=list)
    parts: list[float] = field(default_factory=list)  # the value of each run (before, after)
    run_cpu_share: float | None = None  # CPU seconds of the measured run's processes per second of its wall time
    run_wait: float | None = None  # the share of its runnable time the measured run waited on a run-queue
    run_steal: float | None = None  # the machine's steal share over the measured run
    chunks: list[list[float]] = field(default_factory=list)  # interleaved: [n, control, rel_se] per measured run

    @property
    def value(self) -> float | None:
        """The mean of the samples (what llama-bench's avg_ts is, and what a fact's value is compared by)."""
        return statistics.fmean(self.samples) if self.samples else None

    def merge(self, other: Control) -> Control:
        """Before + after: one control with both runs' samples."""
        errors = [e for e in (self.error, other.error) if e]
        return Control(
            kind=self.kind, spec=self.spec, unit=self.unit, samples=[*self.samples, *other.samples],
            seconds=self.seconds + other.seconds,
            error=None if (self.samples and other.samples) or not errors else "; ".join(dict.fromkeys(errors)),
            server_ms=[*self.server_ms, *other.server_ms], parts=[*self.parts, *other.parts],
        )  # fmt: skip

    def as_data(self, run_s: float | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "spec": self.spec, "unit": self.unit,
                                "samples": [round(x, 3) for x in self.samples], "seconds": round(self.seconds, 3)}
        if self.value is not None:
            data["value"] = round(self.value, 3)
        if self.parts:
            data["parts"] = [round(x, 3) for x in self.parts]
        if self.error:
            data["error"] = self.error
        if self.server_ms:
            data["server_ms"] = [round(x, 2) for x in self.server_ms]
        if run_s is not None:
            data["run_s"] = round(run_s, 3)
        if self.run_cpu_share is not None:
            data["run_cpu_share"] = round(self.run_cpu_share, 3)
        if self.run_wait is not None:
            data["run_wait"] = round(self.run_wait, 4)
        if self.run_steal is not None:
            data["run_steal"] = round(self.run_steal, 4)
        if self.chunks:
            data[interleave.KEY] = self.chunks
        return data


# ---------------------------------------------------------------- the workloads


def model_path(settings: Settings | None) -> Path:
    """The control's tiny model, cached in the user data dir (FACTREG_USER_DIR, else XDG's)."""
    from factreg import config

    return config.user_data_dir() / "control" / TINY_NAME


def ensure_model(settings: Settings | None) -> Path:
    """The cached tiny control model, written once (seed 0, so every machine's control model is the same)."""
    path = model_path(settings)
    if not path.is_file():
        from factreg.measure.tinygguf import write_tiny_model

        write_tiny_model(path, n_layer=1, seed=0)
    return path


def device_args(args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The measured run's device and thread options (first value of a swept list) and the spec they make."""
    out: list[str] = []
    spec: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, value = arg, None
        if arg.startswith("--") and "=" in arg:
            name, value = arg.split("=", 1)
        if name in DEVICE_OPTIONS:
            if value is None and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            if value is not None:
                first = value.split(",")[0]
                out += [name, first]
                spec[DEVICE_OPTIONS[name]] = first
        i += 1
    return out, spec


def llama_spec(method_args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    extra, spec = device_args(method_args)
    return [*TINY_WORKLOAD, *extra], {"workload": f"tiny tg{TINY_GEN}", "model": TINY_NAME, **spec}


def run_llama(exe: Path | None, method_args: Sequence[str], settings: Settings | None, timeout_s: float) -> Control:
    """One tiny-model llama-bench run with the measured run's device settings, stopped after `timeout_s` with
    the tests that finished by then (never raises)."""
    args, spec = llama_spec(method_args)
    ctl = Control("llama-bench-tiny", spec, "tok/s")
    started = time.monotonic()
    try:
        model = ensure_model(settings)
        if exe is None:
            raise FactregError("llama-bench not found")
        argv = [str(exe), "-m", str(model), *args, "-o", "jsonl"]  # a list, never a shell
        ctl.samples = _stream_samples(argv, started + timeout_s, started + HARD_STOP * timeout_s)
        if not ctl.samples:
            ctl.error = f"llama-bench gave no control sample within {HARD_STOP * timeout_s:.2g} s"
        else:
            ctl.parts = [statistics.fmean(ctl.samples)]
    except FactregError as exc:
        ctl.error = exc.message
    except Exception as exc:  # noqa: BLE001 - a control never fails a measurement
        ctl.error = f"{type(exc).__name__}: {exc}"
    ctl.seconds = time.monotonic() - started
    return ctl


def _stream_samples(argv: Sequence[str], deadline: float, hard: float) -> list[float]:
    """samples_ts of every JSON line llama-bench prints before `deadline` (then it is stopped) — or, on a machine
    so busy that no test has finished by then, of the first test that finishes before `hard`."""
    import selectors
    import subprocess

    samples: list[float] = []
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, shell=False,
                            preexec_fn=sched.die_with_parent())  # dies with factreg, like the measured run
    assert proc.stdout is not None
    buffer = b""
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while (left := (deadline if samples else hard) - time.monotonic()) > 0:
                if not sel.select(left):
                    break
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    samples += _line_samples(line)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    return samples


def _line_samples(line: bytes) -> list[float]:
    try:
        data = json.loads(line)
    except ValueError:
        return []
    xs = data.get("samples_ts") if isinstance(data, dict) else None
    return [float(x) for x in xs if isinstance(x, (int, float)) and x > 0] if isinstance(xs, list) else []


def identity_ms(requests: Any) -> float | None:
    """Milliseconds of the probe's identity check (its 1-token request, the first of a probe's requests as
    `as_json` writes them): the server's cheapest route, timed by the probe itself — the control sends nothing."""
    if not isinstance(requests, list) or not requests or not isinstance(requests[0], Mapping):
        return None
    events = requests[0].get("events_s")
    end = events.get("end") if isinstance(events, Mapping) else None
    return float(end) * 1000 if isinstance(end, (int, float)) and end > 0 else None


def runner(
    method: Mapping[str, Any], settings: Settings | None, llama_bench: Path | None = None
) -> Callable[[float], Control] | None:
    """The control for a method kind: a function of the time budget, or None when the kind has none.
    `llama_bench` is the binary the measured run uses (resolved by the caller, `llamabench.find_binary`)."""
    kind = method.get("kind")
    if kind == "llama-bench":
        args = method.get("args")
        clean = [str(a) for a in args] if isinstance(args, list) else []
        return lambda budget: run_llama(llama_bench, clean, settings, budget)
    return None  # a probe is judged by the endpoint's own evidence (measure/endpoint.py), never by a client loop


def budget_for(run_s: float | None) -> float:
    """Time budget of ONE control run (before or after): half of max(BUDGET_S, BUDGET_SHARE × the run)."""
    return max(BUDGET_S, BUDGET_SHARE * (run_s or 0.0)) / 2


@dataclass
class Bracketed:
    """What `bracket` saw around a run: the machine state, the control (llama-bench) and the endpoint's own
    evidence (probes), as condition texts."""

    machine_state: dict[str, Any]
    control: Control | None
    run_s: float
    server: Any = None  # endpoint.Evidence, for probes

    def conditions(self) -> dict[str, str]:
        out = {machine.KEY: machine.as_condition(self.machine_state)}
        if self.control is not None:
            out[KEY] = json.dumps(self.control.as_data(self.run_s), sort_keys=True, separators=(",", ":"))
        if self.server is not None:
            from factreg.measure import endpoint

            out[endpoint.KEY] = self.server.condition()
        return out


def bracket(
    method: Mapping[str, Any], settings: Settings | None, fn: Callable[[], T], expected_run_s: float | None = None,
    llama_bench: Path | None = None, server_ms: Callable[[T], float | None] | None = None,
    spans: Callable[[T], list[tuple[float, float]]] | None = None, headers: Mapping[str, str] | None = None,
    watch_server: bool = True, chunked: Callable[[Callable[[int], None]], T] | None = None,
) -> tuple[T, Bracketed]:
    """Run `fn` watched; (fn's result, what was seen). Exceptions of `fn` pass through; the control, the machine
    state and the endpoint's evidence never raise.

    - a probe (`kind` probe): the endpoint's own evidence (`measure/endpoint.py`): the local server's scheduling,
      its /metrics load (with `headers`, the probe's own), the client's delay; `spans(result)` gives the probe's
      requests as (start, end) on the monotonic clock, `server_ms(result)` the identity request's time; with
      `watch_server` False (a method that will be refused) nothing is watched and nothing is sent;
    - a llama-bench run: the tiny-model control before and after it, the measured llama-bench's own run-queue
      delay and CPU share while it ran, and the steal over the run;
    - `chunked`: the same measurement as `fn`, of several runs, called with `mark(n)`, which it calls after each
      measured run of `n` samples (per test): a control run follows every one (C M C M … C), and the control
      keeps each run's `chunks` (`measure/interleave.py`); `fn` is what runs when no control does."""
    if method.get("kind") == "probe":
        if not watch_server:
            return fn(), Bracketed({}, None, 0.0)
        return _bracket_probe(method, fn, server_ms, spans, headers)
    run = runner(method, settings, llama_bench) if _enabled(settings) else None
    watch = machine.Watch().start()
    before = run(budget_for(expected_run_s)) if run else None
    own = sched.watch_children().start() if method.get("kind") == "llama-bench" else None
    ctl: Control | None
    if chunked is not None and run is not None and before is not None:
        result, ctl, run_s, cpu = _interleaved(chunked, run, before)
        usage = own.stop() if own is not None else None
    else:
        cpu0 = _children_cpu_s()
        started = time.monotonic()
        result = fn()
        run_s = time.monotonic() - started
        usage = own.stop() if own is not None else None
        cpu = _children_cpu_s() - cpu0
        after = run(budget_for(run_s)) if run else None
        ctl = before.merge(after) if before is not None and after is not None else None
    state = watch.stop()
    if ctl is not None and method.get("kind") == "llama-bench" and run_s > 0 and cpu > 0:
        ctl.run_cpu_share = cpu / run_s  # how much CPU the measured llama-bench got while it ran
    if ctl is not None and usage is not None and usage.readable:
        ctl.run_wait = usage.runnable_wait  # the share of its runnable time it waited for a CPU
        ctl.run_steal = usage.steal
    return result, Bracketed(state, ctl, run_s)


def _interleaved(
    chunked: Callable[[Callable[[int], None]], T], run: Callable[[float], Control], before: Control
) -> tuple[T, Control, float, float]:
    """C M C M … C: `chunked` measures, calling `mark(n)` after each measured run; a control run follows each.
    (its result, the merged control with its chunks, the measured runs' time, their CPU seconds). The time and
    CPU are the measured runs' alone (the control runs between them are not counted)."""
    controls = [before]
    sizes: list[int] = []
    clock = {"run_s": 0.0, "cpu": 0.0, "started": time.monotonic(), "cpu0": _children_cpu_s()}

    def mark(n: int) -> None:
        took = time.monotonic() - clock["started"]
        clock["run_s"] += took
        clock["cpu"] += _children_cpu_s() - clock["cpu0"]
        sizes.append(n)
        controls.append(run(budget_for(took)))
        clock["started"], clock["cpu0"] = time.monotonic(), _children_cpu_s()

    result = chunked(mark)
    if not sizes:  # it never marked: one run, bracketed as usual
        clock["run_s"] = time.monotonic() - clock["started"]
        clock["cpu"] = _children_cpu_s() - clock["cpu0"]
        controls.append(run(budget_for(clock["run_s"])))
    ctl = controls[0]
    for later in controls[1:]:
        ctl = ctl.merge(later)
    runs = [(statistics.fmean(c.samples), interleave.run_se(c.samples)) if c.samples else None for c in controls]
    chunks = [interleave.around(runs[i], runs[i + 1], n) for i, n in enumerate(sizes)]
    if chunks and all(c is not None for c in chunks):
        ctl.chunks = [c.as_data() for c in chunks if c is not None]
    return result, ctl, clock["run_s"], clock["cpu"]


def _bracket_probe(
    method: Mapping[str, Any], fn: Callable[[], T], server_ms: Callable[[T], float | None] | None,
    spans: Callable[[T], list[tuple[float, float]]] | None, headers: Mapping[str, str] | None,
) -> tuple[T, Bracketed]:
    from factreg.measure import endpoint

    started = time.monotonic()
    result, evidence = endpoint.bracket_probe(str(method.get("url") or ""), headers, fn, spans or (lambda _r: []))
    run_s = time.monotonic() - started
    if server_ms is not None:
        try:
            ms = server_ms(result)
        except Exception:  # noqa: BLE001 - evidence never fails a measurement
            ms = None
        if ms is not None:
            evidence.data["identity_ms"] = round(ms, 2)
    evidence.data["run_s"] = round(run_s, 3)
    return result, Bracketed(evidence.machine_state or {}, None, run_s, evidence)


def _children_cpu_s() -> float:
    """User + system CPU seconds of this process's finished children (the measured llama-bench among them)."""
    try:
        import resource

        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    except (ImportError, OSError):
        return 0.0
    return float(usage.ru_utime + usage.ru_stime)


def _enabled(settings: Settings | None) -> bool:
    if settings is None or not hasattr(settings, "get"):
        return True
    return str(settings.get("verify.control", "true")).lower() not in ("false", "0", "no", "off")


# ---------------------------------------------------------------- reading

def parse(text: Any) -> dict[str, Any]:
    """A `control` condition back as data ({} when absent or not a JSON object)."""
    return machine.parse(text)


def of_fact(fact: Mapping[str, Any]) -> dict[str, Any]:
    return parse(((fact.get("conditions") or {}).get("info") or {}).get(KEY))
