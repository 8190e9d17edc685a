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
run's time — the run it follows, when interleaved), keeping the tests that finished — only on a machine so busy that none has, it may run on to
`HARD_STOP` × that for its first one. A control that could not run is recorded with its reason and the verdict
then says the machine could not be compared. A control is kept as the info condition `control` (compact JSON) of a fact, and in the
`observed` conditions of a verification (both are `ALWAYS_INFO`, so a correction carries them as info).

At verification the control is re-run; **speed factor** = control now / control then (how much faster the machine
ran). `adjust` applies it to a verdict (docs/machine.md):

- control held (within the tolerance) → the verdict stands as the statistics reached it;
- control moved → the measurement is also judged scaled by the factor (a rate ÷ factor, a latency × factor),
  against the tolerance widened by the factor's own 95% interval and `TRACKING` × |ln factor| (at most
  `MAX_GAP`): refuted only
  when both the measurement and the scaled measurement refute; otherwise `inconclusive` with the factor, the
  controls and the scaled value. A confirmation stands unless the control moved significantly and scaled the
  measurement would not agree.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from factreg import fmt
from factreg.errors import FactregError
from factreg.measure import interleave, machine, sched

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.judge import Side
    from factreg.measure.measurement import Measurement
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData

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
    cpu_s: float = 0.0  # CPU seconds of the control runs themselves (their CPU share: cpu_s / seconds)

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
            cpu_s=self.cpu_s + other.cpu_s,
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
        if self.cpu_s > 0 and self.seconds > 0:
            data["cpu_share"] = round(self.cpu_s / self.seconds, 3)
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
    cpu0 = _children_cpu_s()
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
    ctl.cpu_s = _children_cpu_s() - cpu0
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


# ---------------------------------------------------------------- reading and comparing


def parse(text: Any) -> dict[str, Any]:
    """A `control` condition back as data ({} when absent or not a JSON object)."""
    return machine.parse(text)


def of_fact(fact: Mapping[str, Any]) -> dict[str, Any]:
    return parse(((fact.get("conditions") or {}).get("info") or {}).get(KEY))


@dataclass(frozen=True)
class Factor:
    """The speed factor (control now / control then), its relative 95% half-width, and the p-value of the
    controls' difference (Welch; None when a side has fewer than two samples)."""

    value: float
    half_width: float
    p_value: float | None


def _side(ctl: Mapping[str, Any]) -> tuple[float, float, int] | None:
    xs = [float(x) for x in ctl.get("samples") or [] if isinstance(x, (int, float))]
    if len(xs) >= 2:
        return statistics.fmean(xs), statistics.stdev(xs), len(xs)
    value = ctl.get("value")
    return (float(value), 0.0, 1) if isinstance(value, (int, float)) else None


def speed_factor(then: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[Factor | None, str]:
    """How much faster the machine ran now than then (control now / control then), or None and why not."""
    import math

    from factreg.registry import stats

    if not then:
        return None, "the fact was recorded without a control measurement"
    if not now:
        return None, "this verification ran no control measurement"
    if now.get("error") and not now.get("value"):
        return None, f"the control could not run now ({now['error']})"
    if then.get("error") and not then.get("value"):
        return None, f"the fact's control could not run ({then['error']})"
    if then.get("kind") != now.get("kind") or then.get("spec") != now.get("spec"):
        return None, "the control differs from the fact's (another workload or device settings)"
    a, b = _side(then), _side(now)
    if a is None or b is None or a[0] <= 0 or b[0] <= 0:
        return None, "a control has no value"
    rel_se = math.sqrt((a[1] ** 2 / a[2]) / a[0] ** 2 + (b[1] ** 2 / b[2]) / b[0] ** 2)
    test = stats.welch(a[0], a[1], a[2], b[0], b[1], b[2])
    return Factor(b[0] / a[0], 1.96 * rel_se, test.p_value if test else None), ""


def share_factor(then: Mapping[str, Any], now: Mapping[str, Any]) -> float | None:
    """How much more CPU the measured run got now than then (CPU-seconds per second of its run), or None."""
    a, b = then.get("run_cpu_share"), now.get("run_cpu_share")
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0:
        return float(b) / float(a)
    return None


def unseen_share(then: Mapping[str, Any], now: Mapping[str, Any]) -> float | None:
    """What an interleaved control cannot see: how much more CPU the measured runs got relative to the control
    runs beside them, now than then — (run share / control share) now ÷ the same then. None unless all four
    were recorded. (A machine-wide change of load moves both shares and cancels.)"""
    values = [side.get(key) for side in (then, now) for key in ("run_cpu_share", "cpu_share")]
    if not all(isinstance(v, (int, float)) and v > 0 for v in values):
        return None
    run_then, ctl_then, run_now, ctl_now = (float(v) for v in values if isinstance(v, (int, float)))
    return (run_now / ctl_now) / (run_then / ctl_then)


def wait_factor(then: Mapping[str, Any], now: Mapping[str, Any]) -> float | None:
    """How much more of the CPU it wanted the measured run got now than then, from its own run-queue delay and
    the steal over it: (1 − wait now)(1 − steal now) / ((1 − wait then)(1 − steal then)); a side that did not
    record it counts as unhindered. None when the run now did not record it."""

    def got(side: Mapping[str, Any]) -> float:
        wait, steal = side.get("run_wait"), side.get("run_steal")
        w = float(wait) if isinstance(wait, (int, float)) and 0 <= wait < 1 else 0.0
        st = float(steal) if isinstance(steal, (int, float)) and 0 <= steal < 1 else 0.0
        return (1 - w) * (1 - st)

    if not isinstance(now.get("run_wait"), (int, float)):
        return None
    return got(now) / got(then)


def moved(factor: float, tolerance: float) -> bool:
    """The control moved: by more than the tolerance, either way (2× faster and 2× slower alike)."""
    return max(factor, 1 / factor) - 1 > tolerance


def allowed_gap(factor: Factor, tolerance: float) -> float:
    """How far a scaled measurement may lie from the fact and still agree: the tolerance, widened by the factor's
    own uncertainty and by how imperfectly two workloads follow one change of speed."""
    import math

    widened = tolerance + factor.half_width + TRACKING * abs(math.log(factor.value))
    return max(tolerance, min(widened, MAX_GAP))


def describe(factor: float) -> str:
    """`2.0× faster` / `1.6× slower`."""
    return f"{factor:.1f}× faster" if factor >= 1 else f"{1 / factor:.1f}× slower"


def control_text(then: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    unit = str(now.get("unit") or then.get("unit") or "")
    return f"control {_short(then.get('value'))} → {_short(now.get('value'))} {unit}".rstrip()


def _short(x: Any) -> str:
    if not isinstance(x, (int, float)):
        return "?"
    if abs(x) >= 1000:
        return f"{x / 1000:.1f}k"
    return fmt.num(float(x))


def scaled_side(side: Side, factor: float, direction: str | None) -> Side:
    """The new side as if measured on the machine as it was: a rate ÷ factor, a latency × factor."""
    from factreg.measure.judge import Side

    k = 1 / factor if direction != "lower" else factor
    return Side(side.mean * k, side.sd * k if side.sd is not None else None, side.n)


def adjust(fact: FactData, m: Measurement, result: dict[str, Any], settings: Settings | None) -> dict[str, Any]:
    """The verdict with the machine's speed taken into account (docs/machine.md). `result` is the statistics'
    verdict (a VerifyResult); returns it amended with `speed_factor`, `scaled`, `machine`, `control` and, when
    the machine's speed changed the verdict, `as_measured`.

    - refuted as measured: the control held and the measured run got the CPU share it had (both within the
      tolerance) → refuted, as the statistics said; otherwise judged again scaled by each factor that moved
      (the control's, then the CPU share's): still outside `allowed_gap` under each → refuted, else
      inconclusive;
    - confirmed as measured: the control moved beyond the tolerance, significantly, and scaled the measurement
      would lie outside `allowed_gap` → inconclusive; else confirmed;
    - inconclusive stays inconclusive; other verdicts are left alone.
    """
    from factreg.measure import endpoint
    from factreg.measure import judge as judging
    from factreg.registry.verdicts import Verdict

    if (fact.get("method") or {}).get("kind") == "probe" or endpoint.KEY in m.observed:
        return endpoint.adjust(fact, m, result, settings)  # a probe: the server's own evidence, never a client loop
    then = of_fact(fact)
    now = parse(m.observed.get(KEY))
    state_then = machine.parse(((fact.get("conditions") or {}).get("info") or {}).get(machine.KEY))
    state_now = machine.parse(m.observed.get(machine.KEY))
    result["machine"] = {"fact": state_then, "now": state_now}
    result["control"] = {"fact": then, "now": now}
    verdict = result.get("verdict")
    if verdict not in (Verdict.CONFIRMED, Verdict.REFUTED, Verdict.INCONCLUSIVE):
        return result
    factor, why_not = speed_factor(then, now)
    load = f"machine now: {machine.summary(state_now)}" if state_now else ""
    if factor is None:
        result["speed_factor"] = None
        result["message"] += f"; the machine could not be compared: {why_not}"
        if not then and now.get("value"):
            result["message"] += " (this verification's control is kept as the fact's from now on)"
        return result
    f = factor.value
    result["speed_factor"] = round(f, 3)
    tolerance = float(result.get("tolerance") or judging.tolerance_for(fact, settings))
    alpha = float(settings.get("verify.alpha", judging.DEFAULT_ALPHA)) if settings is not None else 0.05
    held = not moved(f, tolerance)
    share = share_factor(then, now)
    result["cpu_share_factor"] = round(share, 3) if share is not None else None
    new = judging.new_side(m.samples, m.value, m.spread, m.n)
    # What could explain a difference: the control's factor, and the measured run's own CPU share (llama-bench).
    candidates: list[tuple[Factor, str]] = []
    if not held:
        candidates.append((factor, f"the machine ran {describe(f)} than when the fact was recorded: "
                                   f"{control_text(then, now)}"))
    waited = wait_factor(then, now)
    own = _own_share(then, now, share, waited, tolerance)
    if verdict == Verdict.REFUTED:
        prefix = "the machine held its speed, but " if held else ""
        candidates += [(cand, f"{prefix}{why}; {control_text(then, now)}" if i == 0 else why)
                       for i, (cand, why) in enumerate(own)]  # fmt: skip
    significant = factor.p_value is not None and factor.p_value < alpha
    paired = None if new is None else interleave.compare(fact, m.samples, then, now, tolerance,
                                                         tracking_gap(f, tolerance), alpha)  # fmt: skip
    if paired is not None and new is not None:
        unseen = unseen_share(then, now)  # the measured runs' CPU share relative to their controls' share
        own = [] if unseen is None or not moved(unseen, tolerance) else [(Factor(unseen, 0.0, None), (
            f"the measured runs got {unseen:.2f}× the CPU share, relative to the control runs beside them, that "
            "they had when the fact was recorded"))]
        return _decide_paired(fact, result, paired, own, moved(f, tolerance) and significant, (then, now),
                              tolerance, alpha, load)  # fmt: skip
    if not candidates or new is None or (verdict == Verdict.CONFIRMED and not significant):
        how = "held its speed" if held else f"ran {describe(f)}, within the control's own noise"
        result["message"] += f"; the machine {how} ({control_text(then, now)}, ×{f:.2f})" + (
            f"; {load}" if load else "")
        return result
    tried = []
    for cand, speed in candidates:
        gap = allowed_gap(cand, tolerance)
        scaled = scaled_side(new, cand.value, fact.get("direction"))
        outcome = judging.compare(judging.old_side(fact), scaled, gap, alpha, unit=fact["unit"])
        rel = f"{outcome.rel_diff * 100:+.0f}%" if outcome.rel_diff is not None else "?"
        scaled_text = (f"scaled to the machine as it was: {fmt.value(scaled.mean, scaled.sd, fact['unit'])} "
                       f"({rel}; agreement within ±{gap * 100:.0f}%: the tolerance, the factor's noise and tracking)")
        raw = result.get("rel_diff")
        if (outcome.verdict == Verdict.REFUTED and raw is not None and outcome.rel_diff is not None
                and raw * outcome.rel_diff < 0):
            # Scaled by the whole factor the measurement overshoots to the other side of the fact: a part of the
            # factor explains the difference exactly, so the machine's change can account for it — not a refutation.
            outcome = replace(outcome, verdict=Verdict.INCONCLUSIVE)
            scaled_text += ": as measured below the fact, scaled above it (or the reverse), so part of the change explains it"
        tried.append((outcome, scaled, gap, f"{speed}; {scaled_text}"))
        if outcome.verdict != Verdict.REFUTED:
            break  # one change of the machine that explains the difference is enough to doubt it
    outcome, scaled, gap, detail = tried[-1]
    result["scaled"] = {"value": scaled.mean, "spread": scaled.sd, "n": scaled.n, "verdict": str(outcome.verdict),
                        "rel_diff": outcome.rel_diff, "allowed": round(gap, 3)}  # fmt: skip
    detail = "; ".join(d for *_, d in tried) + (f"; {load}" if load else "")
    refutes = outcome.verdict == Verdict.REFUTED
    if verdict == Verdict.REFUTED and refutes:
        result["message"] += f"; {detail}: scaled it still refutes the fact"
    elif verdict == Verdict.REFUTED:
        result["as_measured"] = str(verdict)
        result["verdict"] = Verdict.INCONCLUSIVE
        result["message"] = f"{detail}: scaled, the measurement agrees (as measured: {result['message']})"
    elif verdict == Verdict.CONFIRMED and refutes:
        result["as_measured"] = str(verdict)
        result["verdict"] = Verdict.INCONCLUSIVE
        result["message"] = (f"{detail}: as measured it agrees, but scaled it would not "
                             f"(as measured: {result['message']})")
    else:
        result["message"] += f"; {detail}"
    return result


def tracking_gap(factor: float, tolerance: float) -> float:
    """How far a control-relative measurement may lie from the fact before it refutes it: the tolerance widened
    by how imperfectly the measured workload follows a change of the control's speed."""
    import math

    return max(tolerance, min(tolerance + TRACKING * abs(math.log(factor)), MAX_GAP))


def _own_share(
    then: Mapping[str, Any], now: Mapping[str, Any], share: float | None, waited: float | None, tolerance: float
) -> list[tuple[Factor, str]]:
    """What the control cannot see: the measured run's own CPU share and run-queue delay, when they moved."""
    out = []
    if share is not None and moved(share, tolerance):
        out.append((Factor(share, 0.0, None),
                    f"the measured run got {share:.2f}× the CPU share it had when the fact was recorded "
                    f"({then['run_cpu_share']:.2f} → {now['run_cpu_share']:.2f} CPU-seconds per second)"))
    if waited is not None and moved(waited, tolerance):
        out.append((Factor(waited, 0.0, None),
                    f"the measured llama-bench waited on a run-queue {now.get('run_wait', 0) * 100:.0f}% of its "
                    f"runnable time (when the fact was recorded: {(then.get('run_wait') or 0) * 100:.0f}%)"
                    + (f", steal {now['run_steal'] * 100:.0f}%" if now.get("run_steal") else "")))
    return out


def _decide_paired(
    fact: FactData, result: dict[str, Any], paired: interleave.Paired, own: list[tuple[Factor, str]],
    machine_moved: bool, controls: tuple[Mapping[str, Any], Mapping[str, Any]], tolerance: float, alpha: float,
    load: str,
) -> dict[str, Any]:
    """The verdict when both sides were measured with the interleaved control (`measure/interleave.py`): each
    sample relative to the control runs around it, so the machine's drift between runs cancels.

    - refuted: relative to the control it refutes (as measured it need not: drift can hide a difference), and
      neither the measured run's own CPU share nor its run-queue delay, both unseen by the control, explains it;
    - confirmed: relative to the control it is equivalent and the machine runs as it did (its control did not
      move significantly beyond the tolerance) — or as measured it is equivalent and relative to the control it
      does not refute;
    - inconclusive otherwise, naming what limits it."""
    from factreg.measure import judge as judging
    from factreg.registry.verdicts import Verdict

    verdict, pv = result["verdict"], paired.verdict
    rel = paired.outcome
    result["relative"] = paired.as_json()
    raw = result["message"]
    f = float(result["speed_factor"])
    held = not moved(f, tolerance)
    machine_text = (f"the machine held its speed ({control_text(*controls)}, ×{f:.2f})" if held else
                    f"the machine ran {describe(f)} than when the fact was recorded ({control_text(*controls)})")
    said = f"relative to the interleaved control: {rel.message}; {machine_text}"
    tail = f"; {load}" if load else ""
    if pv == Verdict.REFUTED:
        for cand, why in own:  # what the control cannot see may still account for it
            scaled = scaled_side(paired.new, cand.value, fact.get("direction"))
            again = judging.compare(paired.old, scaled, allowed_gap(cand, tolerance), alpha)
            if again.verdict != Verdict.REFUTED:
                return _amend(result, Verdict.INCONCLUSIVE, f"{said}; but {why}: scaled by it, the measurement "
                              f"agrees (as measured: {raw}){tail}", None)  # fmt: skip
        if verdict == Verdict.CONFIRMED:
            return _amend(result, Verdict.INCONCLUSIVE, f"as measured it agrees, but {said} (as measured: {raw})"
                          f"{tail}", None)  # fmt: skip
        if verdict == Verdict.REFUTED:
            result["message"] = f"{raw}; {said}{tail}"
            return result
        return _amend(result, Verdict.REFUTED, f"{said} (as measured: {raw}){tail}", None)
    if verdict == Verdict.REFUTED:
        return _amend(result, Verdict.INCONCLUSIVE, f"{said}: the machine's change between runs accounts for the "
                      f"difference (as measured: {raw}){tail}", rel.needed_n)  # fmt: skip
    if pv == Verdict.CONFIRMED and verdict == Verdict.INCONCLUSIVE:
        if machine_moved:
            return _amend(result, Verdict.INCONCLUSIVE, f"{said}, so the fact's value itself is not shown (as "
                          f"measured: {raw}) — verify again when it runs as it did{tail}", None)  # fmt: skip
        return _amend(result, Verdict.CONFIRMED, f"{said} (as measured: {raw}){tail}", None)
    if verdict == Verdict.INCONCLUSIVE:
        result["message"] = f"{raw}; {said}{tail}"
        if rel.needed_n is not None:
            result["needed_n"] = rel.needed_n if result.get("needed_n") is None else min(result["needed_n"],
                                                                                          rel.needed_n)
        elif result.get("needed_n") is not None and "too imprecise" in rel.message:
            result["needed_n"] = None  # relative to the control only the fact's own imprecision limits it
        return result
    result["message"] = f"{raw}; {said}{tail}"
    return result


def _amend(result: dict[str, Any], verdict: str, message: str, needed_n: int | None) -> dict[str, Any]:
    """The verdict the control-relative comparison reached, keeping the statistics' own as `as_measured`."""
    result["as_measured"] = str(result["verdict"])
    result["verdict"] = verdict
    result["message"] = message
    result["needed_n"] = needed_n
    result["decided_by"] = "control-relative"
    return result


def compare_warnings(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, str]]:
    """`compare`'s warnings about the machine: the two facts' controls differ beyond the default tolerance, or
    only one has a control, or they ran different workloads (nothing when neither has a control)."""
    from factreg.registry.verdicts import DEFAULT_TOLERANCE

    ca, cb = of_fact(a), of_fact(b)
    if not ca and not cb:
        return []
    if not ca or not cb:
        missing = "A" if not ca else "B"
        return [{"code": "control_missing", "message": f"control_missing: {missing} was recorded without a control "
                 "measurement — the machine's speed at the two measurements cannot be compared"}]
    factor, why_not = speed_factor(cb, ca)
    if factor is None:
        return [{"code": "controls_differ", "message": f"controls_differ: {why_not} — the machine's speed at the two "
                 "measurements cannot be compared"}]
    if moved(factor.value, DEFAULT_TOLERANCE):
        return [{"code": "controls_differ", "message": f"controls_differ: A was measured on a machine running "
                 f"{describe(factor.value)} than B ({control_text(cb, ca).replace('→', 'vs', 1)} for B vs A) — "
                 "part of the ratio may be the machine's, not the setup's"}]
    return []


def with_baseline(registry: Registry, fact: FactData) -> FactData:
    """A fact recorded without a control takes the control of its first confirmed verification that ran one."""
    if of_fact(fact):
        return fact
    found = registry.query(
        "SELECT observed FROM verification WHERE fact_id = :id AND fact_version = :v AND verdict = 'confirmed' "
        "AND observed LIKE :k ORDER BY pk",
        {"id": fact["id"], "v": fact["version"], "k": f'%"{KEY}"%'},
    )
    for row in found:
        ctl = parse((json.loads(row["observed"] or "{}") or {}).get(KEY))
        for key in ("parts", interleave.KEY):  # they pair the verification's own samples, not the fact's
            ctl.pop(key, None)
        if ctl.get("value"):
            info = {**fact["conditions"]["info"], KEY: json.dumps(ctl, sort_keys=True, separators=(",", ":"))}
            return {**fact, "conditions": {**fact["conditions"], "info": info}}
    return fact
