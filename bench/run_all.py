"""Run every benchmark and assemble docs/performance.md from their sections (bench/results/*.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, ROOT, machine  # noqa: E402

ORDER = ["core", "completion", "verify", "probe", "load", "peers", "docs", "docs_only", "gates", "lint", "lint_real_tuned",
         "concurrency"]


def main() -> None:
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    for script in sorted(Path(__file__).parent.glob("bench_*.py")):
        name = script.stem.removeprefix("bench_")
        if only and name not in only:
            continue
        print(f"== {script.name}", file=sys.stderr)
        subprocess.run([sys.executable, str(script), *[a for a in sys.argv[1:] if a.startswith("-")]], check=True)
    assemble()


def assemble() -> Path:
    sections = sorted(RESULTS.glob("*.md"), key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else 99, p.stem))
    body = "\n".join(p.read_text(encoding="utf-8").rstrip() + "\n" for p in sections)
    text = ("# Performance\n\nEvery figure is a ratio against a baseline measured in the same run, on a shared and "
            "noisy machine: medians and ratios, with min and max.\n\n"
            f"Last assembled on: {machine()}.\n\n" + body)
    out = ROOT / "docs" / "performance.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
