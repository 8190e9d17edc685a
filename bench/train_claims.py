"""Train the lint's learned second opinion (bench/claimmodel.py) on the real-sentence corpus, and measure it.

The corpus is tests/data/claims-real/corpus.jsonl; its batches are `batch1` (splits `tune` and `unseen`), `fresh`,
`fresh2`, and the newer `fresh3` … `fresh6`. Rows of a split whose name starts with `fresh3` … `fresh6` are dropped as
the file is read, unless a mode below names fresh3; `fresh4`, `fresh5` and `fresh6` are never read.

Each sentence (a corpus row, or a part of it: claimmodel.sentences) holding a number with a unit is an
example: its features (claimmodel.features: the rules' findings and dismissed numbers, the words of the sentence,
the words beside each number) and its label (a labelled claim span overlaps the sentence). The learner is a
logistic regression (L2, AdaGrad, a fixed number of passes over the examples in an order drawn from a seeded
generator); a multinomial naive Bayes and an averaged perceptron are tried beside it. A feature is kept when it
occurs in at least two training examples. Deterministic: the same rows give the same weights.

Modes:
- `--lobo`: model selection by leave-one-batch-out over batch1, fresh, fresh2 (train on two, score the third, per
  language, sentence level, precision and recall with Wilson 95% intervals), for each design tried, against the
  rules alone; writes bench/results/lint_real_model_lobo.md.
- `--fresh3`: the chosen design (CHOSEN), trained on batch1+fresh+fresh2, scored once on fresh3 (figures only; no
  fresh3 sentence is printed); writes bench/results/lint_real_model_fresh3.md.
- `--speed`: CPU time of `lint_text` with and without the chosen model (trained on batch1+fresh+fresh2) over
  documents generated as bench/bench_docs.py makes them, in the same run.
- `--write PATH`: trains the chosen design on batch1+fresh+fresh2 and writes it as claimmodel.load reads it (the
  model was not adopted, so no weights ship with factreg: docs/performance.md, "A learned second opinion").

Run: `python bench/train_claims.py --lobo`.
"""

from __future__ import annotations

import json
import math
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import claimmodel  # noqa: E402  (bench/claimmodel.py)
from lint_real import wilson  # noqa: E402  (the same interval as the other corpus scores)

from factreg.docs import lint  # noqa: E402
from factreg.docs.lint import engine  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "claims-real" / "corpus.jsonl"
RESULTS = ROOT / "bench" / "results"
NEVER = ("fresh4", "fresh5", "fresh6")  # never read
HELD = ("fresh3",)  # read only by --fresh3 (scores) and, if the model is adopted, for the shipped weights
BATCHES = {"tune": "batch1", "unseen": "batch1", "fresh": "fresh", "fresh2": "fresh2", "fresh3": "fresh3"}
SHIP = ("batch1", "fresh", "fresh2")  # the batches the shipped weights are trained on
SEED = 20261130


def load(allow: tuple[str, ...] = ()) -> list[dict]:
    rows = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        split = r["split"]
        if split.startswith(NEVER) or (split.startswith(HELD) and not split.startswith(allow or ("\0",))):
            continue
        r["batch"] = BATCHES.get(split, split)
        rows.append(r)
    return rows


def label_spans(text: str, subs: list[str]) -> list[tuple[int, int]]:
    """The labelled substrings as offsets, left to right (as bench/lint_real.py locates them)."""
    out, pos = [], 0
    for sub in subs:
        i = text.find(sub, pos)
        if i < 0:
            i = text.find(sub)
        if i < 0:
            continue
        out.append((i, i + len(sub)))
        pos = i + len(sub)
    return out


@dataclass
class Example:
    feats: list[str]
    label: bool  # a labelled claim span overlaps the sentence
    rules: bool  # the rules found a claim in it


@dataclass
class Row:
    lang: str
    batch: str
    claim: bool
    examples: list[Example]
    rules: bool  # the rules alone flag the row


def featurise(rows: list[dict]) -> list[Row]:
    out = []
    for r in rows:
        text = r["text"] + "\n"
        dismissed: list[engine.Candidate] = []
        found = engine._scan(text, False, True, dismissed)
        spans = label_spans(text, r["spans"])
        examples = []
        for lo, hi, cands in claimmodel.groups(text, found, dismissed):
            examples.append(
                Example(
                    claimmodel.features(text, lo, hi, cands),
                    any(a < hi and lo < b for a, b in spans),
                    any(c[4] == "claim" for c in cands),
                )
            )
        out.append(Row(r["lang"], r["batch"], bool(r["claim"]), examples, any(c[4] == "claim" for c in found)))
    return out


# --- learners --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Design:
    name: str
    learner: str  # "lr", "nb", "perceptron"
    groups: tuple[str, ...]  # feature prefixes kept ("" keeps all)
    veto: float
    add: float
    l2: float = 0.01
    epochs: int = 12


def _keep(feats: list[str], groups: tuple[str, ...]) -> list[str]:
    if not groups:
        return feats
    return [f for f in feats if f.startswith(groups)]


def vocabulary(examples: list[Example], groups: tuple[str, ...]) -> set[str]:
    counts: Counter[str] = Counter()
    for e in examples:
        counts.update(set(_keep(e.feats, groups)))
    return {f for f, n in counts.items() if n >= 2}


_CACHE: dict[tuple[object, ...], claimmodel.Model] = {}


def train(examples: list[Example], design: Design, key: object = None) -> claimmodel.Model:
    if key is not None:
        k = (design.learner, design.groups, design.l2, design.epochs, key)
        if k not in _CACHE:
            _CACHE[k] = train(examples, design)
        m = _CACHE[k]
        return claimmodel.Model(m.weights, m.bias, design.veto, design.add, design.name)
    vocab = vocabulary(examples, design.groups)
    data = [([f for f in _keep(e.feats, design.groups) if f in vocab], e.label) for e in examples]
    if design.learner == "lr":
        weights, bias = _train_lr(data, design)
    elif design.learner == "nb":
        weights, bias = _train_nb(data)
    else:
        weights, bias = _train_perceptron(data, design)
    weights = {f: round(w, 4) for f, w in sorted(weights.items()) if abs(round(w, 4)) >= 1e-4}
    return claimmodel.Model(weights, round(bias, 4), design.veto, design.add, design.name)


def _train_lr(data: list[tuple[list[str], bool]], design: Design) -> tuple[dict[str, float], float]:
    rng = random.Random(SEED)
    w: dict[str, float] = {}
    g2: dict[str, float] = {}
    bias, bias_g2 = 0.0, 0.0
    rate = 0.5
    order = list(range(len(data)))
    for _ in range(design.epochs):
        rng.shuffle(order)
        for i in order:
            feats, y = data[i]
            z = bias + sum(w.get(f, 0.0) for f in feats)
            p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
            err = p - (1.0 if y else 0.0)
            bias_g2 += err * err
            bias -= rate * err / math.sqrt(bias_g2 + 1e-8)
            for f in feats:
                wf = w.get(f, 0.0)
                grad = err + design.l2 * wf
                g = g2.get(f, 0.0) + grad * grad
                g2[f] = g
                w[f] = wf - rate * grad / math.sqrt(g + 1e-8)
    return w, bias


def _train_nb(data: list[tuple[list[str], bool]]) -> tuple[dict[str, float], float]:
    """Bernoulli-style naive Bayes over present features, as a linear model (log-odds of presence)."""
    pos = sum(1 for _, y in data if y)
    neg = len(data) - pos
    cp: Counter[str] = Counter()
    cn: Counter[str] = Counter()
    for feats, y in data:
        (cp if y else cn).update(set(feats))
    w = {}
    for f in set(cp) | set(cn):
        w[f] = math.log((cp[f] + 0.5) / (pos + 1)) - math.log((cn[f] + 0.5) / (neg + 1))
    # presence-only: the absent features' terms are left out, the prior kept
    return w, math.log((pos + 1) / (neg + 1))


def _train_perceptron(data: list[tuple[list[str], bool]], design: Design) -> tuple[dict[str, float], float]:
    """Averaged perceptron; its score is squashed as if it were a log-odds."""
    rng = random.Random(SEED)
    w: dict[str, float] = {}
    total: dict[str, float] = {}
    stamp: dict[str, int] = {}
    bias, bias_total, bias_stamp = 0.0, 0.0, 0
    t = 0
    order = list(range(len(data)))
    for _ in range(design.epochs):
        rng.shuffle(order)
        for i in order:
            t += 1
            feats, y = data[i]
            z = bias + sum(w.get(f, 0.0) for f in feats)
            target = 1.0 if y else -1.0
            if z * target <= 0:
                for f in feats:
                    total[f] = total.get(f, 0.0) + (t - stamp.get(f, 0)) * w.get(f, 0.0)
                    stamp[f] = t
                    w[f] = w.get(f, 0.0) + target
                bias_total += (t - bias_stamp) * bias
                bias_stamp = t
                bias += target
    for f in w:
        total[f] = total.get(f, 0.0) + (t - stamp.get(f, 0)) * w[f]
    bias_total += (t - bias_stamp) * bias
    return {f: v / t for f, v in total.items()}, bias_total / t


# --- scoring ---------------------------------------------------------------------------------------------------


def predict(row: Row, model: claimmodel.Model | None) -> bool:
    """Whether the lint flags the row: the rules alone (model None), or with the model's vetoes and additions
    (the same decisions as claimmodel.decide)."""
    if model is None:
        return row.rules
    flagged = False
    for e in row.examples:
        p = model.probability(e.feats)
        flagged |= (p >= model.veto) if e.rules else (p > model.add)
    return flagged


def pr(rows: list[Row], model: claimmodel.Model | None) -> tuple[int, int, int]:
    """(true positives, flagged, labelled claim) at sentence level."""
    tp = flagged = pos = 0
    for r in rows:
        got = predict(r, model)
        flagged += got
        pos += r.claim
        tp += got and r.claim
    return tp, flagged, pos


def cell(k: int, n: int) -> str:
    if n == 0:
        return "— (0)"
    lo, hi = wilson(k, n)
    return f"{k / n:.3f} [{lo:.3f}–{hi:.3f}] ({k}/{n})"


_FEATURES = {
    "all": (),
    "no-bigrams": ("lang", "row", "u:", "n:", "w:", "ks:", "kp:", "ke:", "L", "R"),
    "near-numbers": ("lang", "row", "u:", "n:", "L", "R"),
}
_THRESHOLDS = ((0.5, 0.5), (0.3, 0.7), (0.2, 0.8), (0.1, 0.9), (0.05, 0.95), (0.1, 1.01), (-0.01, 0.9))
DESIGNS = [
    Design(f"lr-{fs}-l2={l2}-veto<{v}-add>{a}", "lr", groups, v, a, l2)
    for fs, groups in _FEATURES.items()
    for l2 in (0.01, 0.1, 0.3, 1.0)
    for v, a in _THRESHOLDS
] + [
    Design(f"{learner}-all-veto<{v}-add>{a}", learner, (), v, a)
    for learner in ("nb", "perceptron")
    for v, a in _THRESHOLDS
]
# Fixed from the leave-one-batch-out table before fresh3 was scored: the design with the highest mean change of
# precision and recall over the six held-out cells (batch × language) among those that lower none of them.
CHOSEN = "lr-no-bigrams-l2=0.3-veto<0.1-add>1.01"


def lobo(featured: list[Row]) -> str:
    folds = ("batch1", "fresh", "fresh2")
    lines = [
        "| design | held out | language | precision, rules | precision, rules+model | recall, rules | recall, rules+model |",
        "|---|---|---|---|---|---|---|",
    ]
    summary: dict[str, list[float]] = {}
    for design in DESIGNS:
        for held in folds:
            train_rows = [r for r in featured if r.batch != held and r.batch in folds]
            model = train([e for r in train_rows for e in r.examples], design, key=held)
            for lang in ("en", "ko"):
                test = [r for r in featured if r.batch == held and r.lang == lang]
                tp0, f0, p0 = pr(test, None)
                tp1, f1, p1 = pr(test, model)
                lines.append(
                    f"| {design.name} | {held} | {lang} | {cell(tp0, f0)} | {cell(tp1, f1)} | {cell(tp0, p0)} "
                    f"| {cell(tp1, p1)} |"
                )
                summary.setdefault(design.name, []).extend(
                    [tp1 / f1 - tp0 / f0 if f1 and f0 else 0.0, tp1 / p1 - tp0 / p0 if p1 else 0.0]
                )
        print(lines[-1], file=sys.stderr)
    table = "\n".join(lines)
    ranked = sorted(summary.items(), key=lambda kv: (-sum(kv[1]) / len(kv[1]), -min(kv[1]), kv[0]))
    sums = ["| design | mean change of P and R over the 6 held-out cells | worst change |", "|---|---|---|"]
    for name, deltas in ranked:
        sums.append(f"| {name} | {sum(deltas) / len(deltas):+.4f} | {min(deltas):+.4f} |")
    chosen = [line for line in lines[2:] if line.startswith(f"| {CHOSEN} |")]
    return (
        f"The chosen design, `{CHOSEN}` (the highest mean change among the designs that lower no cell):\n\n"
        + "\n".join(lines[:2] + chosen)
        + "\n\nEvery design, ranked:\n\n"
        + "\n".join(sums)
        + "\n\nEvery design and held-out batch:\n\n"
        + table
        + "\n"
    )


def main() -> None:
    if "--lobo" in sys.argv:
        featured = featurise(load())
        body = lobo(featured)
        print(body)
        (RESULTS / "lint_real_model_lobo.md").write_text(
            "## The lint's learned second opinion: leave-one-batch-out (model selection)\n\n"
            "Produced by `python bench/train_claims.py --lobo`. Sentence level, Wilson 95% intervals. The rules "
            "were tuned on all three batches, so the rules' own figures here (and the rules' features the model "
            "reads) are optimistic.\n\n" + body,
            encoding="utf-8",
        )
        return
    design = next(d for d in DESIGNS if d.name == CHOSEN)
    if "--fresh3" in sys.argv:
        featured = featurise(load(allow=HELD))
        model = train([e for r in featured if r.batch in SHIP for e in r.examples], design)
        lines = [
            "| language | precision, rules | precision, rules+model | recall, rules | recall, rules+model |",
            "|---|---|---|---|---|",
        ]
        for lang in ("en", "ko"):
            test = [r for r in featured if r.batch == "fresh3" and r.lang == lang]
            tp0, f0, p0 = pr(test, None)
            tp1, f1, p1 = pr(test, model)
            lines.append(f"| {lang} | {cell(tp0, f0)} | {cell(tp1, f1)} | {cell(tp0, p0)} | {cell(tp1, p1)} |")
        print("\n".join(lines))
        return
    if "--speed" in sys.argv:
        print(speed(train([e for r in featurise(load()) if r.batch in SHIP for e in r.examples], design)))
        return
    if "--write" not in sys.argv:
        raise SystemExit(__doc__)
    path = Path(sys.argv[sys.argv.index("--write") + 1])
    model = train([e for r in featurise(load()) if r.batch in SHIP for e in r.examples], design)
    path.write_text(dump(model), encoding="utf-8")
    print(f"wrote {path} ({len(model.weights)} weights)")


def dump(model: claimmodel.Model) -> str:
    """The model as claimmodel.load reads it."""
    out = {
        "about": f"{model.about}; trained by bench/train_claims.py on {'+'.join(SHIP)}",
        "bias": model.bias,
        "veto": model.veto,
        "add": model.add,
        "weights": model.weights,
    }
    return json.dumps(out, ensure_ascii=False, sort_keys=True, indent=0) + "\n"


def speed(model: claimmodel.Model, n_docs: int = 2000, reps: int = 5) -> str:
    """CPU time of `lint_text` over generated documents (bench/bench_docs.py's), rules alone and with the model,
    interleaved in the same run; medians of `reps`."""
    import statistics
    import time

    from bench_docs import render_doc

    lines = []
    for name, share in (("runbook-like", 0.03), ("dense", 0.27)):
        rnd = random.Random(SEED)
        docs = [render_doc(rnd, i, [], share) for i in range(n_docs)]
        size = sum(len(d.encode("utf-8")) for d in docs)
        reached = 0
        for d in docs:
            dismissed: list[engine.Candidate] = []
            found = engine._scan(d, False, True, dismissed)
            reached += len(claimmodel.groups(d, found, dismissed))
        rules_t, model_t = [], []
        for _ in range(reps):
            t0 = time.process_time()
            n0 = sum(len(lint.lint_text(d)) for d in docs)
            rules_t.append(time.process_time() - t0)
            t0 = time.process_time()
            n1 = sum(len(claimmodel.lint_text(d, model)) for d in docs)
            model_t.append(time.process_time() - t0)
        a, b = statistics.median(rules_t), statistics.median(model_t)
        lines.append(
            f"| {name} | {n_docs:,} ({size / 1e6:.1f} MB) | {reached:,} | {a:.3f} ({n0:,} claims) "
            f"| {b:.3f} ({n1:,} claims) | **{b / a:.2f}×** |"
        )
    return (
        "| documents | files | sentences reaching the model | rules alone, CPU s | rules + model, CPU s | ratio |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(lines)
    )


if __name__ == "__main__":
    main()
