"""docs lint engine: unsourced performance claims in English and Korean documents."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factreg.docs.lint import Finding, lint_file, lint_paths, lint_text
from factreg.errors import BadInput
from tests.lint_support import load, score


def texts(doc: str, include_code: bool = False) -> list[str]:
    return [f.text for f in lint_text(doc, include_code=include_code)]


def one(doc: str) -> Finding:
    found = lint_text(doc)
    assert len(found) == 1, found
    return found[0]


# --- what counts as a claim -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "text", "value", "unit"),
    [
        ("first audio after 3.75 s here", "3.75 s", "3.75", "s"),
        ("took 130ms", "130ms", "130", "ms"),
        ("took 180 milliseconds", "180 milliseconds", "180", "ms"),
        ("load takes 45 seconds", "45 seconds", "45", "s"),
        ("each run lasts 6 sec.", "6 sec", "6", "s"),
        ("prefill takes 2 minutes cold", "2 minutes", "2", "min"),
        ("a 30-second prefill", "30-second", "30", "s"),
        ("첫 음성까지 3.75초에 나왔다", "3.75초", "3.75", "s"),
        ("중앙값 2.27초로 늘었다", "2.27초", "2.27", "s"),
        ("TTFT 130밀리초", "130밀리초", "130", "ms"),
        ("콜드 프리필은 2분 가까이", "2분", "2", "min"),
        ("decodes at 28 tok/s", "28 tok/s", "28", "tok/s"),
        ("pp512 gives 410 t/s", "410 t/s", "410", "tok/s"),
        ("streams 22 tokens per second", "22 tokens per second", "22", "tok/s"),
        ("12.4 tokens/s measured", "12.4 tokens/s", "12.4", "tok/s"),
        ("디코딩 12.4토큰/초", "12.4토큰/초", "12.4", "tok/s"),
        ("초당 28토큰을 낸다", "초당 28토큰", "28", "tok/s"),
        ("latency 84 ms/token", "84 ms/token", "84", "ms/tok"),
        ("pp512: 1,250 t/s", "1,250 t/s", "1,250", "tok/s"),
        ("made it 28× faster", "28× faster", "28", "×"),
        ("it is 3.1× slower", "3.1× slower", "3.1", "×"),
        ("18x faster than before", "18x faster", "18", "×"),
        ("3 times faster than 35B-A3B", "3 times faster", "3", "×"),
        ("ratio = 3.1×.", "3.1×", "3.1", "×"),
        ("35B-A3B가 3.1배 느리다", "3.1배", "3.1", "×"),
        ("28배 빨라졌다", "28배", "28", "×"),
        ("decoding got 60% slower", "60% slower", "60", "%"),
        ("20% 더 빨라졌다", "20%", "20", "%"),
        ("tg32 gives 11.9 ± 7.2 tok/s", "11.9 ± 7.2 tok/s", "11.9 ± 7.2", "tok/s"),
        ("| tg32 | 11.9 ± 7.2 |", "11.9 ± 7.2", "11.9 ± 7.2", ""),
        ("ttft 0.21 +/- 0.03 s", "0.21 +/- 0.03 s", "0.21 +/- 0.03", "s"),
        ("콜드 첫 턴은 30~60초를 쓴다", "30~60초", "30~60", "s"),
        ("decoding 3.6–8 tok/s only", "3.6–8 tok/s", "3.6–8", "tok/s"),
        ("cold prefill 30-60 s", "30-60 s", "30-60", "s"),
        ("expect 2 to 3 seconds", "2 to 3 seconds", "2 to 3", "s"),
        ("a 2–3× speedup", "2–3× speedup", "2–3", "×"),
        ("GPU에 올리면 2~3배 빨라진다", "2~3배", "2~3", "×"),
        ("it is 2X faster now", "2X faster", "2", "×"),
        ("0.5s/token on CPU", "0.5s/token", "0.5", "s/tok"),
        ("the first epoch takes 3:39 min", "3:39 min", "3:39", "min"),
        ("the build took 6m58s", "6m58s", "6m58s", "s"),
        ("the import takes 4h38m", "4h38m", "4h38m", "h"),
        ("Time Elapsed 00:00:41.91", "00:00:41.91", "00:00:41.91", "s"),
        ("0.42user 0.08system 0:02.51elapsed", "0:02.51", "0:02.51", "s"),
    ],
)
def test_claims_by_category(doc: str, text: str, value: str, unit: str) -> None:
    f = one(doc)
    assert (f.text, f.value, f.unit) == (text, value, unit)
    assert doc[f.col - 1 : f.col - 1 + len(f.text)] == text


@pytest.mark.parametrize(
    "doc",
    [
        "measured at 02:30, reverted at 14:05",
        "새벽 2시 30분에 측정했다",
        "오전 9시 15분 회의",
        "2:30 AM on Oct 26",
        "2026년 10월 26일, 2026-10-26",
        "모델마다 3번씩, 3회, 3 runs, 5 samples, n=5, n = 3",
        "2 × RTX 2080 Super (8 GB each), 32 GB RAM",
        "2x RTX 2080, 4× A100 80GB, 2 × 8 GB",
        "27B, 35B-A3B, 3B active, Q4_K_M, 22 GB file",
        "llama.cpp b6012, v1.2, Python 3.11, CUDA 12.4",
        "127.0.0.1:8080 and :8081",
        "tg32 and pp512 with -p 512 -n 32 -r 5",
        "freshness 30d, warn_after 6h, 14 days",
        "the 401s started; most RTX 2080s have 8 GB; Ryzen 7 3700X",
        "Mixtral 8x7B, 1920x1080, 0x1e81",
        "3분기 회고, 3분의 1",
        "128 배치, v3 배포",
        "the unit is tok/s",
        "set the probe timeout to 30 s",
        "헬스 체크는 5초마다 실행된다",
        "poll every 5 seconds",
        "재검증은 30분마다, 10분 후에 다시",
        "see http://127.0.0.1:8080/v1?timeout=30s",
        "[the probe](https://example.org/a?wait=5s) docs",
        "9월 26일 오전 2시 30분 10초에 재시작",
        "Ryzen 7 3700X and 3X",
        # clocks whose words do not make them durations: times of day, log stamps, a schedule, a recording
        "build started at 10:38, ended 11:02",
        "2021.07.27 10:53:32.017057 executeQuery took the lock",
        "[15:24:43] [Server thread/INFO]: Dim 0 : Mean tick time",
        "open from 9:00 to 17:00 on build days",
        "Duration: 02:33",
        "the ratio 16:9 and the port :8080, IPv6 fe80::1:20",
    ],
)
def test_non_claims(doc: str) -> None:
    assert lint_text(doc) == []


# --- real sentences by other authors (tests/data/claims-real) -------------------------------------------------
# Misses and false alarms of the rules before they were tuned on the real corpus; the policy is in the module
# docstring of factreg/docs/lint.py and in tests/data/claims-real/README.md.


@pytest.mark.parametrize(
    ("doc", "number"),
    [
        ("Chunk interval: ~15ms between tokens", "15"),  # a time per token is measured, not an interval setting
        ("Prompt processing: −17% from d0 to d32K", "17"),  # a signed change between two conditions
        ("+50% TG uplift", "50"),  # a percentage before a performance noun and a change
        ("It generates 10 to 29 tokens max per second", "10"),
        ("8000pp / 400tg t/s", "8000"),  # llama-bench test names glued to their numbers
        ("It reads 3 – 5 words per second", "3"),
    ],
)
def test_real_misses_are_claims(doc: str, number: str) -> None:
    found = lint_text(doc)
    assert found, doc
    assert all(f.kind == "claim" for f in found)
    assert any(f.text.startswith(number) for f in found), found


@pytest.mark.parametrize(
    "doc",
    [
        "I'm running llama.cpp on two Vega 10s with ROCm.",  # a GPU in the plural
        "You can generate a 5 second video on one GPU.",  # the length of a video
        "양자화는 모델 크기를 4-8배 줄여 준다.",  # a size ratio
        "compresses 16x spatially and 4x temporally",  # compression ratios
        "**메모리 감소**: 양자화를 통해 메모리 사용량 50-75% 감소",  # memory, not speed
        "April 5, 2026 · 1 min read",  # reading time
        "✅ `nginx`: Web 서버 (159s 실행 중)",  # uptime of a process
        "워크숍 세션 팩 (집중 30분 실습)",  # time spent by people
        "If the system generates 1000 tokens, users would wait 10 seconds.",  # hypothetical
    ],
)
def test_real_false_alarms_are_not_claims(doc: str) -> None:
    assert lint_text(doc) == []


@pytest.mark.parametrize(
    "doc",
    [
        "TTFT < 150 ms target",
        "keep ITL under 50 ms",
        "30초 이내로 응답해야 한다",
        "[ ] API 응답 시간 < 200ms",
        "**First Input Delay**: 50ms (목표: <100ms) ✅",
        "Good: < 600ms",
        "the probe timeout is 30 s",
        "✅ Ping-Pong 연결 유지 (30초 간격)",
    ],
)
def test_targets_are_reported_only_when_asked(doc: str) -> None:
    claims = lint_text(doc)
    everything = lint_text(doc, targets=True)
    targets = [f for f in everything if f.kind == "target"]
    assert targets, everything
    assert [f for f in everything if f.kind == "claim"] == claims  # asking for targets changes no claim
    assert all(f.kind == "claim" for f in claims)


def test_a_claim_and_a_target_in_one_sentence() -> None:
    found = lint_text("P99 TTFT 82.223s (목표: 2s 이하)", targets=True)
    assert [(f.text, f.kind) for f in found] == [("82.223s", "claim"), ("2s", "target")]


def test_lint_paths_reports_targets_when_asked(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Decodes at 28 tok/s.\n\nTarget: TTFT under 150 ms.\n", encoding="utf-8")
    assert [(f.text, f.kind) for f in lint_paths([tmp_path])] == [("28 tok/s", "claim")]
    assert [(f.text, f.kind) for f in lint_paths([tmp_path], targets=True)] == [
        ("28 tok/s", "claim"),
        ("150 ms", "target"),
    ]


# --- skipped regions ------------------------------------------------------------------------------------------


def test_citation_markers_are_sourced() -> None:
    doc = "decoding runs at <!-- fact: gamebox/a3b/tg32 -->11.9 ± 7.2 tok/s<!-- /fact --> but the old doc said 28 tok/s"
    assert texts(doc) == ["28 tok/s"]


def test_marker_spanning_lines_and_comments_are_skipped() -> None:
    doc = (
        "<!-- fact: voice/27b/ttft -->\n0.45 s\n<!-- /fact -->\n"
        "<!-- old value:\n28 tok/s, do not use -->\n"
        "first audio 0.21 s\n"
    )
    found = lint_text(doc)
    assert [(f.line, f.text) for f in found] == [(6, "0.21 s")]


def test_unclosed_comment_runs_to_the_end() -> None:
    assert texts("real 3 s\n<!-- never closed\n28 tok/s\n") == ["3 s"]


def test_fenced_and_indented_code_skipped_unless_asked() -> None:
    doc = (
        "Intro 1 s.\n\n"
        "```bash\ncurl localhost:8080/health  # 5 ms\n```\n\n"
        "~~~\ntook 2 s\n~~~\n\n"
        "Paragraph.\n\n    indented 3 s\n    more 4 s\n\n"
        "Outro 9 s.\n"
    )
    assert texts(doc) == ["1 s", "9 s"]
    assert texts(doc, include_code=True) == ["1 s", "5 ms", "2 s", "3 s", "4 s", "9 s"]


def test_longer_fence_needs_a_longer_close_and_unclosed_fence_runs_to_end() -> None:
    doc = "````\n```\n3 s\n```\n5 s\n````\nafter 6 s\n```\nunclosed 7 s\n"
    assert texts(doc) == ["6 s"]


def test_indented_list_continuation_is_prose() -> None:
    doc = "- first audio:\n\n    3.75 s after thinking was turned on\n"
    assert texts(doc) == ["3.75 s"]


def test_inline_code_skipped_unless_asked_but_a_value_alone_in_code_font_is_prose() -> None:
    doc = "Run `llama-bench` (took `30s`) and ``x ` 4 s`` then see 2 s; `llama-bench -r 5 # 12 s` is code."
    assert texts(doc) == ["30s", "2 s"]
    assert texts(doc, include_code=True) == ["30s", "4 s", "2 s", "12 s"]


def test_front_matter_is_metadata() -> None:
    doc = "---\ntitle: decode 28 tok/s\nreviewed: 2026-10-26\n---\n# Body\nnow 11.9 tok/s\n"
    found = lint_text(doc)
    assert [(f.line, f.text) for f in found] == [(6, "11.9 tok/s")]


def test_pre_and_code_elements_skipped() -> None:
    assert texts("<pre>\n3 s\n</pre> and <code>4 s</code> but 5 s") == ["5 s"]


# --- ignore directives ----------------------------------------------------------------------------------------


def test_ignore_directives() -> None:
    doc = (
        "a 1 s\n"
        "b 2 s <!-- factreg: ignore -->\n"
        "<!-- factreg: ignore-next-line -->\n"
        "c 3 s\n"
        "d 4 s\n"
        "<!-- factreg: ignore-start -->\n"
        "e 5 s\n"
        "<!-- factreg: ignore-end -->\n"
        "f 6 s\n"
    )
    assert texts(doc) == ["1 s", "4 s", "6 s"]


def test_ignore_file_anywhere() -> None:
    assert lint_text("28 tok/s\n\nlast line <!-- factreg: ignore-file -->\n") == []


def test_directive_shown_as_code_is_not_obeyed() -> None:
    doc = "Write `<!-- factreg: ignore-file -->` to skip a file.\n\nIt decodes at 28 tok/s.\n"
    assert texts(doc) == ["28 tok/s"]


# --- positions ------------------------------------------------------------------------------------------------


def test_columns_count_characters_in_korean_text() -> None:
    doc = "제목\n음성 프론트엔드는 첫 음성까지 3.75초, 전체 문장까지 4.7초가 걸렸다.\n"
    found = lint_text(doc, path="runbook.md")
    assert [(f.path, f.line, f.col, f.text) for f in found] == [
        ("runbook.md", 2, 18, "3.75초"),
        ("runbook.md", 2, 33, "4.7초"),
    ]


def test_lines_with_crlf_and_many_lines() -> None:
    doc = "x\r\n" * 999 + "took 3 s\r\n"
    f = one(doc)
    assert (f.line, f.col, f.text) == (1000, 6, "3 s")


def test_several_claims_in_one_run_of_text() -> None:
    # `1분 30초` is one duration, reported once and whole (its seconds are not a second claim)
    assert texts("p50/p95 130ms/140ms, 프리필이 1분 30초, 0.13s→0.21s") == [
        "130ms",
        "140ms",
        "1분 30초",
        "0.13s",
        "0.21s",
    ]


def test_claim_never_spans_lines() -> None:
    assert texts("between 30 and\n60 s") == ["60 s"]


# --- files ----------------------------------------------------------------------------------------------------


def test_lint_paths_walks_folders(tmp_path: Path) -> None:
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "a.md").write_text("decodes at 28 tok/s\n", encoding="utf-8")
    (tmp_path / "docs" / "sub" / "b.markdown").write_text("첫 음성 3.75초\n", encoding="utf-8")
    (tmp_path / "docs" / "c.py").write_text("x = '3 s'\n", encoding="utf-8")
    (tmp_path / "docs" / ".git").mkdir()
    (tmp_path / "docs" / ".git" / "d.md").write_text("9 s\n", encoding="utf-8")
    (tmp_path / "docs" / "bad.md").write_bytes(b"\xff\xfe 3 s")
    notes = tmp_path / "notes.txt"
    notes.write_text("took 2 s\n", encoding="utf-8")
    found = lint_paths([tmp_path / "docs", notes])
    assert [(Path(f.path).name, f.text) for f in found] == [
        ("a.md", "28 tok/s"),
        ("b.markdown", "3.75초"),
        ("notes.txt", "2 s"),
    ]


def test_lint_file_rejects_non_utf8_and_binary(tmp_path: Path) -> None:
    latin = tmp_path / "latin.md"
    latin.write_bytes("took 3 s, caf\xe9\n".encode("latin-1"))
    with pytest.raises(BadInput, match="not UTF-8"):
        lint_file(latin)
    binary = tmp_path / "blob.md"
    binary.write_bytes(b"3 s\x00\x01")
    with pytest.raises(BadInput, match="binary"):
        lint_file(binary)
    good = tmp_path / "ok.md"
    good.write_text("took 3 s\n", encoding="utf-8")
    assert [(f.path, f.line, f.col) for f in lint_file(good)] == [(str(good), 1, 6)]


# --- robustness -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [
        "",
        "\n\n",
        "0",
        "1" * 5000,
        "` ` ` ``` ~~~",
        "<!--",
        "<!-- fact:",
        "-->",
        "\ufeff3 s",
        "3\u00a0s",
        "±±1±",
        "x" * 10,
    ],
)
def test_weird_input_does_not_crash(doc: str) -> None:
    for f in lint_text(doc):
        assert doc.split("\n")[f.line - 1][f.col - 1 :].startswith(f.text)


_PIECES = st.sampled_from(
    [
        "3",
        "0.13",
        "28",
        "1,250",
        " ",
        "\n",
        "\t",
        "    ",
        "s",
        "ms",
        "초",
        "배",
        "분",
        "×",
        "x",
        "%",
        "±",
        "~",
        "–",
        "-",
        "tok/s",
        "토큰",
        "초당",
        "faster",
        "timeout",
        "마다",
        "시",
        "`",
        "```",
        "~~~",
        "<!--",
        "-->",
        "<!-- fact: a/b -->",
        "<!-- /fact -->",
        "<!-- factreg: ignore -->",
        "<!-- factreg: ignore-next-line -->",
        "- ",
        "---",
        "http://h:1/",
        "](",
        ")",
        "RTX",
        "\r\n",
        "é",
        "가",
    ]
)


def _check_positions(doc: str) -> None:
    lines = doc.split("\n")
    for f in lint_text(doc):
        assert f.line >= 1 and f.col >= 1
        line = lines[f.line - 1]
        assert line[f.col - 1 : f.col - 1 + len(f.text)] == f.text
        assert f.value and f.value[0].isdigit()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_property_arbitrary_text(doc: str) -> None:
    _check_positions(doc)
    _check_positions(doc)  # deterministic: same input, same answer (checked below too)
    assert lint_text(doc) == lint_text(doc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_property_claim_shaped_text(doc: str) -> None:
    _check_positions(doc)
    _check_positions(doc + "\n")


def _cpu(doc: str) -> float:
    """The least CPU time of two lints of `doc` (prose and code): the less noisy of two on a busy machine."""
    times = []
    for _ in range(2):
        start = time.process_time()
        lint_text(doc)
        lint_text(doc, include_code=True)
        times.append(time.process_time() - start)
    return min(times)


@pytest.mark.parametrize("make", [
    lambda k: "`" + " 3 s `x" * k,  # many unmatched backtick runs in one paragraph
    lambda k: "<!-- fact: a/b -->3 s\n" * (k // 4),  # unclosed markers
    lambda k: "<!-- 3 s " * (k // 4),  # unclosed comments
    lambda k: "``a` 3 s " * (k // 4),  # backtick runs that never close
    lambda k: "```\n3 s\n" * (k // 4),  # fences opening and closing
    lambda k: "1±" * k + "1-" * k + " s",  # spreads and ranges that never end
    lambda k: "3 s\n" * k,  # one claim per line
    lambda k: "x 3 s " * k,  # one very long line
    lambda k: "\n    3 s\n\n- item\n\n    4 s\n" * (k // 4),  # indented code and list continuations
    lambda k: "| a | b |\n" + "|---|---|\n| 3 s | x |\n" * (k // 2),  # a separator row after every row
    lambda k: "a | b\n---|---\n" + "3 s | x\n" * k,  # one long table, rows without a leading pipe
])
@pytest.mark.alone
def test_no_quadratic_blow_up_on_pathological_input(make) -> None:
    """Growth, not speed: four times the input costs about four times the CPU (quadratic would be sixteen), a ratio
    measured in the same process that a busy machine moves on both sides alike."""
    lint_text("3 s")  # rules compiled on first use: not part of either figure
    small, large = _cpu(make(1_000)), _cpu(make(4_000))
    assert large / max(small, 1e-3) < 9, (make(20)[:40], small, large)


# --- the labelled corpus --------------------------------------------------------------------------------------


def test_corpus_is_well_formed() -> None:
    rows = load()
    assert len(rows) >= 150
    assert sum(1 for r in rows if r["claims"]) >= 60
    assert sum(1 for r in rows if not r["claims"]) >= 40
    assert {r["lang"] for r in rows} == {"en", "ko"}
    assert sum(1 for r in rows if r["lang"] == "ko") >= len(rows) // 3
    assert sum(1 for r in rows if r["split"] == "heldout") >= len(rows) // 5
    assert len({r["text"] for r in rows}) == len(rows)


@pytest.mark.parametrize("split", ["all", "heldout"])
def test_corpus_precision_and_recall(split: str) -> None:
    rows = load()
    if split != "all":
        rows = [r for r in rows if r["split"] == split]
    s = score(rows)
    assert s.precision >= 0.95, s.errors
    assert s.recall >= 0.95, s.errors
