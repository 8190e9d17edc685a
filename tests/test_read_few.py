"""Reading only what a command prints: `list --limit N` (`facts.list_first`), `cite` and `docs check`
(`check.load_index` given the cited ids) read and judge a few facts, and print what reading every fact printed.

Each test runs the command both ways on one registry of many facts in every status (fresh, aging, stale by age and
by a newer build of its machine, refuted, conditions_changed, retracted, superseded in chains and a loop, derived
from a superseded source) and requires the same stdout, stderr and exit code. Dates are relative to the tests'
pinned now (conftest.ago)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from factreg.docs import check as chk
from factreg.registry import facts
from factreg.registry.store import Registry
from tests.conftest import ago

N = 120


_BUILT: list[bytes] = []  # the registry, built once for the module's tests


def _build(cli, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    if _BUILT:
        db_path.write_bytes(_BUILT[0])
        return
    for i in range(N):
        age = (0, 40, 200, 1)[i % 4]  # fresh, aging, stale (default thresholds), fresh
        args = ["record", f"m{i % 3}/model-{i:03d}/tg32", "--metric", "tg_rate", "--samples",
                f"{10 + i % 7},{11 + i % 7},{12 + i % 7}", "--measured-at", ago(age), "-c", f"machine=m{i % 3}",
                "-c", f"build=b{i % 5}"]
        if i % 11 == 0:
            args = [*args, "--warn-after", "1d", "--error-after", "500d"]
        r = cli(*args)
        assert r.exit_code == 0, r.stderr
    # A newer build on machine m0 makes its older facts of another build stale.
    assert cli("record", "m0/newest/tg32", "--metric", "tg_rate", "--value", "9", "-c", "machine=m0",
               "-c", "build=b9", "--measured-at", ago(0)).exit_code == 0
    con = sqlite3.connect(db_path)
    ids = [r[0] for r in con.execute("SELECT id FROM fact ORDER BY id")]
    for k, fid in enumerate(ids):
        if k % 9 == 2:
            verdict = "refuted" if k % 2 else "conditions_changed"
            con.execute("INSERT INTO verification (fact_id, fact_version, verified_at, verdict, method_kind, samples, "
                        "observed, diff) VALUES (?, 1, ?, ?, 'manual', '[]', '{}', '{}')", (fid, ago(1), verdict))
        if k % 13 == 4:
            con.execute("INSERT INTO correction (old_fact_id, old_version, cause, created_at) VALUES (?, 1, ?, ?)",
                        (fid, "a cache answered", ago(1)))
    # Chains: a → b → c, a loop d ⇄ e, and a successor that is not in the registry.
    con.execute("UPDATE fact SET superseded_by = ? WHERE id = ?", (ids[11], ids[10]))
    con.execute("UPDATE fact SET superseded_by = ? WHERE id = ?", (ids[12], ids[11]))
    con.execute("UPDATE fact SET superseded_by = ? WHERE id = ?", (ids[21], ids[20]))
    con.execute("UPDATE fact SET superseded_by = ? WHERE id = ?", (ids[20], ids[21]))
    con.execute("UPDATE fact SET superseded_by = 'gone/x/y' WHERE id = ?", (ids[30],))
    # A derived fact whose source was superseded.
    con.execute("UPDATE fact_version SET derived_from = ? WHERE fact_id = ?",
                (f'[{{"id": "{ids[10]}", "version": 1}}]', ids[40]))
    con.commit()
    assert con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0  # every page in the file
    con.close()
    _BUILT.append(db_path.read_bytes())


def _opened(cli, db_path: Path) -> Registry:  # type: ignore[no-untyped-def]
    """The built registry, opened after its file was written."""
    _build(cli, db_path)
    return Registry(f"sqlite:///{db_path}")


def test_the_registry_has_every_status(cli, db_path):
    registry = _opened(cli, db_path)
    assert {"fresh", "aging", "stale", "refuted", "conditions_changed", "retracted",
            "superseded"} <= {str(f["status"]) for f in facts.list_facts(registry)}


LISTS = [
    ["--limit", "20"], ["--limit", "1"], ["--limit", "0"], ["--limit", str(N + 10)], ["--limit", "7", "--sort", "id"],
    ["--limit", "7", "--sort", "-id"], ["--limit", "5", "--status", "stale"], ["--limit", "3", "--status", "refuted"],
    ["--limit", "4", "--status", "superseded,retracted"], ["--limit", "6", "m1/"], ["--limit", "6", "--cond",
    "build=b2"], ["--limit", "5", "--since", "3d"], ["--limit", "8", "--status", "aging", "--since", "60d"],
    ["--limit", "9", "--json"], ["--limit", "9", "--jsonl", "--columns", "id,status,reason"],
    ["--limit", "4", "--status", "shifted"], ["--limit", "3", "--metric", "ttft"],
]


def test_list_limit_prints_what_listing_every_fact_printed(cli, db_path, monkeypatch):
    _build(cli, db_path)
    for args in LISTS:
        fast = cli("list", *args)
        # The whole path: every fact read and judged, then cut (what `list` did before `list_first`).
        monkeypatch.setattr(facts, "list_first", lambda reg, config, limit, pick=None, descending=False, **f: (
            sorted((pick or (lambda x: x))(facts.list_facts(reg, config, **f)), key=lambda x: x["id"],
                   reverse=descending)[:limit]))
        whole = cli("list", *args)
        monkeypatch.undo()
        monkeypatch.setenv("FACTREG_DB", f"sqlite:///{db_path}")
        assert (fast.exit_code, fast.stdout, fast.stderr) == (whole.exit_code, whole.stdout, whole.stderr), args


def test_list_first_reads_only_a_batch(cli, db_path, monkeypatch):
    registry = _opened(cli, db_path)
    asked: list[int] = []
    real = facts.list_facts

    def counting(reg, config=None, **filters):  # type: ignore[no-untyped-def]
        asked.append(len(filters["ids"]) if filters.get("ids") is not None else 10**6)
        return real(reg, config, **filters)

    monkeypatch.setattr("factreg.registry.facts.reading.list_facts", counting)
    got = facts.list_first(registry, None, 20)
    assert [f["id"] for f in got] == sorted(f["id"] for f in real(registry))[:20]
    assert asked == [20]


def test_list_with_a_bad_option_fails_on_an_empty_registry_as_before(cli, db_path):
    _build(cli, db_path)
    r = cli("list", "--limit", "3", "--since", "not-a-date")
    assert r.exit_code == 2 and r.stderr.startswith("Error: ")


def _whole_index(monkeypatch):  # type: ignore[no-untyped-def]
    real = chk.load_index
    monkeypatch.setattr(chk, "load_index", lambda reg, config=None, ids=None: real(reg, config))


@pytest.mark.slow
def test_cite_prints_what_the_whole_index_printed(cli, db_path, monkeypatch):
    _build(cli, db_path)
    con = sqlite3.connect(db_path)
    ids = [r[0] for r in con.execute("SELECT id FROM fact ORDER BY id")]
    con.close()
    # Every status and chain in the plain form; the other forms (the same reading, printed otherwise) on every
    # fourth fact and on the chains, the loop, the derived fact, the last fact and a missing one.
    special = {*ids[:45:4], *ids[10:13], *ids[20:22], ids[30], ids[40], ids[-1], "no/such/fact"}
    for fid in [*ids[:45], ids[-1], "no/such/fact"]:
        for extra in ([], ["--json"], ["--asof", "--format", "{value:.1f}"]) if fid in special else ([],):
            fast = cli("cite", fid, *extra)
            _whole_index(monkeypatch)
            whole = cli("cite", fid, *extra)
            monkeypatch.undo()
            monkeypatch.setenv("FACTREG_DB", f"sqlite:///{db_path}")
            assert (fast.exit_code, fast.stdout, fast.stderr) == (whole.exit_code, whole.stdout, whole.stderr), fid


def test_docs_check_prints_what_the_whole_index_printed(cli, db_path, tmp_path, monkeypatch):
    _build(cli, db_path)
    con = sqlite3.connect(db_path)
    ids = [r[0] for r in con.execute("SELECT id FROM fact ORDER BY id")]
    con.close()
    docs = tmp_path / "docs"
    docs.mkdir()
    for n, chosen in enumerate([ids[:3], ids[9:13], ids[19:23], ids[28:42], [ids[-1], "no/such/fact"], []]):
        (docs / f"d{n}.md").write_text("# Doc\n\n" + "".join(
            f"It runs at <!-- fact: {fid} -->1.0 tok/s<!-- /fact -->.\n" for fid in chosen) + "No numbers.\n")
    for target in [*sorted(docs.iterdir()), docs]:
        for extra in ([], ["--json"]):
            fast = cli("docs", "check", str(target), "--no-cache", *extra)
            _whole_index(monkeypatch)
            whole = cli("docs", "check", str(target), "--no-cache", *extra)
            monkeypatch.undo()
            monkeypatch.setenv("FACTREG_DB", f"sqlite:///{db_path}")
            assert (fast.exit_code, fast.stdout, fast.stderr) == (whole.exit_code, whole.stdout, whole.stderr), target


@pytest.mark.slow
def test_load_index_given_ids_holds_them_and_their_successors_as_the_whole_index(cli, db_path):
    registry = _opened(cli, db_path)
    whole = chk.load_index(registry)
    ids = sorted(whole)
    for chosen in ([ids[10]], [ids[20]], [ids[30]], ids[:50], ["no/such/fact", ids[5]]):
        few = chk.load_index(registry, None, chosen)
        assert set(chosen) & set(whole) <= set(few)
        assert len(few) < len(whole)
        assert all(few[k] == whole[k] for k in few)
    assert set(chk.load_index(registry, None, [ids[10]])) == {ids[10], ids[11], ids[12]}
