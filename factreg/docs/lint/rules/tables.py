"""Rules of tables: units in the header row, percentages in rows of measured times (reading: factreg/docs/lint/tables.py)."""

from __future__ import annotations

from factreg.docs.lint.rules import Rule

EXAMPLES_FR151 = (
    ("microseconds in parentheses", "| B | Triton (us) | Speedup |\n|---|---|---|\n| 64 | 18.46 | 1.28x |", "18.46",
     "| Region | Users (US) |\n|---|---|\n| east | 18.46 |"),
    ("a unit opening a snake-case name", "| nprobe | qps_before | qps_after |\n|---|---|---|\n| 16 | 729.2 | 887.4 |",
     "729.2", "| nprobe | recall_before | recall_after |\n|---|---|---|\n| 16 | 0.72 | 0.81 |"),
    ("anything counted per second", "| Domain | Operators / second |\n|---|---|\n| depot | 1843.64 |", "1843.64",
     "| Plan | Rate limit per second |\n|---|---|\n| Basic | 20 |"),
    ("µs garbled in the header", "| Scenario | Mean (Âµs) |\n|---|---|\n| baseline | 0.64 |", "0.64",
     "| Scenario | Mean (Âµ) |\n|---|---|\n| baseline | 0.64 |"),
    (
        "the load a row of goals is set at",
        "| API | TPS | p95 | p99 |\n|---|---|---|---|\n| /order | 120 | 800ms | 1200ms |",
        "120",
        "| API | TPS | p95 | p99 |\n|---|---|---|---|\n| /order | 120 | 800ms 이하 | 1200ms 이하 |",
    ),
    ("hours in the header", "| GPUs | Time to train (Hrs) |\n|---|---|\n| 4 | 8.2 |", "8.2",
     "| GPUs | Batch per GPU (count) |\n|---|---|\n| 4 | 8.2 |"),
    ("frames a second in the header", "| GPUs | Frames/s with FP32 |\n|---|---|\n| 8 | 296767 |", "296767",
     "| GPUs | Frames with FP32 |\n|---|---|\n| 8 | 296767 |"),
    (
        "pytest-benchmark's ratio after a value",
        "| Name (time in ms) | Min | Max |\n|---|---|---|\n| test_load | 1.6946 (1.23) | 1.7 (1.0) |",
        "1.6946",
        "| Name (size in KB) | Min | Max |\n|---|---|---|\n| test_load | 1.6946 (1.23) | 1.7 (1.0) |",
    ),
    (
        "Korean microseconds in the header",
        "| 서비스 | 서비스 시간(마이크로초) |\n|---|---|\n| 컨텍스트 전환 | 0.4 |",
        "0.4",
        "| 서비스 | 목표 시간(마이크로초) |\n|---|---|\n| 컨텍스트 전환 | 0.4 |",
    ),
    (
        "a rating's band starting at zero is a threshold",
        "| 기기 | LCP (초) |\n|---|---|\n| 모바일 | 1.8-2.5 |",
        "1.8-2.5",
        "| 등급 | LCP (초) |\n|---|---|\n| 녹색 (빠름) | 0-2.5 |",
    ),
    (
        "a unit closing a snake-case column name",
        "| ctx_tokens | gen_tps | gen_first_ms |\n|---|---|---|\n| 2048 | 29.30 | 38.003 |",
        "29.30",
        "| ctx_tokens | timeout_ms | poll_interval_sec |\n|---|---|---|\n| 2048 | 29.30 | 38.003 |",
    ),
    (
        "digits grouped with underscores",
        "| bench | op/s |\n|---|---|\n| get | 138_773 |",
        "138_773",
        "| bench | keys |\n|---|---|\n| get | 138_773 |",
    ),
    (
        "time per call, with its ratio",
        "| fn | run time [us/fn] |\n|---|---|\n| Go | 95 (2.2x) |",
        "95",
        "| fn | binary size [KiB] |\n|---|---|\n| Go | 95 |",
    ),
    (
        "a range with an ellipsis",
        "| Command | Min…Max [ms] |\n|---|---|\n| perl | 11090.1…11559.1 |",
        "11090.1…11559.1",
        "| Command | Min…Max [rows] |\n|---|---|\n| perl | 11090.1…11559.1 |",
    ),
    (
        "time per operation in the header",
        "Format | ns/op | bytes/op\n---|---|---\nJson | 2212 | 150",
        "2212",
        "Format | bytes/op | allocs/op\n---|---|---\nJson | 2212 | 150",
    ),
    (
        "a before → after pair under a header's unit",
        "| 항목 | hwp sync ms |\n|---|---|\n| 줄바꿈 | 98.6 → 47.3 |",
        "98.6 → 47.3",
        "| 항목 | hwp sync 회 |\n|---|---|\n| 줄바꿈 | 98.6 → 47.3 |",
    ),
    (
        "a European decimal number",
        "| Framework | JSON RPS |\n|---|---|\n| Axum | 100.620,33 |",
        "100.620,33",
        "| Framework | JSON size |\n|---|---|\n| Axum | 100.620,33 |",
    ),
    (
        "a list of runs and a range",
        "| Measurement | Samples (s) | Range (s) |\n|---|---|---|\n| Clean build | 35.6, 35.2, 36.0 | 35.2 to 36.0 |",
        "35.6, 35.2, 36.0",
        "| Measurement | Samples | Range |\n|---|---|---|\n| Clean build | 35.6, 35.2, 36.0 | 35.2 to 36.0 |",
    ),
    (
        "messages per second, and statistics beside a unit column",
        "| Date | Consumer msg/s | Min | Max |\n|---|---|---|---|\n| Mar 15 | 401,373 | 390,000 | 410,000 |",
        "390,000",
        "| Date | Consumer msgs | Min | Max |\n|---|---|---|---|\n| Mar 15 | 401,373 | 390,000 | 410,000 |",
    ),
    (
        "operations per second",
        "| Type | Ops/sec | Hits/sec |\n|---|---|---|\n| Gets | 56834.37 | 120.5 |",
        "56834.37",
        "| Type | Ops | Hits |\n|---|---|---|\n| Gets | 56834 | 120 |",
    ),
    (
        "a device's compute or bandwidth",
        "| GPU | BF16 TFLOPS | Memory BW (TB/s) |\n|---|---|---|\n| L40S | 362 | 0.86 |",
        "362",
        "| GPU | Memory (GB) | TDP (W) |\n|---|---|---|\n| L40S | 48 | 350 |",
    ),
    (
        "a column of rates",
        "| model | decode (t/s) |\n|---|---|\n| q4 | 52.5 |",
        "52.5",
        "| model | weights (GB) |\n|---|---|\n| q4 | 52.5 |",
    ),
    (
        "a column of goals",
        "| model | decode (t/s) |\n|---|---|\n| q4 | 31.2 |",
        "31.2",
        "| model | goal decode (t/s) |\n|---|---|\n| q4 | 31.2 |",
    ),
)

EXAMPLES_FR152 = (
    (
        "decorated cell",
        "| 응답 시간 | 300ms | 90ms | 🚀 70% | 2025-01 |",
        "70%",
        "| 메모리 | 3GB | 1GB | 🚀 66% | 2025-01 |",
    ),
)

EXAMPLES_FR153 = (
    (
        "a unit column's unit, not the counts and parameters beside it",
        "| Benchmark | Mode | Samples | Score | Unit | Param: size |\n|---|---|---|---|---|---|\n| hashMap | avgt | 5 | 151.39 | us/op | 10000 |",
        "151.39",
        "| Benchmark | Mode | Threads | Samples | Unit | Param: size |\n|---|---|---|---|---|---|\n| hashMap | avgt | 1 | 5 | us/op | 10000 |",
    ),
    (
        "a label naming a duration is not a unit",
        "| Test | Command | Value |\n|---|---|---|\n| latency (ms) | PUBLISH | 1.2 |",
        "1.2",
        "| Test | Command | Count |\n|---|---|---|\n| Ping every 60 seconds | PUBLISH | 1 |",
    ),
    (
        "a unit column",
        "| Metric | Task | Value | Unit |\n|---|---|---|---|\n| Total merge time | | 3.06 | min |",
        "3.06",
        "| Metric | Task | Value | Unit |\n|---|---|---|---|\n| Segment count | | 3.06 | count |",
    ),
    (
        "a rate unit as the label, in emphasis",
        "| Stat | 50 | 99 |\n|---|---|---|\n| **Req/Sec** | 6405.70 | 8024.80 |",
        "6405.70",
        "| Stat | 50 | 99 |\n|---|---|---|\n| **Requests** | 6405 | 8024 |",
    ),
    (
        "thousands",
        "| | Dragonfly | Redis 6 |\n|---|---|---|\n| Avg SET qps | 131K | 100K |",
        "131",
        "| | Dragonfly | Redis 6 |\n|---|---|---|\n| Avg SET keys | 131K | 100K |",
    ),
    (
        "a row labelled by its unit",
        "| metric | a | b |\n|---|---|---|\n| p50 latency (ms) | 412.5 | 398.0 |",
        "398.0",
        "| metric | a | b |\n|---|---|---|\n| weights (GB) | 412.5 | 398.0 |",
    ),
)

EXAMPLES_FR154 = (
    (
        "a heading names the unit",
        "### Latency (ms)\n| model | p50 | p99 |\n|---|---|---|\n| a | 12 | 30 |",
        "30",
        "### Memory (MB)\n| model | p50 | p99 |\n|---|---|---|\n| a | 12 | 30 |",
    ),
    (
        "a note before the table names the unit",
        "(unit: Tokens / second)\n\n| engine | int4 |\n|---|---|\n| vllm | 77 |",
        "77",
        "(unit: MB)\n\n| engine | int4 |\n|---|---|\n| vllm | 77 |",
    ),
    (
        "not a row of lengths or counts",
        "## Latency (ms)\n\n| model | a |\n|---|---|\n| bert | 110 |",
        "110",
        "## Latency (ms)\n\n| model | a |\n|---|---|\n| query length | 110 |",
    ),
    (
        "a rate named in the caption, not a count's column",
        "Results in operations per second:\n\n| fixture | files | after |\n|---|---|---|\n| twitter | 12 | 4463 |",
        "4463",
        "Results in operations per second:\n\n| fixture | files |\n|---|---|\n| twitter | 12 |",
    ),
)

EXAMPLES_FR157 = (
    ("a before/after row's change", "| 서버 응답 시간 | 120ms | 25ms | 79% |", "79%", "| 서버 메모리 | 120MB | 25MB | 79% |"),
    ("with a decrease mark", "| P95 latency | 520ms | 310ms | 40% ↓ |", "40%", "| P95 latency | 520 | 310 | 40% ↓ |"),
    (
        "a column of changes that is not the last",
        "| Metric | Before | After | Diff % | Diff abs. |\n|---|---|---|---|---|\n| FCP (p90) | 422.79 ms | 425.75 ms | 0.70% | 2.96 ms |",
        "0.70%",
        "| Metric | Before | After | Diff % | Diff abs. |\n|---|---|---|---|---|\n| RSS (p90) | 422.79 MB | 425.75 MB | 0.70% | 2.96 MB |",
    ),
    (
        "the header gives the unit of the two runs",
        "| search_l | QPS (main) | QPS (PR) | Change |\n|---|---|---|---|\n| 100 | 23,420 | 25,774 | +10.1% |",
        "10.1%",
        "| search_l | Recall (main) | Recall (PR) | Change |\n|---|---|---|---|\n| 100 | 0.5552 | 0.5594 | +0.0042 |",
    ),
)

EXAMPLES_FR155 = (
    ("a tenth percentile and the real-time factor", "| cohort | n | p10 | RTF |\n|---|---|---|---|\n| cold | 10 | 1289 | 0.08 |",
     "1289", "| cohort | n | top10 | WER |\n|---|---|---|---|\n| cold | 10 | 1289 | 0.08 |"),
    ("Go's time per operation", "| Library | time/op | allocs/op |\n|---|---|---|\n| encoding/json | 1,300 | 9 |", "1,300",
     "| Library | bytes/op | allocs/op |\n|---|---|---|\n| encoding/json | 1,300 | 9 |"),
    ("an average or total time, not a share of it", "| Item | avg time | runs |\n|---|---|---|\n| codegen | 35.855 | 256 |",
     "35.855", "| Item | % of total time | runs |\n|---|---|---|\n| codegen | 35.855 | 256 |"),
    ("a statistic after a percentile's column", "|Ops|99% percentile|AVG|\n|---|---|---|\n|1m|25.91|3.75|", "3.75",
     "|Ops|Payload Size|AVG|\n|---|---|---|\n|1m|1024|3.75|"),
    ("a numbered run's column", "| 항목 | 1회 | 2회 |\n|---|---|---|\n| 인덱스 생성 | 89.43 | 144.42 |", "89.43",
     "| 항목 | 1등 | 2등 |\n|---|---|---|\n| 인덱스 생성 | 89.43 | 144.42 |"),
    ("a label's metric, no cell with a unit of its own", "| Metric | Run |\n|---|---|\n| Runtime | 2 |", "2",
     "| Component | Memory |\n|---|---|\n| Gateway Runtime | 2 GB |"),
    (
        "llama.cpp's pp and tg by device",
        "| Model | CPU pp | GPU tg |\n|---|---|---|\n| q4_0 | 99.9 | 28.1 |",
        "99.9",
        "| Model | CPU cores | GPU layers |\n|---|---|---|\n| q4_0 | 99.9 | 28.1 |",
    ),
    (
        "the time a run took, and a start-up column",
        "| Model | Threads | Time taken |\n|---|---|---|\n| 7B | 1 | 37.003 |",
        "37.003",
        "| Model | Threads | Time slot |\n|---|---|---|\n| 7B | 1 | 37.003 |",
    ),
    (
        "the time a kind of work took",
        "| GPU | Model | eval time | prompt eval time |\n|---|---|---|---|\n| A100 | 70B_q4_0 | 547.89 | 456.45 |",
        "547.89",
        "| GPU | Model | eval set | prompt set |\n|---|---|---|---|\n| A100 | 70B_q4_0 | 547 | 456 |",
    ),
    (
        "llama-bench's test as the header",
        "| model | pp512 | tg128 |\n|---|---|---|\n| 7B Q4_0 | 1,234.5 | 52.1 |",
        "52.1",
        "| model | n_prompt | n_gen |\n|---|---|---|\n| 7B Q4_0 | 512 | 128 |",
    ),
    (
        "a percentile of latency",
        "| workload | p50 | p99 |\n|---|---|---|\n| read | 1.16 | 219.02 |",
        "219.02",
        "| workload | p99 speed-up | p99 Δ |\n|---|---|---|\n| read | 1.16 | 219.02 |",
    ),
    (
        "a speed named in Korean",
        "| 모델 | 생성 속도 |\n|---|---|\n| 8B | 41.5 |",
        "41.5",
        "| 모델 | 속도 향상 |\n|---|---|\n| 8B | 41.5 |",
    ),
    (
        "times with and without a change",
        "| Query | Time with PR | Time without PR |\n|---|---|---|\n| q4.sql | 273.849 | 323.799 |",
        "273.849",
        "| Query | Rows with PR | Rows without PR |\n|---|---|---|\n| q4.sql | 273 | 323 |",
    ),
    (
        "a time written as a clock",
        "| Tool | Wall Time |\n|---|---|\n| bwa | 2:40.83 |",
        "2:40.83",
        "| Tool | Started |\n|---|---|\n| bwa | 2:40.83 |",
    ),
    (
        "a row whose label names the metric, not a row describing a setting",
        "| Metric | Mean | Standard deviation |\n|---|---|---|\n| Largest Contentful Paint (LCP) | 2813.26 | 9604.05 |",
        "2813.26",
        "| 설정 항목 | 의미 | 기본값 |\n|---|---|---|\n| 감축 지연 시간 | 노드 증설 후 감축 대상 노드로 모니터링하기 시작까지의 지연 시간 | 10 |",
    ),
)

RULES = (
    Rule(
        "FR151",
        "table-header-unit",
        "A bare number in a table column whose header names a time or rate unit: `| pp512 (t/s) |` over `| 1234.5 |`.",
        (
            "Reads each bare number (emphasis, `~`, ranges and spreads allowed) in a column whose header cell "
            "names a time or rate unit (`ms`, `µs`, `ns`, `ns/op`, `tok/s`, …); a column headed by a target, limit or setting holds targets (FR201), a "
            "column of media lengths nothing."
        ),
        EXAMPLES_FR151,
    ),
    Rule(
        "FR152",
        "table-row-percent",
        "A percentage alone in a table cell of a row of measured times: `| 120 ms | 95 ms | -21% |`.",
        (
            "Reads percentages in their own cell (or with a sign or change word) in a row that holds a measured "
            "time or rate; leaves rows labelled by a non-performance noun and the share of a target reached (`| < "
            "500ms | 150ms | 333% |`)."
        ),
        EXAMPLES_FR152,
        preview=True,
    ),
    Rule(
        "FR153",
        "table-row-label-unit",
        "A bare number in a table row whose label names a time or rate unit: `| p50 latency (ms) | 412.5 | 398.0 |`.",
        (
            "Reads each bare number after the first cell of a row whose label names a time or rate unit (the first "
            "number after the label is FR142's), or whose cell under a `Unit` (`단위`) header does (`| Metric | Task "
            "| Value | Unit |` over `| Total merge time | | 3.06 | min |`, a benchmark report's layout: then only the "
            "three cells before the unit's, but counts such as JMH's `Samples` and `Threads`); a label "
            "naming a target or a setting makes them targets."
        ),
        EXAMPLES_FR153,
    ),
    Rule(
        "FR154",
        "table-caption-unit",
        "A bare number in a table whose heading, caption or note names the unit: `(unit: Tokens / second)`, `### Latency (ms)`.",
        (
            "Reads the bare numbers (not the first column's) of a table whose header names no unit, when one of the two "
            "lines above it or the line after it names a time or rate unit (`unit:`, `**Unit**: ms`, `단위:`, `times in "
            "seconds`, `in operations per second`, `speed in Mb/s`, a heading ending in `(ms)`); leaves columns of "
            "counts, sizes, other figures and targets (`| Params |`, `| Files |`, `| Threads |`, `| Memory |`), rows "
            "labelled so (`| query length |`) and media "
            "lengths, and a caption naming a target or a setting makes them targets. A preview rule until the labelled "
            "batches gave captions (from final82): right 9 times of 9 on the select split with final83 in it (one "
            "table), none on tune, so in the default set."
        ),
        EXAMPLES_FR154,
    ),
    Rule(
        "FR155",
        "table-header-metric",
        "A bare number in a table column whose header names a rate or a latency without a unit: `| pp512 |`, `| p99 |`.",
        (
            "Reads each bare number (not the first column's) in a column whose header cell names a measured rate or "
            "latency and no unit: llama-bench's tests (`pp512`, `tg128`), `T_PP s`, a percentile, `latency`, "
            "`TTFT`, `throughput`, `speed`, `속도`, `처리량`, `응답 시간`, the time a kind of work took (`Wall Time`, "
            "`build time`; there a clock-written `2:40.83` too), and in a row whose label names one with no unit "
            "(`| ttft | 0.2233 | 0.4244 |`, `| Largest Contentful Paint (LCP) | 2813.26 |`; not a row whose cells "
            "describe a setting). Leaves columns of relative speeds, "
            "speed-ups, changes, counts, sizes and scores; a column headed by a target makes them targets."
        ),
        EXAMPLES_FR155,
    ),
    Rule(
        "FR157",
        "table-change-column",
        "A before/after row's change: `| 서버 응답 시간 | 120ms | 25ms | 79% |`, `| P95 | 520ms | 310ms | 40% ↓ |`.",
        (
            "Reads what FR152 reads where the percentage is in a column of changes (`Change`, `Diff %`, `Δ`, "
            "`개선율`), or in the row's last cell right after two cells that each hold a measured time or rate: the "
            "row compares them and the percentage is the change; it also takes such a percentage from the preview "
            "rules that would read it alone (FR124, FR126) where the row's cells carry no units of their own. FR152's "
            "other percentages are as often a share, a utilisation or a success rate beside the times, so it stays "
            "a preview rule."
        ),
        EXAMPLES_FR157,
    ),
)
