"""The lint's learned second opinion (bench/claimmodel.py) and its training script (bench/train_claims.py).

The model is an experiment the lint does not use (it was not adopted: docs/performance.md, "A learned second
opinion"), kept in bench/ beside its training script. These tests show that without a model the lint is the rules
alone; that with one, a veto or an addition is made per sentence, says `by == "model"`, and reaches only sentences
holding a number with a unit; that the training script's scoring is what `claimmodel.lint_text(text, M)` does; that
training is deterministic; and that the script never reads the held-out batches unless asked (fresh3) or at all (fresh4).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

from factreg.docs.lint import lint_text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
try:
    import claimmodel  # bench/claimmodel.py
finally:
    sys.path.remove(str(ROOT / "bench"))


@pytest.fixture(scope="module")
def tc() -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import train_claims
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return train_claims


@pytest.fixture(scope="module")
def trained(tc: ModuleType) -> tuple[list, claimmodel.Model, list[dict]]:
    rows = tc.load()
    featured = tc.featurise(rows)
    design = next(d for d in tc.DESIGNS if d.name == tc.CHOSEN)
    model = tc.train([e for r in featured if r.batch in tc.SHIP for e in r.examples], design)
    return featured, model, rows


def model(weights: dict[str, float], bias: float = 0.0, veto: float = 0.5, add: float = 0.5) -> claimmodel.Model:
    return claimmodel.Model(weights, bias, veto, add, "hand-made")


def test_without_a_model_the_lint_is_the_rules_alone() -> None:
    found = lint_text("Generation ran at 28 tok/s.\n")
    assert [(f.text, f.kind, f.by) for f in found] == [("28 tok/s", "claim", "rules")]


def test_a_veto_makes_the_sentence_s_claims_vetoed_findings_by_the_model() -> None:
    text = "Generation ran at 28 tok/s. The build took 40 s.\n"
    m = model({"w:ran": -10.0})  # the first sentence below the veto threshold, the second at 0.5 (kept)
    assert [(f.text, f.by) for f in claimmodel.lint_text(text, m)] == [("40 s", "rules")]
    every = [(f.text, f.kind, f.by) for f in claimmodel.lint_text(text, m, targets=True)]
    assert every == [("28 tok/s", "vetoed", "model"), ("40 s", "claim", "rules")]


def test_an_addition_makes_the_sentence_s_first_number_a_claim_by_the_model() -> None:
    text = "Set the timeout to 30 s.\n\nA 5 second video.\n"
    assert lint_text(text) == []  # a setting (target) and a media length (dismissed)
    m = model({"w:timeout": 10.0, "w:video": 10.0}, bias=-5.0)
    assert [(f.text, f.kind, f.by) for f in claimmodel.lint_text(text, m)] == [
        ("30 s", "claim", "model"),
        ("5 second", "claim", "model"),
    ]


@dataclass(frozen=True)
class Counting(claimmodel.Model):
    seen: list[list[str]] = field(default_factory=list)

    def probability(self, feats: list[str]) -> float:
        self.seen.append(feats)
        return super().probability(feats)


def test_only_sentences_with_a_number_and_a_unit_reach_the_model() -> None:
    m = Counting({}, 0.0, 0.5, 0.5)
    claimmodel.lint_text("# Notes\n\nNothing measured here.\n\nVersion 3 of the tool, port 8080.\n", m)
    assert m.seen == []
    claimmodel.lint_text(
        "No numbers. Version 3 here. It took 12 s to load. The end.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", m
    )
    assert len(m.seen) == 1 and "w:load" in m.seen[0] and "w:version" not in m.seen[0]


def test_the_training_script_scores_what_the_lint_does(trained, tc: ModuleType) -> None:
    featured, m, rows = trained
    differ = []
    for row, r in zip(featured, rows, strict=True):
        text = r["text"] + "\n"
        rules = any(f.kind == "claim" for f in lint_text(text))
        with_model = any(f.kind == "claim" for f in claimmodel.lint_text(text, m))
        if (tc.predict(row, None), tc.predict(row, m)) != (rules, with_model):
            differ.append(r["id"])
    assert differ == []


def test_the_trained_model_vetoes_where_expected(trained) -> None:
    """Trained on the shipped batches, the model vetoes some of the rules' false alarms there, and no more labelled
    claims than false alarms (which sentences, and how many, depend on the rules of the day: they are the model's
    features; as the rules took in the false alarms it learned from, its vetoes there fell from 5 or more, none a
    claim, to 2 at dfeec34, one of them a claim — one more reason it is not adopted)."""
    _, m, rows = trained
    vetoed = [r for r in rows
              if any(f.kind == "vetoed" for f in claimmodel.lint_text(r["text"] + "\n", m, targets=True))]
    right = [r for r in vetoed if r["kind"] != "claim"]
    assert right and len(vetoed) - len(right) <= len(right), [r["text"] for r in vetoed]
    text = right[0]["text"] + "\n"
    assert [f for f in lint_text(text) if f.kind == "claim"] != []  # the rules report it
    assert claimmodel.lint_text(text, m) == []
    assert {(f.kind, f.by) for f in claimmodel.lint_text(text, m, targets=True)} >= {("vetoed", "model")}
    kept = next(r["text"] for r in rows if r["text"].startswith("llama_print_timings:        eval time ="))
    assert [f.by for f in claimmodel.lint_text(kept + "\n", m)]
    assert all(f.by == "rules" for f in claimmodel.lint_text(kept, m))


def test_training_is_deterministic_and_written_as_it_is_read(trained, tc: ModuleType, tmp_path: Path) -> None:
    featured, m, _ = trained
    design = next(d for d in tc.DESIGNS if d.name == tc.CHOSEN)
    again = tc.train([e for r in featured if r.batch in tc.SHIP for e in r.examples], design)
    assert tc.dump(again) == tc.dump(m)
    path = tmp_path / "model.json"
    path.write_text(tc.dump(m), encoding="utf-8")
    loaded = claimmodel.load(path)
    assert (loaded.weights, loaded.bias, loaded.veto, loaded.add) == (m.weights, m.bias, m.veto, m.add)


def test_the_script_reads_fresh3_only_when_asked_and_fresh4_never(tc: ModuleType, tmp_path, monkeypatch) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": f"en-{i}", "lang": "en", "text": f"It took {i} s.", "spans": [], "claim": True, "split": split}
        for i, split in enumerate(["tune", "unseen", "fresh", "fresh2", "fresh3", "fresh4", "fresh3b", "fresh4_ko", "fresh5", "fresh6"])
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.setattr(tc, "CORPUS", corpus)
    assert [r["split"] for r in tc.load()] == ["tune", "unseen", "fresh", "fresh2"]
    assert [r["split"] for r in tc.load(allow=tc.HELD)] == ["tune", "unseen", "fresh", "fresh2", "fresh3", "fresh3b"]
    assert {r["batch"] for r in tc.load()} == {"batch1", "fresh", "fresh2"}
