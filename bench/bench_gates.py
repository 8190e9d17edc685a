"""Review-time checks benchmark: `factreg docs check --changed-since main` (and `docs lint`) on a 10,000-file
repository with a 20-file change, against the same command given those 20 files alone. Target: ≤ 2× (medians of
whole processes, interleaved). The change is 10 files edited in a commit on a branch and 10 edited in the work
tree, each with one new unsourced claim and one new citation; the repository is the docs benchmark's tree
(bench_docs.make_tree: ≥ 50 MB of English and Korean prose, ~10% citing facts) committed on `main`.

Writes bench/results/gates.md (assembled into docs/performance.md by run_all.py).
Run: `python bench/bench_gates.py [--quick]`.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_docs import make_tree  # noqa: E402
from common import TABLE_HEAD, factreg_cmd, machine, row, write_section  # noqa: E402


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"{cmd[1:4]} failed ({r.returncode}): {r.stderr[-800:]}")
    return elapsed, " / ".join(r.stderr.strip().splitlines())


def main() -> None:
    quick = "--quick" in sys.argv
    n_files, reps = (2_000, 5) if quick else (10_000, 11)
    rnd = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="factreg-bench-gates-") as tmp:
        repo = Path(tmp) / "repo"
        (repo / "docs").mkdir(parents=True)
        db = Path(tmp) / "facts.db"
        size = make_tree(repo / "docs", n_files, f"sqlite:///{db}", rnd, 0.3)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "docs")
        git(repo, "checkout", "-q", "-b", "change")
        from factreg.docs import markers
        from factreg.registry import facts
        from factreg.registry.store import Registry

        reg = Registry(f"sqlite:///{db}")
        fact = facts.list_facts(reg)[0]
        marker = f"<!-- fact: {fact['id']} -->{markers.render(fact)}<!-- /fact -->"
        reg.close()
        every = sorted((repo / "docs").rglob("*.md"))
        chosen = rnd.sample(every, 20)
        for k, path in enumerate(chosen):
            text = path.read_text(encoding="utf-8")
            path.write_text(text + f"\nThe change made decoding reach 4{k}.5 tok/s.\n\nNow: {marker}.\n",
                            encoding="utf-8")
            if k == 9:
                git(repo, "commit", "-q", "-am", "half the change")
        env = {**os.environ, "FACTREG_DB": str(db)}
        rel = [str(p.relative_to(repo)) for p in chosen]
        sides = {
            "check": ([*factreg_cmd(), "docs", "check", "--changed-since", "main", "docs"],
                      [*factreg_cmd(), "docs", "check", *rel]),
            "lint": ([*factreg_cmd(), "docs", "lint", "--changed-since", "main", "docs"],
                     [*factreg_cmd(), "docs", "lint", *rel]),
        }
        rows = []
        notes = []
        for name, (changed_cmd, alone_cmd) in sides.items():
            ours: list[float] = []
            base: list[float] = []
            run(changed_cmd, repo, env)  # warm the page cache and git's index
            for _ in range(reps):  # interleaved
                t, summary_changed = run(changed_cmd, repo, env)
                ours.append(t)
                t, summary_alone = run(alone_cmd, repo, env)
                base.append(t)
            rows.append(row(f"docs {name} --changed-since main ({n_files:,} files, 20 changed) vs. the 20 files "
                            "given alone", ours, base, 2.0))
            notes.append(f"`docs {name}` summary lines: changed-since: “{summary_changed}”; alone: “{summary_alone}”")
        ratio = statistics.median(ours) / statistics.median(base)
        print(f"lint ratio {ratio:.2f}", file=sys.stderr)
    text = (
        "## Review-time checks: only what changed\n\n"
        f"Measured with `bench/bench_gates.py` on {machine()}. A git repository of {n_files:,} Markdown files "
        f"({size / 1e6:.0f} MB, the docs benchmark's tree) committed on `main`; a branch changes 20 of them (10 in a "
        "commit, 10 in the work tree), each with one new unsourced claim and one new citation. Each side is a whole "
        f"process, run {reps}× interleaved after one warm-up (load average at the end "
        f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}, other jobs sharing the cores); times in seconds. The baseline is the same command given "
        "the 20 changed files by name: what the change costs to judge, without git or the walk.\n\n"
        + TABLE_HEAD.format(u="s") + "\n" + "\n".join(rows) + "\n\n"
        + "\n".join(f"- {n}" for n in notes) + "\n\n"
        "`--changed-since` reads only the changed files: it asks git for the change (`git diff --find-renames -U0` "
        "from the merge-base, `git ls-files --others`) and never walks the tree, so its cost follows the change, "
        "not the repository. What the changed files had before the change (existing debt) is counted on stderr, "
        "never failed.\n"
    )
    print(text)
    write_section("gates", text)


if __name__ == "__main__":
    main()
