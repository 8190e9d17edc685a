"""What would meeting the lint's accuracy and speed targets take? Three measurements, run by hand (needs numpy and
scikit-learn: `pip install scikit-learn`; neither is a dependency of factreg).

The targets: ≥ 0.95 precision and recall per language on real sentences the rules were not tuned on, and a cold
`docs check --lint` within 3× (runbook-like tree) and 6× (dense tree) of `grep -rEc`.

1. **A learned reader instead of rules** (leave-one-batch-out). Every batch of tests/data/claims-real (batch 1 =
   `tune` + `unseen`, then `LATER` in work/build.py) is held out in turn; a logistic regression (scikit-learn,
   L2, C=1, threshold 0.5) is trained on the sentences of the other batches that hold a number with a unit, and
   predicts, for each held-out sentence holding one, whether it holds a claim. Its features read only the text:
   character 2–4-grams, words and word pairs of the sentence, the four words on each side of each number and its
   unit, and the words of a table row's header. A sentence without a number with a unit is predicted claim-free,
   as the rules do. Beside it, the rules alone (`lint_paths`, as bench/lint_real.py scores them). The rules were
   tuned on every batch but the newest, so only the newest batch's rules column is a held-out figure; every
   model column is held out. The design was fixed before any of its scores was seen and not changed after.
2. **Learning curve** on the newest batch: the same model trained on random fractions (1/8 … 1) of the other
   batches (three seeds each), F1 per language against the number of training sentences, with a least-squares
   fit F1 = a + b·log2(n) and the n at which it would reach 0.95 if the trend held.
3. **The cost of a reader of meaning.** The errors left are semantic (docs/performance.md, "Lint on real
   sentences"); the smallest models that read meaning are transformer encoders. One of MiniLM's shape (6 layers,
   width 384, 12 heads, 1,536 wide feed-forward; 32 tokens per sentence, batches of 64) is run in numpy with random
   weights: its cost does not depend on the weights. Its sentences per second on this machine are set against the
   sentences per second the speed targets leave: the sentences the lint reads (its findings) in runbook-like and
   dense documents generated as bench/bench_docs.py makes them, divided by the target's time (3× or 6× the
   `grep -rEc` of the same documents, timed in the same run).

Writes bench/results/lint_ceiling.md. Run: `python bench/lint_ceiling.py` (about two minutes).
"""

from __future__ import annotations

import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_docs import GREP_PATTERN, render_doc  # noqa: E402
from claimmodel import tokens  # noqa: E402  (the words as the lint's model experiment reads them)
from common import RESULTS, machine, time_process  # noqa: E402
from lint_real import BUILD, document, load, ratio, run_lint  # noqa: E402

from factreg.docs import lint  # noqa: E402
from factreg.docs.lint import engine  # noqa: E402

BATCHES = ("batch1", *BUILD.LATER)
NEWEST = BUILD.NEWEST


def batch_of(r: dict) -> str:
    return "batch1" if r["split"] in ("tune", "unseen") else r["split"]


def prepare(rows: list[dict]) -> list[dict]:
    """Each sentence with what the model reads and what the rules say (sentence level)."""
    flagged = run_lint(rows)
    out = []
    for r in rows:
        text, line = document(r)
        lo = 0
        for _ in range(line - 1):
            lo = text.index("\n", lo) + 1
        dismissed: list = []
        found = engine._scan(text, False, True, dismissed)
        numbers = sorted(c for c in found + dismissed if c[0] >= lo)
        near = []
        for c in numbers:
            before = tokens(text[max(lo, c[0] - 50) : c[0]])[-4:]
            after = tokens(text[c[1] : c[1] + 50])[:4]
            near += [f"L{i}_{t}" for i, t in enumerate(reversed(before), 1)]
            near += [f"R{i}_{t}" for i, t in enumerate(after, 1)]
            near += [f"U_{c[3]}", f"LU_{before[-1] if before else ''}_{c[3]}"]
        if r.get("header"):
            near += ["H_" + t for t in tokens(r["header"])]
        out.append(
            {
                "text": r["text"],
                "near": " ".join(near),
                "has": bool(numbers),
                "rules": bool(flagged[r["id"]]),
                "y": bool(r["claim"]),
                "lang": r["lang"],
                "batch": batch_of(r),
            }
        )
    return out


def fit_predict(train: list[dict], test: list[dict]) -> list[bool]:
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    train = [d for d in train if d["has"]]
    parts = [
        (TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, sublinear_tf=True), "text"),
        (TfidfVectorizer(token_pattern=r"\S+", min_df=2, lowercase=False, sublinear_tf=True), "near"),
        (
            TfidfVectorizer(tokenizer=tokens, token_pattern=None, ngram_range=(1, 2), min_df=2, sublinear_tf=True),
            "text",
        ),
    ]
    x_train = hstack([v.fit_transform([d[k] for d in train]) for v, k in parts]).tocsr()
    x_test = hstack([v.transform([d[k] for d in test]) for v, k in parts]).tocsr()
    model = LogisticRegression(C=1.0, max_iter=3000).fit(x_train, [d["y"] for d in train])
    p = model.predict_proba(x_test)[:, 1]
    return [bool(d["has"] and q >= 0.5) for d, q in zip(test, p, strict=True)]


def counts(pred: list[bool], gold: list[bool]) -> tuple[int, int, int]:
    tp = sum(p and g for p, g in zip(pred, gold, strict=True))
    return tp, sum(pred), sum(gold)


def f1(tp: int, npred: int, ngold: int) -> float:
    return 2 * tp / max(npred + ngold, 1)


def leave_one_batch_out(data: list[dict]) -> str:
    lines = [
        "| held out | language | sentences | precision, rules | precision, learned | recall, rules | recall, learned "
        "| F1 rules / learned |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for held in BATCHES:
        test = [d for d in data if d["batch"] == held]
        pred = fit_predict([d for d in data if d["batch"] != held], test)
        for lang in ("en", "ko"):
            idx = [i for i, d in enumerate(test) if d["lang"] == lang]
            gold = [test[i]["y"] for i in idx]
            r_tp, r_n, g = counts([test[i]["rules"] for i in idx], gold)
            m_tp, m_n, _ = counts([pred[i] for i in idx], gold)
            tag = " (rules unseen)" if held == NEWEST else " (rules tuned on it)"
            lines.append(
                f"| {held}{tag} | {lang} | {len(idx)} | {ratio(r_tp, r_n)} | {ratio(m_tp, m_n)} | {ratio(r_tp, g)} | "
                f"{ratio(m_tp, g)} | {f1(r_tp, r_n, g):.3f} / {f1(m_tp, m_n, g):.3f} |"
            )
    return "\n".join(lines)


def learning_curve(data: list[dict]) -> str:
    import numpy as np

    test = [d for d in data if d["batch"] == NEWEST]
    pool = [d for d in data if d["batch"] != NEWEST]
    points: dict[str, list[tuple[float, float]]] = {"en": [], "ko": []}
    lines = [
        "| share of the other batches | training sentences (mean) | F1 en (mean of 3) | F1 ko (mean of 3) |",
        "|---|---|---|---|",
    ]
    for share in (0.125, 0.25, 0.5, 1.0):
        sizes, scores = [], {"en": [], "ko": []}
        for seed in range(3 if share < 1 else 1):
            rnd = random.Random(seed)
            train = [d for d in pool if share == 1 or rnd.random() < share]
            sizes.append(sum(d["has"] for d in train))
            pred = fit_predict(train, test)
            for lang in ("en", "ko"):
                idx = [i for i, d in enumerate(test) if d["lang"] == lang]
                scores[lang].append(f1(*counts([pred[i] for i in idx], [test[i]["y"] for i in idx])))
        n = statistics.mean(sizes)
        for lang in ("en", "ko"):
            points[lang].append((n, statistics.mean(scores[lang])))
        lines.append(
            f"| {share:g} | {n:,.0f} | {statistics.mean(scores['en']):.3f} | {statistics.mean(scores['ko']):.3f} |"
        )
    lines.append("")
    for lang in ("en", "ko"):
        xs = np.log2([n for n, _ in points[lang]])
        ys = np.array([s for _, s in points[lang]])
        b, a = np.polyfit(xs, ys, 1)
        need = 2 ** ((0.95 - a) / b) if b > 0 else float("inf")
        lines.append(
            f"- {lang}: F1 = {a:.3f} + {b:.4f}·log2(n), that is {b:+.3f} per doubling of the training sentences; "
            f"0.95 would take n ≈ {need:,.0f} labelled sentences with a number and a unit "
            f"({need / points[lang][-1][0]:,.0f}× today's) if the trend held."
        )
    return "\n".join(lines)


def encoder_rate(
    layers: int = 6, width: int = 384, heads: int = 12, ff: int = 1536, seconds: float = 8.0
) -> tuple[float, float]:
    """Sentences per second through a transformer encoder (by default MiniLM's shape; random weights; numpy,
    float32), and the bound if each of its multiply-adds ran at the speed of one large matrix product here."""
    import numpy as np

    rng = np.random.default_rng(0)
    seq, batch = 32, 64
    w = [
        [
            rng.standard_normal(s, dtype=np.float32) * 0.02
            for s in ((width, 3 * width), (width, width), (width, ff), (ff, width))
        ]
        for _ in range(layers)
    ]

    scale = np.float32(1 / np.sqrt(width // heads))

    def norm(x):  # type: ignore[no-untyped-def]
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + np.float32(1e-6))

    def forward(x):  # type: ignore[no-untyped-def]
        # x: (batch * seq, width), float32 throughout; the linear layers are 2-D products (one BLAS call each)
        for qkv_w, out_w, up_w, down_w in w:
            qkv = (x @ qkv_w).reshape(batch, seq, 3, heads, width // heads).transpose(2, 0, 3, 1, 4)
            att = (qkv[0] @ qkv[1].transpose(0, 1, 3, 2)) * scale
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            mixed = (att @ qkv[2]).transpose(0, 2, 1, 3).reshape(batch * seq, width)
            x = norm(x + mixed @ out_w)
            h = x @ up_w
            h = np.float32(0.5) * h * (1 + np.tanh(np.float32(0.7978845608) * (h + np.float32(0.044715) * h**3)))
            x = norm(x + h @ down_w)
        assert x.dtype == np.float32
        return x

    x = rng.standard_normal((batch * seq, width), dtype=np.float32)
    forward(x)
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        forward(x)
        done += batch
    rate = done / (time.perf_counter() - t0)
    # the products per sentence: QKV, output, feed-forward up and down, and the two attention products
    flops = 2 * layers * seq * (width * 3 * width + width * width + 2 * width * ff + 2 * seq * width)
    a = rng.standard_normal((4096, width), dtype=np.float32)
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 2.0:
        a @ w[0][2]
        done += 1
    peak = done * 2 * 4096 * width * ff / (time.perf_counter() - t0)
    return rate, peak / flops


def grep_seconds(folder: Path, reps: int = 5) -> float:
    return statistics.median(time_process(["grep", "-rEc", "--include=*.md", GREP_PATTERN, str(folder)], reps))


def reading_budget(rate: float, tiny: float) -> str:
    lines = [
        "| documents | files | MB | sentences the lint reads | grep -rEc (s, median of 5) | target | time left for reading (s) "
        "| sentences/s needed | MiniLM-shaped, bound | short by | 2 layers × 128, bound | short by |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, share, factor in (("runbook-like", 0.03, 3), ("dense", 0.30, 6)):
        rnd = random.Random(20261201)
        with tempfile.TemporaryDirectory(prefix="factreg-ceiling-") as tmp:
            folder = Path(tmp)
            size, found = 0, 0
            for i in range(1000):
                text = render_doc(rnd, i, [], share)
                (folder / f"doc{i:04d}.md").write_text(text, encoding="utf-8")
                size += len(text.encode("utf-8"))
                found += len(lint.lint_text(text))
            grep = grep_seconds(folder)
            shutil.rmtree(folder, ignore_errors=True)
        budget = factor * grep
        need = found / budget
        lines.append(
            f"| {name} | 1,000 | {size / 1e6:.1f} | {found:,} | {grep:.3f} | ≤ {factor}× grep | {budget:.3f} | "
            f"{need:,.0f} | {rate:,.0f} | {need / rate:,.0f}× | {tiny:,.0f} | {need / tiny:,.0f}× |"
        )
    return "\n".join(lines)


def main() -> None:
    try:
        import numpy  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError:
        raise SystemExit(
            "Error: bench/lint_ceiling.py needs numpy and scikit-learn (pip install scikit-learn)"
        ) from None
    data = prepare(load())
    t0 = time.perf_counter()
    lobo = leave_one_batch_out(data)
    curve = learning_curve(data)
    rate, bound = encoder_rate()
    tiny_rate, tiny_bound = encoder_rate(layers=2, width=128, heads=4, ff=512)
    budget = reading_budget(bound, tiny_bound)
    took = time.perf_counter() - t0
    text = f"""## What the lint's targets would take (`bench/lint_ceiling.py`)

Machine: {machine()}. Corpus: tests/data/claims-real, {len(data):,} sentences in {len(BATCHES)} batches. Took {took:.0f} s.

### 1. A learned reader instead of the rules, leave-one-batch-out

Sentence level, Wilson 95% intervals. The rules were tuned on every batch but `{NEWEST}`: only its rules column is a
held-out figure. Every learned column is held out (trained on the other batches only).

{lobo}

### 2. Learning curve on `{NEWEST}`

{curve}

### 3. The cost of a reader of meaning, against the speed targets

A transformer encoder of MiniLM's shape (6 layers, width 384, 12 heads, feed-forward 1,536; 32 tokens per
sentence; batches of 64; numpy float32, random weights): **{rate:,.0f} sentences/s** on this machine; if every one of
its multiply-adds ran as fast as one large matrix product does here, **{bound:,.0f} sentences/s** (the bound used
below, generous to the encoder). A far smaller one (2 layers, width 128, 4 heads, feed-forward 512;
a 26th of the multiply-adds): {tiny_rate:,.0f}
sentences/s, bound {tiny_bound:,.0f}. The lint must
read each sentence it reports (its findings); the target leaves 3× or 6× grep's time for everything, reading the
files included, and all of it is given to the encoder here.

{budget}
"""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "lint_ceiling.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
