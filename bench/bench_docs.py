"""Docs and status benchmarks, each against a baseline measured in the same run:

- `factreg docs check --lint` (one pass), and `factreg docs check` + `factreg docs lint`, over 10,000 generated Markdown files (≥ 50 MB, nested folders,
  English and Korean prose, ~10% citing facts) vs. `grep -rEc` with a comparable number pattern over the same tree;
- `factreg status` over 100,000 facts vs. the same statuses computed by one `sqlite3` query
  (bench/status_equivalent.sql);
- `factreg status` over the same registry with 1,000 decisions citing its facts vs. the same statuses and the
  decisions needing review computed by `sqlite3` (bench/status_decisions_equivalent.sql).

Writes bench/results/docs.md (assembled into docs/performance.md by run_all.py).
Run: `python bench/bench_docs.py [--quick] [--docs-only]`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, TABLE_HEAD, factreg_cmd, machine, row, write_section  # noqa: E402

# A number followed by a performance unit: what an unsourced-claim search with grep would look for.
GREP_PATTERN = (
    r"[0-9]+(\.[0-9]+)?[ ]?(ms|s|sec|seconds|tok/s|t/s|tokens/s|×|x faster|초|밀리초|배)"
    r"([^A-Za-z0-9]|$)"
)

PLAIN = [
    "The runbook describes how the {m} server is started, which model file it loads and where its logs go.",
    "Restart the service with systemctl after changing the unit file; check the journal for errors first.",
    "We keep one llama-server per GPU and route requests by model name through the small proxy in front.",
    "On {date} the team moved the voice front end to the 35B-A3B model after a round of measurements.",
    "The context window is 32768 tokens; prompts longer than that are truncated from the start.",
    "이 서버는 {m}에서 실행되며 모델 파일은 /srv/models 아래에 있습니다.",
    "Use `curl http://127.0.0.1:8080/v1/models` to see which model is actually served (RTX 2080, 27B, q4_k_m).",
    "Meeting notes from {date}: 3 people attended, 2 action items, next review at 14:30.",
]
CLAIMS = [
    "Decoding on {m} runs at {v:.1f} tok/s with the default batch size, and the first token comes after {t:.2f} s.",
    "TTFT dropped from {t:.2f} s to {t2:.2f} s after enabling the prompt cache, about {r:.0f}× faster.",
    "첫 토큰까지 {t:.1f}초 정도 걸리고, 디코딩은 초당 {v:.0f} 토큰입니다.",
]


EDITED = 20  # files changed between two runs with the document cache
CACHE_NOTE = (
    "- Every row but the two 'with the document cache' runs with `--no-cache` (every file read and linted). The "
    "cache rows run after one run filled the cache (`FACTREG_CACHE_DIR` in the benchmark's folder): with nothing "
    f"changed since, and with {EDITED} other files appended to just before each run; their output is checked to be "
    "the same as a run without the cache.\n"
)


def render_doc(rnd: random.Random, i: int, cited: list[tuple[str, str]], claim_share: float) -> str:
    parts = [f"---\nname: doc-{i}\ndescription: Notes about machine m{i % 40}\n---\n", f"# Document {i}\n\n"]
    target = rnd.randint(3600, 6800)
    size = sum(len(p) for p in parts)
    while size < target:
        line = rnd.choice(CLAIMS if rnd.random() < claim_share else PLAIN).format(
            m=f"m{i % 40}",
            date=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
            v=rnd.uniform(5, 60),
            t=rnd.uniform(0.1, 4),
            t2=rnd.uniform(0.05, 0.5),
            r=rnd.uniform(2, 30),
        )
        if rnd.random() < 0.05:
            line = "```bash\nllama-bench -m model.gguf -p 512 -n 128 -r 5\n```"
        parts.append(line + "\n\n")
        size += len(line) + 2
    if cited:  # ~10% of the files cite facts; most markers are current, a few are outdated
        for fid, text in cited:
            shown = text if rnd.random() > 0.1 else "28 tok/s"
            parts.append(f"Measured: <!-- fact: {fid} -->{shown}<!-- /fact --> on this machine.\n\n")
    return "".join(parts)


def make_tree(root: Path, n_files: int, registry_url: str, rnd: random.Random, claim_share: float) -> int:
    """Write the document tree and a registry of the facts it cites; return its size in bytes."""
    from factreg.docs import markers
    from factreg.registry import facts
    from factreg.registry.store import Registry

    reg = Registry(registry_url)
    news = [
        facts.NewFact(
            id=f"m{k}/model/tg32",
            metric="tg_rate",
            samples=[rnd.uniform(10, 30) for _ in range(5)],
            identity={"machine": f"m{k}", "build_commit": "b6012"},
        )
        for k in range(40)
    ]
    facts.record_many(reg, news)
    current = {f["id"]: markers.render(f) for f in facts.list_facts(reg)}
    ids = sorted(current)
    total = 0
    for i in range(n_files):
        folder = root.joinpath(*[f"d{(i >> s) % 8}" for s in (0, 3, 6)][: 1 + i % 3])
        folder.mkdir(parents=True, exist_ok=True)
        cited = [(fid, current[fid]) for fid in rnd.sample(ids, 2)] if i % 10 == 0 else []
        if i % 25 == 0:  # agent skill documents live in a folder of their own
            folder = folder / f"skill-{i:05d}"
            folder.mkdir()
        name = "SKILL.md" if i % 25 == 0 else f"doc{i:05d}.md"
        data = render_doc(rnd, i, cited, claim_share).encode("utf-8")
        (folder / name).write_bytes(data)
        total += len(data)
    reg.close()
    return total


def timed(cmd: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0, 1)) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, env=env)
    elapsed = time.perf_counter() - t0
    if r.returncode not in ok:
        raise SystemExit(f"{cmd[:3]} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-800:]}")
    return elapsed, r.stdout


def make_registry(path: Path, n: int, rnd: random.Random) -> None:
    """100,000 facts through `factreg import` (JSONL), plus verifications inserted in bulk."""
    src = path.with_suffix(".jsonl")
    machines = [f"host{k:02d}" for k in range(50)]
    with src.open("w", encoding="utf-8") as fh:
        for i in range(n):
            m = machines[i % len(machines)]
            day = 1 + (i * 7919) % 300  # spread over ~10 months, so some are fresh, aging and stale
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1767225600 + day * 86400 + i))
            fh.write(
                json.dumps(
                    {
                        "id": f"{m}/model-{i // len(machines):05d}/tg32",
                        "metric": "tg_rate",
                        "samples": [round(rnd.uniform(10, 30), 3) for _ in range(5)],
                        "cond": {
                            "machine": m,
                            "model": f"model-{i // len(machines)}",
                            "quant": "q4_k_m",
                            "build_commit": f"b{6000 + (day // 60)}",
                        },
                        "measured_at": stamp,
                    }
                )
                + "\n"
            )
    env = {**os.environ, "FACTREG_DB": str(path)}
    subprocess.run([*factreg_cmd(), "import", str(src)], check=True, env=env, capture_output=True)
    con = sqlite3.connect(path)
    ids = [r[0] for r in con.execute("select id from fact")]
    verdicts = ["confirmed"] * 6 + ["refuted", "conditions_changed", "unreachable"]
    rows = [
        (fid, 1, "2026-11-20T00:00:00Z", rnd.choice(verdicts), "llama-bench", "[]", "{}", "{}")
        for fid in rnd.sample(ids, n // 20)
    ]
    with con:
        con.executemany(
            "insert into verification (fact_id, fact_version, verified_at, verdict, method_kind, "
            "samples, observed, diff) values (?,?,?,?,?,?,?,?)",
            rows,
        )
    con.close()


def add_decisions(path: Path, n: int, rnd: random.Random) -> int:
    """`n` decisions citing 1–3 facts each, through `factreg import`; then what makes some need review: new
    versions of a tenth of the cited facts on a newer build (half of them outside the 10% tolerance) and 50 cited
    facts superseded by uncited ones. Returns how many facts are cited."""
    from factreg.registry import facts
    from factreg.registry.store import Registry

    con = sqlite3.connect(path)
    current = {r[0]: r for r in con.execute(
        "select v.fact_id, v.version, v.value, v.spread, v.unit, v.metric from fact f join fact_version v "
        "on v.fact_id = f.id and v.version = f.current_version")}
    identity: dict[str, dict[str, str]] = {}
    ids = sorted(current)
    lines, cited = [], set()
    for number in range(1, n + 1):
        picks = rnd.sample(ids, rnd.randint(1, 3))
        cited.update(picks)
        lines.append({
            "kind": "decision", "number": number, "title": f"Decision {number}", "slug": f"decision-{number}",
            "status": rnd.choice(["accepted", "accepted", "proposed"]), "date": "2026-11-01", "decided_by": "[]",
            "created_at": "2026-11-01T00:00:00Z",
            "cites": [{"fact_id": fid, "fact_version": current[fid][1], "value": current[fid][2],
                       "spread": current[fid][3], "unit": current[fid][4]} for fid in picks],
        })
    changed = rnd.sample(sorted(cited), len(cited) // 10)
    for fid, key, value in con.execute("select fact_id, key, value from condition where kind = 'identity'"):
        if fid in changed:
            identity.setdefault(fid, {})[key] = value
    con.close()
    for k, fid in enumerate(changed):  # re-measured on a newer build, one second apart
        factor = 1.3 if k % 2 else 1.02
        lines.append({"id": fid, "metric": current[fid][5], "cond": {**identity[fid], "build_commit": "b6100"},
                      "samples": [round(current[fid][2] * factor * rnd.uniform(0.99, 1.01), 3) for _ in range(5)],
                      "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1795564800 + k))})
    src = path.with_name("decisions.jsonl")
    src.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    env = {**os.environ, "FACTREG_DB": str(path)}
    subprocess.run([*factreg_cmd(), "import", str(src)], check=True, env=env, capture_output=True)
    reg = Registry(f"sqlite:///{path}")
    spare = sorted(set(ids) - cited)
    for old, new in zip(rnd.sample(sorted(set(cited) - set(changed)), 50), rnd.sample(spare, 50), strict=True):
        facts.supersede(reg, old, new, "re-measured")
    reg.close()
    return len(cited)


def status_against_sql(fr, env, db, sql_file, reps):  # type: ignore[no-untyped-def]
    """`factreg status` and `sqlite3 DB < bench/SQL_FILE`, interleaved `reps` times: both timings, last outputs."""
    sql = (ROOT / "bench" / sql_file).read_text(encoding="utf-8")
    status_t, sql_t = [], []
    for _ in range(reps):
        s, status_out = timed([*fr, "status"], env)
        t0 = time.perf_counter()
        sql_out = run_sql(db, sql)
        sql_t.append(time.perf_counter() - t0)
        status_t.append(s)
    return status_t, sql_t, status_out, sql_out


def run_sql(db: Path, sql: str) -> str:
    """The output of `sqlite3 DB < SQL` (`|`-separated rows), through Python's sqlite3 when there is no CLI."""
    sqlite = shutil.which("sqlite3")
    if sqlite:
        return subprocess.run([sqlite, str(db)], input=sql.encode(), stdout=subprocess.PIPE, check=True).stdout.decode()
    con = sqlite3.connect(db)
    out = []
    for statement in sql.split(";\n"):
        if statement.strip():
            out += ["|".join(map(str, r)) for r in con.execute(statement)]
    con.close()
    return "\n".join(out)


def status_counts(text: str) -> tuple[Counter, list[int]]:
    """Facts per status and the decisions needing review, from `factreg status`'s text output."""
    counts: Counter = Counter()
    review = []
    for line in text.splitlines():
        if line.startswith("needs review"):
            review.append(int(line.split("decision ", 1)[1].split(":", 1)[0]))
        elif line.strip():
            counts[line.split()[0]] += 1
    return counts, review


def sql_counts(text: str) -> tuple[Counter, list[int]]:
    """The same, from the baseline query's `|`-separated output."""
    counts: Counter = Counter()
    review = []
    for line in text.splitlines():
        parts = line.split("|")
        if parts[0] == "needs review":
            review.append(int(parts[1]))
        elif line:
            counts[parts[1]] += 1
    return counts, review


# The floor under any Python implementation of `docs check` + `docs lint`: two processes that only walk the tree
# and read and decode every Markdown file, doing nothing else.
READ_ONLY = r"""
import os, sys
n = 0
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".md"):
            with open(os.path.join(folder, name), "rb") as fh:
                n += len(fh.read().decode("utf-8"))
print(n)
"""


def lint_throughput(tree: Path, reps: int) -> str:
    """In-process lint throughput over a tree read beforehand: `lint_text` file by file, one process; and the
    shared pass (walk, read, lint) with its default processes. Wall time, medians of `reps` interleaved runs."""
    from factreg.docs import walk
    from factreg.docs.lint import lint_text
    from factreg.docs.scan import scan

    texts = [(str(p), t) for p, t in walk.documents([tree]) if isinstance(t, str)]
    size = sum(len(t.encode("utf-8")) for _, t in texts)
    lint_w, scan_w = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        n = sum(len(lint_text(t, p)) for p, t in texts)
        lint_w.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        m = len(scan([tree], check=False, lint=True).findings)
        scan_w.append(time.perf_counter() - t0)
    if n != m:
        raise SystemExit(f"lint_text found {n}, the shared pass {m}")
    med = statistics.median
    return (
        f"- In-process lint throughput, runbook-like tree ({size / 1e6:.1f} MB, {n:,} findings), wall time, medians of "
        f"{reps}: `lint_text` file by file in one process (files read beforehand) {med(lint_w):.2f} s = "
        f"**{size / 1e6 / med(lint_w):.1f} MB/s** (min {min(lint_w):.2f}, max {max(lint_w):.2f}); the shared pass "
        f"`scan(lint=True)` (walk, read and lint, {default_jobs()} processes) {med(scan_w):.2f} s = "
        f"**{size / 1e6 / med(scan_w):.1f} MB/s** (min {min(scan_w):.2f}, max {max(scan_w):.2f}). Target: "
        "≥ 100 MB/s.\n"
    )


def json_layout(label: str, data: dict, reps: int) -> str:
    """What writing `docs check --lint --json`'s output costs in one process: `json.dumps(indent=2)` (the layout
    before factreg.jsontext) against `jsontext.dumps` (flat objects on one line), and `secrets.dumps` with it (the
    check that no credential is in the text, as `--json` runs it). Medians of `reps`, interleaved."""
    from factreg import jsontext, secrets

    old_t, new_t, full_t = [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        old = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
        old_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        new = jsontext.dumps(data)
        new_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        secrets.dumps(data, encode=jsontext.dumps, ensure_ascii=False, allow_nan=False)
        full_t.append(time.perf_counter() - t0)
    if json.loads(new) != json.loads(old):
        raise SystemExit(f"{label}: jsontext writes other data than json.dumps")
    med = statistics.median
    return (
        f"- JSON output, {label} tree ({len(old.encode()) / 1e6:.1f} MB as `indent=2`, {len(new.encode()) / 1e6:.1f} MB "
        f"as written now): `json.dumps(indent=2)` {med(old_t):.2f} s, `jsontext.dumps` {med(new_t):.2f} s "
        f"(**{med(old_t) / med(new_t):.1f}× faster**), with the credential check {med(full_t):.2f} s; medians of "
        f"{reps}, same run.\n"
    )


def default_jobs() -> int:
    from factreg.docs.scan import default_jobs as jobs

    return jobs()


def main() -> None:
    quick = "--quick" in sys.argv
    docs_only = "--docs-only" in sys.argv  # the document benchmarks only (no status over 100,000 facts)
    jobs = default_jobs()
    throughput_note = ""
    n_files, n_facts, reps = (2_000, 20_000, 3) if quick else (10_000, 100_000, 5)
    n_decisions = n_facts // 100
    load_before = os.getloadavg()[0]
    rnd = random.Random(26)
    work = Path(tempfile.mkdtemp(prefix="factreg-bench-docs-"))
    fr = factreg_cmd()
    try:
        doc_rows, doc_notes, json_notes = [], [], []
        # Two trees: a stress test where 27% of prose lines hold performance numbers, and a runbook-like one (3%).
        for label, share in (("dense", 0.27), ("runbook-like", 0.03)):
            tree = work / f"tree-{label}"
            docs_db = work / f"docs-{label}.db"
            size = make_tree(tree, n_files, f"sqlite:///{docs_db}", rnd, share)
            env = {**os.environ, "FACTREG_DB": str(docs_db), "FACTREG_CACHE_DIR": str(work / f"cache-{label}")}
            grep = ["grep", "-rEc", "--include=*.md", GREP_PATTERN, str(tree)]
            reader = work / "read_only.py"
            reader.write_text(READ_ONLY, encoding="utf-8")
            check_t, lint_t, both_t, one_t, one1_t, grep_t, floor_t = [], [], [], [], [], [], []
            warm_t, edited_t, cov_t, cov_warm_t = [], [], [], []
            one_pass_cmd = [*fr, "docs", "check", "--lint", "--json", str(tree)]
            time.sleep(2.5)  # the document cache takes a file as unchanged only once it is 2 s old when read
            timed(one_pass_cmd, env)  # fills the cache for the warm rows
            coverage_cmd = [*fr, "docs", "coverage", "--json", str(tree)]
            edits = sorted(tree.rglob("*.md"))
            rnd.shuffle(edits)
            for k in range(reps):  # interleaved, so machine noise hits both sides alike
                c, check_out = timed([*fr, "docs", "check", "--json", "--no-cache", str(tree)], env)
                lt, lint_out = timed([*fr, "docs", "lint", "--json", "--no-cache", str(tree)], env)
                o, one_out = timed([*fr, "docs", "check", "--lint", "--json", "--no-cache", str(tree)], env)
                o1, one1_out = timed(
                    [*fr, "docs", "check", "--lint", "--json", "--jobs", "1", "--no-cache", str(tree)], env
                )
                w, warm_out = timed(one_pass_cmd, env)
                cv, cov_out = timed([*coverage_cmd, "--no-cache"], env, ok=(0,))
                cw, cov_warm_out = timed(coverage_cmd, env, ok=(0,))
                for path in edits[k * EDITED : (k + 1) * EDITED]:  # a change of 20 files since the last run
                    with open(path, "a", encoding="utf-8") as fh:
                        fh.write(f"\nAfter the change, decoding runs at {k + 20}.5 tok/s here.\n")
                e, edited_out = timed(one_pass_cmd, env)
                g, _ = timed(grep, ok=(0, 1))
                f1, _ = timed([sys.executable, str(reader), str(tree)])
                f2, _ = timed([sys.executable, str(reader), str(tree)])
                check_t.append(c)
                lint_t.append(lt)
                both_t.append(c + lt)
                one_t.append(o)
                one1_t.append(o1)
                warm_t.append(w)
                edited_t.append(e)
                cov_t.append(cv)
                cov_warm_t.append(cw)
                grep_t.append(g)
                floor_t.append(f1 + f2)
                if warm_out != one_out or cov_warm_out != cov_out:
                    raise SystemExit(f"{label}: a run with the document cache differs from one without it")
            _, cold_edited = timed([*fr, "docs", "check", "--lint", "--json", "--no-cache", str(tree)], env)
            if edited_out != cold_edited:
                raise SystemExit(f"{label}: after an edit, the document cache gives another result")
            problems = json.loads(check_out)["problems"]
            claims = json.loads(lint_out)
            cites = json.loads(check_out)["markers"]
            one_pass = json.loads(one_out)
            if one_out != one1_out or one_pass["claims"] != claims or one_pass["problems"] != problems:
                raise SystemExit(f"{label}: docs check --lint does not give what docs check and docs lint give")
            target = 3 if label == "runbook-like" else 6
            doc_rows += [
                row(
                    f"{label}: docs check --lint (one pass, {jobs} processes), {n_files:,} files "
                    f"({size / 1e6:.1f} MB) vs grep -rEc",
                    one_t,
                    grep_t,
                    target,
                ),
                row(f"{label}: docs check --lint --jobs 1 (one pass, one process) vs grep -rEc", one1_t, grep_t, None),
                row(f"{label}: docs check --lint with the document cache, nothing changed since the last run, "
                    "vs grep -rEc", warm_t, grep_t, None),
                row(f"{label}: docs check --lint with the document cache, {EDITED} files changed since the last "
                    "run, vs grep -rEc", edited_t, grep_t, None),
                row(f"{label}: docs coverage (one pass, {jobs} processes, no cache) vs grep -rEc", cov_t, grep_t, None),
                row(f"{label}: docs coverage with the document cache vs grep -rEc", cov_warm_t, grep_t, None),
                row(f"{label}: docs check + docs lint (two processes, one after the other) vs grep -rEc", both_t,
                    grep_t, None),
                row(f"{label}: docs check alone vs grep -rEc", check_t, grep_t, None),
                row(f"{label}: docs lint alone vs grep -rEc", lint_t, grep_t, None),
                row(f"{label}: floor — two Python processes that only walk and read the tree, vs grep -rEc",
                    floor_t, grep_t, None),
            ]
            if label == "runbook-like":
                throughput_note = lint_throughput(tree, reps)
            json_notes.append(json_layout(label, one_pass, reps))
            doc_notes.append(
                f"- {label} tree: {n_files:,} generated Markdown files, {size / 1e6:.1f} MB, {share:.0%} of prose lines "
                f"hold performance numbers; every 10th file cites 2 of 40 facts ({cites:,} citations; `docs check` "
                f"found {len(problems)} problems — outdated marker texts planted on purpose; `docs lint` found "
                f"{len(claims):,} unsourced claims).\n"
            )
            shutil.rmtree(tree, ignore_errors=True)

        if docs_only:
            text = (
                "## Documents: one pass (`docs check --lint`)\n\n"
                f"Machine: {machine()}. Whole processes, run {reps}× each, interleaved; times in seconds; medians. "
                f"Load average (1 min) at the start and end of the run: {load_before:.1f} and "
                f"{os.getloadavg()[0]:.1f} (other work on the machine slows both sides).\n\n"
                + "".join(doc_notes)
                + CACHE_NOTE
                + throughput_note
                + "".join(json_notes)
                + "\n"
                + TABLE_HEAD.format(u="s")
                + "\n"
                + "\n".join(doc_rows)
                + "\n"
            )
            print(text)
            write_section("docs_only", text)
            return
        status_db = work / "status.db"
        make_registry(status_db, n_facts, rnd)
        senv = {**os.environ, "FACTREG_DB": str(status_db)}
        status_t, sql_t, status_out, sql_out = status_against_sql(fr, senv, status_db, "status_equivalent.sql", reps)
        ours, _ = status_counts(status_out.decode())
        theirs, _ = sql_counts(sql_out)
        agree = "the same" if ours == theirs else f"**different** (factreg {dict(ours)}, SQL {dict(theirs)})"

        # The same registry with decisions citing its facts, some of which changed since.
        n_cited = add_decisions(status_db, n_decisions, rnd)
        dstatus_t, dsql_t, dstatus_out, dsql_out = status_against_sql(
            fr, senv, status_db, "status_decisions_equivalent.sql", reps)
        ours, our_review = status_counts(dstatus_out.decode())
        theirs, their_review = sql_counts(dsql_out)
        dagree = (f"the same; {len(our_review):,} of the {n_decisions:,} decisions need review on both sides"
                  if (ours, our_review) == (theirs, their_review) else
                  f"**different** (factreg {dict(ours)}, {len(our_review)} to review; SQL {dict(theirs)}, "
                  f"{len(their_review)} to review)")

        rows = [*doc_rows, row(f"status over {n_facts:,} facts vs sqlite3 query", status_t, sql_t, 3),
                row(f"status over {n_facts:,} facts with {n_decisions:,} decisions vs sqlite3 queries", dstatus_t,
                    dsql_t, 3)]
        text = (
            "## Documents: docs check, docs lint, status\n\n"
            f"Machine: {machine()}. Whole processes, run {reps}× each, interleaved; times in seconds; medians. "
            f"Load average (1 min) at the start and end of the run: {load_before:.1f} and {os.getloadavg()[0]:.1f} "
            "(other work on the machine slows both sides).\n\n"
            "- Trees: folders up to 3 deep, YAML front matter, English and Korean prose, fenced code.\n"
            + "".join(doc_notes)
            + f"- Baseline: `grep -rEc --include=*.md '{GREP_PATTERN}' TREE` (a number followed by a performance "
            "unit, counted per file; LC_ALL as in the environment: "
            f"`{os.environ.get('LC_ALL') or os.environ.get('LANG') or 'unset'}`). factreg does more: it parses "
            "markers, renders each cited fact from the registry, skips front matter and code, and tells claims "
            "from dates, counts and model names.\n"
            "- Floor: the same two passes in Python doing nothing but `os.walk` and reading and decoding every file "
            "(no factreg, no parsing). It bounds what any Python `docs check` + `docs lint` can reach against "
            "grep.\n"
            "- `docs check --lint` reads each file once, parses its markers and lints it; a large tree is split "
            f"into chunks run on {jobs} processes (the cores available; `--jobs 1`: one process). Its output is "
            "checked to be the same as the two separate commands' and as with `--jobs 1`.\n"
            + CACHE_NOTE
            + throughput_note
            + f"- status: `factreg status` (every fact with status and reason, text output) over {n_facts:,} facts "
            f"imported from JSONL plus {n_facts // 20:,} verifications, vs. `sqlite3 DB < "
            "bench/status_equivalent.sql`, one query computing the same statuses (last verification, condition "
            f"change on the same machine, age against 30d/90d). Status counts of both sides: {agree}.\n"
            f"- status with decisions: the same registry after importing {n_decisions:,} decisions citing 1–3 facts "
            f"each ({n_cited:,} facts cited), new versions of a tenth of the cited facts on a newer build (half of "
            "them outside the 10% tolerance) and 50 cited facts superseded by uncited ones; `factreg status` (which also lists the "
            "decisions needing review) vs. `sqlite3 DB < bench/status_decisions_equivalent.sql` (the same statuses "
            "kept in a temporary table, then the open decisions whose cited facts changed). Status counts and "
            f"decisions needing review: {dagree}.\n\n"
            + TABLE_HEAD.format(u="s")
            + "\n"
            + "\n".join(rows)
            + "\n"
        )
        print(text)
        write_section("docs", text)
        med = statistics.median
        print(
            f"check {med(check_t):.3f}s lint {med(lint_t):.3f}s grep {med(grep_t):.3f}s "
            f"status {med(status_t):.3f}s sqlite {med(sql_t):.3f}s "
            f"status+decisions {med(dstatus_t):.3f}s sqlite {med(dsql_t):.3f}s",
            file=sys.stderr,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
