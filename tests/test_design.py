"""docs/design.md matches the code: the modules it names exist, every module is named, the import levels hold,
and no duplicated code is left in the package except the pairs it lists as deliberate."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "factreg"
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")

# Import levels, bottom up (docs/design.md, "Module map"): a module imports only from its level or below.
LEVELS = {"errors": 0, "fmt": 0, "clock": 0, "jsontext": 0, "terminal": 0, "verdicts": 0, "stats": 0, "config": 1, "secrets": 1, "atomic": 1, "textfile": 1, "plugins": 1,
          "registry": 2, "docs": 3, "measure": 3, "publish": 4, "demo": 5, "agents": 5, "notify": 5, "cli": 6, "templates": 0,
          "casestudy": 0, "__init__": 0, "__main__": 7, "complete": 7}


def modules() -> list[str]:
    """Every module of the package as a path below factreg/ (`registry/facts.py`), packages' __init__ left out."""
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                  if p.name not in ("__init__.py", "__main__.py"))


def named_in_design() -> set[str]:
    """Module paths the design page names: `registry/facts.py` in full, or `facts.py` (or `corrections/note.py`) in a
    package's list."""
    names: set[str] = set()
    section = None
    for line in DESIGN.splitlines():
        heading = re.match(r"^`(\w+)/`", line)
        if heading:
            section = heading.group(1)
        if line.startswith("## "):
            section = None
        for name in re.findall(r"`((?:\w+/)*\w+\.py)`", line):
            top = name.split("/")[0]
            if section is None or ("/" in name and (top in ("tests", "bench") or (PACKAGE / top).is_dir())):
                names.add(name)
            else:
                names.add(f"{section}/{name}")  # `facts.py`, or `corrections/workflow.py` in a package's list
    return names


def test_every_module_the_design_page_names_exists() -> None:
    missing = sorted(n for n in named_in_design() if n.endswith(".py") and not n.startswith(("tests/", "bench/"))
                     and not (PACKAGE / n).exists())
    assert missing == [], f"docs/design.md names modules that do not exist: {missing}"


def test_every_module_is_on_the_design_page() -> None:
    named = named_in_design()
    unnamed = [m for m in modules() if m not in named]
    assert unnamed == [], f"add these modules to docs/design.md's module map: {unnamed}"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported factreg module) for every import in `path`, function-level ones included."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    package = parts[:-1] if path.name != "__init__.py" else parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(x for x in (base, node.module or "") if x)
            for alias in node.names:
                full = f"{module}.{alias.name}"
                found.append((node.lineno, full if _is_module(full) else module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, m) for line, m in found if m == "factreg" or m.startswith("factreg.")]


def _is_module(dotted: str) -> bool:
    path = ROOT / dotted.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _level(dotted: str) -> int:
    parts = dotted.split(".")
    return LEVELS[parts[1]] if len(parts) > 1 else 0


def test_imports_never_point_up_a_level_and_nothing_imports_the_demo() -> None:
    upward = []
    for path in PACKAGE.rglob("*.py"):
        me = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for line, target in _imports(path):
            if _level(target) > _level(me):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
            if target.startswith("factreg.demo") and not me.startswith(("factreg.demo", "factreg.cli")):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports the demo kit ({target})")
    assert upward == []


def test_no_import_cycles_between_modules() -> None:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        me = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        graph[me] = {t for _, t in _imports(path) if t != me and _is_module(t) and not (ROOT / t.replace(".", "/")).is_dir()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" → ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == [], cycles


def deliberate_pairs() -> set[frozenset[str]]:
    section = DESIGN.split("## Deliberate duplicates", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"^- `?([\w/]+\.py):\d+`? ~ `?([\w/]+\.py):\d+`?", section, flags=re.M)
    return {frozenset(p) for p in pairs}


def similar_pairs(cwd: Path, target: str) -> set[frozenset[str]]:
    """Pairs of files (paths below the package) that pylint's similarity checker finds, 6 lines or more."""
    run = subprocess.run([sys.executable, "-m", "pylint", "--disable=all", "--enable=duplicate-code",
                          "--min-similarity-lines=6", "--ignore-imports=yes", "--ignore-docstrings=yes",
                          "--ignore-comments=yes", "--score=no", target], cwd=cwd, capture_output=True, text=True)
    assert run.returncode in (0, 8), run.stdout + run.stderr  # 8: refactoring messages (the duplicates) only
    found = set()
    for block in run.stdout.split("Similar lines in ")[1:]:
        files = re.findall(r"==([\w.]+):\[", block)
        found.add(frozenset("/".join(f.split(".")[1:]) + ".py" for f in files))
    return found


@pytest.mark.slow
def test_no_duplicated_code_but_the_deliberate_pairs() -> None:
    """Every pair pylint finds in factreg/ must be listed in docs/design.md as deliberate."""
    unexpected = [sorted(p) for p in similar_pairs(ROOT, "factreg") if p not in deliberate_pairs()]
    assert unexpected == [], f"duplicated code (list it in docs/design.md only if it must stay): {unexpected}"


def test_the_duplicate_check_can_fail(tmp_path: Path) -> None:
    """The same check finds a pair planted in a package, so a silent pass above means no duplicates."""
    body = "\n".join(f"    total += {i} * value" for i in range(8))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for name in ("a", "b"):
        (tmp_path / "pkg" / f"{name}.py").write_text(f"def f_{name}(value):\n    total = 0\n{body}\n    return total\n")
    assert similar_pairs(tmp_path, "pkg") == {frozenset({"a.py", "b.py"})}
