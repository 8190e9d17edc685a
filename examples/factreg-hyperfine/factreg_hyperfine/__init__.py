"""factreg-hyperfine: hyperfine's `--export-json` results as factreg facts, re-verified by re-running the command.

An example plugin (entry-point group `factreg`, docs/plugins.md). It registers:

- an importer, `hyperfine`: each result of an export becomes a fact `hyperfine/<command>` of the custom metric
  `wall_time` (seconds, lower is better), its `times` the samples, the command and hyperfine's `parameters`
  (`--parameter-scan`, `--parameter-list`) its identity conditions, the machine this host. An export holds no date:
  the facts are dated by the import. Their method, `{"kind": "hyperfine", "command": …, "runs": …}`, is imported
  and so untrusted until `import --trust` or `verify --trust-imported`, as for factreg's own formats.
- a verifier, method kind `hyperfine`: re-runs the command with hyperfine, but only a command written exactly in
  the config's `[hyperfine] allow` list. A stored command is registry data, and the registry is not a place code
  may come from: a command off the list is refused and nothing runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from factreg.plugins import Importer, Verifier, hookimpl

KIND = "hyperfine"
METRIC = "wall_time"
MAX_COMMAND = 1000
MAX_RUNS = 1000
DEFAULT_RUNS = 10
MAX_FILE_BYTES = 64 * 1024 * 1024


@hookimpl
def register_importers(register: Callable[[Any], None]) -> None:
    register(Importer(KIND, "hyperfine --export-json results", "factreg_hyperfine:import_files",
                      "factreg_hyperfine:recognise"))


@hookimpl
def register_verifiers(register: Callable[[Any], None]) -> None:
    register(Verifier(KIND, "factreg_hyperfine:remeasure", measures=f"{METRIC} (s): a command's wall-clock time",
                      conditions="the command and hyperfine's parameters; only commands on [hyperfine] allow run",
                      samples_key="runs"))


# ---------------------------------------------------------------- reading an export


def _is_result(item: Any) -> bool:
    return (isinstance(item, dict) and isinstance(item.get("command"), str) and isinstance(item.get("times"), list)
            and isinstance(item.get("mean"), (int, float)) and "exit_codes" in item)


def is_export(data: Any) -> bool:
    """hyperfine's export: an object whose `results` are objects with a command, its times and exit codes."""
    return (isinstance(data, dict) and isinstance(data.get("results"), list) and bool(data["results"])
            and all(_is_result(r) for r in data["results"]))


def _load(path: Path) -> Any:
    from factreg import textfile
    from factreg.errors import BadInput

    try:
        return json.loads(textfile.decode(textfile.read_bytes(path, max_bytes=MAX_FILE_BYTES), str(path)))
    except (ValueError, RecursionError):
        raise BadInput(f"{path}: not valid JSON") from None


def recognise(path: Path) -> bool:
    """Whether a file is a hyperfine export (read whole: an export is small)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(64).lstrip()[:1] != b"{":
                return False
        return is_export(_load(Path(path)))
    except Exception:  # noqa: BLE001 - anything unreadable is not ours to claim
        return False


def slug(command: str) -> str:
    """A command as the last part of a fact id: `sleep 0.020` → `sleep-0.020`."""
    text = re.sub(r"[^a-z0-9._-]+", "-", command.lower()).strip("-._")
    return re.sub(r"-{2,}", "-", text)[:120].strip("-._") or "command"


def new_facts(path: Path, data: Any, hostname: str, trust: bool) -> list[Any]:
    """The facts of one export (factreg.registry.facts.NewFact), validated by the caller before any is written."""
    from factreg.errors import BadInput
    from factreg.registry import provenance
    from factreg.registry.facts import NewFact

    if not is_export(data):
        raise BadInput(f"{path}: not a hyperfine --export-json file (no results with command, times, exit_codes)")
    made = []
    for result in data["results"]:
        command = result["command"]
        if not command.strip() or len(command) > MAX_COMMAND or "\0" in command:
            raise BadInput(f"{path}: a command must be 1 to {MAX_COMMAND} characters")
        times = result["times"]
        if not times or not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in times):
            raise BadInput(f"{path}: {command[:60]!r}: `times` must be a list of numbers")
        codes = result.get("exit_codes") or []
        if any(c not in (0, None) for c in codes):
            raise BadInput(f"{path}: {command[:60]!r} exited with a failure in some runs: no timing to trust")
        params = result.get("parameters") or {}
        if not isinstance(params, dict):
            raise BadInput(f"{path}: {command[:60]!r}: `parameters` must be an object")
        identity = {"machine": hostname, "command": command}
        identity.update({f"param.{k}": str(v) for k, v in sorted(params.items())})
        made.append(NewFact(
            id=f"hyperfine/{slug(command)}", metric=METRIC, unit="s", direction="lower",
            samples=[float(t) for t in times], identity=identity, info={"tool": "hyperfine"},
            subject=command, method={"kind": KIND, "command": command, "runs": len(times)},
            origin=provenance.IMPORTED, source=str(path), trusted=trust,
        ))
    return made


def import_files(registry: Any, paths: Sequence[Path], *, settings: Any, say: Callable[[str], None] | None = None,
                 trust: bool = False) -> dict[str, Any]:
    """`factreg import [hyperfine] FILE...`: every fact of every file validated, then recorded in one transaction."""
    from factreg.errors import BadInput, FactregError
    from factreg.registry import facts

    news: list[Any] = []
    for path in paths:
        news += new_facts(Path(path), _load(Path(path)), settings.hostname, trust)
    seen: set[str] = set()
    for new in news:
        if new.id in seen:
            raise BadInput(f"two results give the fact id {new.id}: import them one at a time")
        seen.add(new.id)
        try:
            facts.build_rows(new, settings.min_uptime_s)
        except FactregError as exc:
            raise BadInput(f"{new.source}: {new.id}: {exc.message}") from None
    written = facts.record_many(registry, news, settings.min_uptime_s)
    if say:
        say("hyperfine's export holds no date: the facts are dated by this import")
    return {"facts": len(written), "files": len(paths), KIND: len(paths), "ids": written}


# ---------------------------------------------------------------- re-running


def allowed(settings: Any) -> list[str]:
    """The commands `verify` may re-run: `[hyperfine] allow` in the config, each exactly as written."""
    return settings.names("hyperfine.allow") if settings is not None else []


def find_hyperfine() -> str:
    from factreg.errors import ConfigError

    found = os.environ.get("FACTREG_HYPERFINE") or shutil.which("hyperfine")
    if not found:
        raise ConfigError("hyperfine is not installed (apt-get install hyperfine), or set FACTREG_HYPERFINE")
    return found


def remeasure(method: Mapping[str, Any], facts: Sequence[Mapping[str, Any]], settings: Any) -> dict[str, Any]:
    """Re-run an allow-listed command with hyperfine; the same measurement for every fact of the group."""
    from factreg.errors import UsageError
    from factreg.measure.measurement import Measurement

    command = method.get("command")
    if not isinstance(command, str) or not command.strip() or len(command) > MAX_COMMAND:
        raise UsageError("a hyperfine method's command must be text of 1 to 1000 characters")
    if command not in allowed(settings):
        raise UsageError(f"the command {command[:80]!r} is not in [hyperfine] allow of the config: a stored command "
                         "is never run unless the config names it exactly (add it there to let verify re-run it)")
    runs = method.get("runs", DEFAULT_RUNS)
    if isinstance(runs, bool) or not isinstance(runs, int) or not 2 <= runs <= MAX_RUNS:
        runs = DEFAULT_RUNS
    timeout = float(settings.get("verify.timeout_s", 600)) if settings is not None else 600.0
    with tempfile.TemporaryDirectory(prefix="factreg-hyperfine-") as tmp:
        out = Path(tmp) / "export.json"
        argv = [find_hyperfine(), "--style", "basic", "--runs", str(runs), "--export-json", str(out), "--", command]
        try:
            run = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return {f["id"]: Measurement(failure="error", message=f"hyperfine ran over {timeout:g} s") for f in facts}
        if run.returncode != 0 or not out.exists():
            last = (run.stderr.strip().splitlines() or ["no output"])[-1][:200]
            return {f["id"]: Measurement(failure="error", message=f"hyperfine failed: {last}") for f in facts}
        data = json.loads(out.read_text(encoding="utf-8"))
    times = [float(t) for t in data["results"][0]["times"]]
    observed = {"command": command, "machine": settings.hostname} if settings is not None else {"command": command}
    return {f["id"]: Measurement(samples=list(times), n=len(times), observed=dict(observed), raw=json.dumps(data))
            for f in facts}
