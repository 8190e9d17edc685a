"""The pre-commit hooks (.pre-commit-hooks.yaml), run for real with `pre-commit try-repo` on a temp docs repo."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from factreg.registry.store import Registry
from tests.conftest import pinned_env
from tests.docs_support import record, verify

ROOT = Path(__file__).resolve().parents[1]


def pre_commit() -> str:
    found = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    assert Path(found).exists(), "pre-commit is a test dependency"
    return found


def test_hooks_file_declares_check_and_lint() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    assert hooks["factreg-docs-check"]["entry"] == "factreg docs check"
    assert hooks["factreg-docs-lint"]["entry"] == "factreg docs lint"
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["types"] == ["markdown"]


@pytest.mark.slow
def test_try_repo_runs_docs_check_and_docs_lint(tmp_path: Path) -> None:
    repo = tmp_path / "docs-repo"
    (repo / "skills").mkdir(parents=True)
    (repo / ".factreg").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    reg = Registry(f"sqlite:///{repo / '.factreg' / 'registry.db'}")
    record(reg, "gamebox/a3b/tg32", 28.0)
    skill = repo / "skills" / "SKILL.md"
    skill.write_text(
        "---\nname: gamebox\n---\nDecoding: <!-- fact: gamebox/a3b/tg32 -->28.0 tok/s<!-- /fact -->.\n",
        encoding="utf-8",
    )
    claim = repo / "NOTES.md"
    claim.write_text("The new build decodes at 28 tok/s, 3× faster.\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    env = pinned_env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))  # the hooks judge the fact at the tests' now

    def try_repo(*files: Path) -> subprocess.CompletedProcess[str]:
        # Every hook of the repository (docs check and docs lint) on these files; each call installs factreg
        # from the working tree into a fresh hook environment, so the calls are kept to two.
        return subprocess.run(
            [pre_commit(), "try-repo", str(ROOT), "--files", *map(str, files)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    ok = try_repo(skill)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count("Passed") == 2, ok.stdout
    assert "factreg docs check" in ok.stdout and "factreg docs lint" in ok.stdout

    verify(reg, "gamebox/a3b/tg32", "refuted", 11.9, 7.2, "11.9 ± 7.2 tok/s")
    failed = try_repo(skill, claim)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    check_out, lint_out = failed.stdout.split("factreg docs lint", 1)
    assert "skills/SKILL.md:4:11: gamebox/a3b/tg32: refuted" in check_out
    assert "NOTES.md:1:26: FR111 28 tok/s (28 tok/s)" in lint_out
    assert "3× faster" in lint_out
    assert "SKILL.md" not in lint_out  # the cited number is sourced
    assert failed.stdout.count("Failed") == 2
