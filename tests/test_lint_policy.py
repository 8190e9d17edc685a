"""docs lint, the readings that take more than one sentence: target-vs-result rows, settings listed as targets,
tables whose header gives the unit or says what a column holds. The one-sentence pairs (a claim and a sentence of
the same shape that is not one) are the rules' own examples (factreg/docs/lint/rules/), tested by
tests/test_lint_rules.py.
"""

from __future__ import annotations

from factreg.docs.lint import lint_text


def claims(doc: str) -> list[str]:
    return [f.text for f in lint_text(doc)]


def kinds(doc: str) -> list[tuple[str, str]]:
    return [(f.text, f.kind) for f in lint_text(doc, targets=True)]


def test_target_vs_result_row() -> None:
    # the bound before the result is the target; the share of it reached is not a change; the result is a claim
    assert kinds("| **TTFT** | < 400ms | 310ms | 129% | ✅ 목표 달성 |") == [
        ("400ms", "target"),
        ("310ms", "claim"),
    ]
    # a percentage in a row without a target is the change between the two times
    assert claims("| **TTFT** | 400ms | 310ms | 22% |") == ["400ms", "310ms", "22%"]


def test_settings_and_thresholds_are_targets_when_asked() -> None:
    for doc in (
        "| 세션 만료 | 12초 기본값 |",
        "**Stagger 지연**: 0.4초 (조정 가능)",
        "0.25초(250ms)마다 큐를 비운다",
        "| **처리량** | > 250 req/s | 부하 테스트 |",
        "count requests where p99 latency was above 900 ms",
        "Press and hold the reset key for 8 seconds.",
        "Models stay loaded for 10 minutes after the last request.",
        "| Warmup Duration | 45 s | 기본 설정 |",
        "Wait 10 seconds before retrying.",
        "Run the benchmark for 60 seconds with 8 clients.",
        "run it with --duration 30s --rate 10",
        "Use a 5 s warm-up before measuring.",
        "첫 번째 단계에서는 가상 사용자(VU) 수가 10초에 걸쳐 점차 300명으로 증가한다.",
        "두 번째 단계에서는 사용자 수가 30초 동안 300명에서 10,000명으로 빠르게 증가한다.",
        "대시보드에서 실시간 GPU 사용량 바, 5초 자동 갱신",
        "실시간 검색에 300ms 디바운스를 적용하여 서버 과부하를 예방합니다.",
        "(Cache 미적용, DB Latency 50ms 시뮬레이션)",
    ):
        assert kinds(doc) and all(kind == "target" for _, kind in kinds(doc)), doc


def test_a_table_header_gives_its_unit_to_the_bare_numbers_below_it() -> None:
    # the unit is only in the header row: each bare number below it is a claim; a column of sizes or a target
    # column is not
    doc = (
        "| build | weights (GB) | decode (t/s) | goal latency (ms) | latency (ms) |\n"
        "|---|---:|---:|---:|---:|\n"
        "| q4 | 4.1 | 52.5 | 300 | 212 |\n"
        "| q8 | 7.6 | **31.2** | 300 | 340 ± 12 |\n"
    )
    assert claims(doc) == ["52.5", "212", "31.2", "340 ± 12"]
    assert [t for t, k in kinds(doc) if k == "target"] == ["300", "300"]
    # without the separator row the first line is no header (a ± spread is a claim on its own), and inside a
    # code block it is an example
    assert claims(doc.replace("|---|---:|---:|---:|---:|\n", "")) == ["340 ± 12"]
    assert claims("```\n" + doc + "```\n") == []


def test_a_table_header_names_what_its_column_holds() -> None:
    # A column headed by a target, threshold, limit or lifetime holds targets, whatever the cells say (seen in six
    # batches of real tables: `| Target |`, `| 목표 (1.4.3) |`, `| 알람 임계값 |`, `| TTL |`, `| 권장 타임아웃 |`).
    doc = (
        "| 지표 | 현재 | 목표 (1.4.3) | 알람 임계값 |\n"
        "|---|---|---|---|\n"
        "| **입력 지연** | 50-70ms | 0-20ms | > 200ms |\n"
        "| p99 | 410 ms | 150 ms | 900 ms |\n"
    )
    assert kinds(doc) == [
        ("50-70ms", "claim"),
        ("0-20ms", "target"),
        ("200ms", "target"),
        ("410 ms", "claim"),
        ("150 ms", "target"),
        ("900 ms", "target"),
    ]
    assert kinds("| 캐시 | TTL |\n|---|---|\n| `memberCache` | 5분 |\n") == [("5분", "target")]
    # the same rows under plain headers are measurements, and a column of goals reached holds results
    assert claims(doc.replace("목표 (1.4.3)", "이후").replace("알람 임계값", "비교")) == [
        "50-70ms",
        "0-20ms",
        "200ms",
        "410 ms",
        "150 ms",
        "900 ms",
    ]
    assert claims("| 메트릭 | Before | After | 목표 달성 |\n|---|---|---|---|\n| TPS | 100 req/s | 200 req/s | ✅ (2배) |\n") == [
        "100 req/s",
        "200 req/s",
        "2배",
    ]
    # a queue (대기열) is not a wait (대기): its column holds measured times
    assert claims("| 항목 | DB 락 | 대기열 |\n|---|---|---|\n| P95 응답 시간 | 689ms | ~66s |\n") == ["689ms", "66s"]


def test_ratios_and_percentages_in_a_column_of_other_figures_are_not_claims() -> None:
    # memory, accuracy, size, a share of the total: the column's header says what its percentages measure (seen in
    # seven batches: `| 메모리 사용량 |`, `| Memory use |`, `| 정확도 |`, `| MMLU |`, `| 비중 |`, `| 크기 |`)
    doc = (
        "| 도구 | 메모리 사용량 | 속도 향상 | 정확도 |\n"
        "|---|---|---|---|\n"
        "| Olive | 60-75% 감소 | 2-6배 | 98% |\n"
    )
    assert claims(doc) == ["2-6배"]
    assert claims("| 단계 | 지연 | 비중 |\n|---|---|---|\n| 리랭킹 | 300~800ms | 12% |\n") == ["300~800ms"]
    # the same percentage under a performance header is a claim; a time in such a column keeps its own unit's reading
    assert claims(doc.replace("메모리 사용량", "지연 시간")) == ["60-75%", "2-6배"]
    assert claims("| model | memory | latency |\n|---|---|---|\n| a | 4 GB | 120 ms |\n") == ["120 ms"]


def test_a_camelcase_key_starts_with_its_lower_case_word() -> None:
    # `jitterBufferTarget: 150ms` is a key set to a value; `PyTorch: 5.2 ms` is a product and its measured time
    assert kinds("jitterBufferTarget: 150ms") == [("150ms", "target")]
    assert kinds("set maxWait: 20 ms") == [("20 ms", "target")]
    assert kinds("PyTorch: 5.2 ms/이미지") == [("5.2 ms", "claim")]
    assert kinds("| 프레임워크 | 결과 |\n|---|---|\n| ONNX Runtime | TensorRT: 1.9 ms |\n") == [("1.9 ms", "claim")]


def test_the_bounds_of_a_changes_interval_are_not_changes_of_their_own() -> None:
    # a benchmark report's row: the change and, in brackets, its confidence interval (final58)
    row = "| `benchmarks/lfds/dglm.c` | 17.592 ± 0.197 s | 16.766 ± 0.292 s | ✅ +4.7% [+1.1%, +8.3%] | UNKNOWN |"
    assert claims(row) == ["17.592 ± 0.197 s", "16.766 ± 0.292 s", "4.7%"]
    assert claims("Throughput improved by 4.7% [+1.1%, +8.3%] with the new allocator.") == ["4.7%"]
    # a percentage in brackets that follows no percentage is read as before
    assert claims("Throughput improved by [8%] with the new allocator.") == ["8%"]


def test_a_ratio_beside_two_times_is_a_speed_ratio_but_a_count_in_the_row_label_is_not() -> None:
    # the times' unit is in their headers only (final58): the ratio compares them
    doc = "| Operator | data (ms) | Peer range (ms) | Multiplier range |\n|---|---|---|---|\n| sort | 166.55 | 507.64 – 8036.67 | 3.0× – 48.3× |\n"
    assert [(f.text, f.rule) for f in lint_text(doc)] == [
        ("166.55", "FR151"), ("507.64 – 8036.67", "FR151"), ("3.0×", "FR121"), ("48.3×", "FR121")
    ]
    # `8x` in the row's label counts chips: no speed ratio, whatever the row's other cells hold
    doc = "| Hardware | 16B TFLOP/sec/chip | 32B TFLOP/sec/chip |\n|---|---|---|\n| 8x v5e-256 | 115 | 125 |\n"
    assert "FR121" not in {f.rule for f in lint_text(doc) if f.text == "8x"}


def test_a_row_of_values_outside_a_table_holds_measured_durations_and_their_ratio() -> None:
    # a flattened table's row and a quoted tool row (final58): the label, then values only
    assert [(f.text, f.rule) for f in lint_text("NumPy 설치 5.1초 0.15초 34배")] == [
        ("5.1초", "FR101"), ("0.15초", "FR101"), ("34배", "FR121")
    ]
    assert [f.rule for f in lint_text("time for request:      474us     16.03ms       758us       800us")] == ["FR101"] * 4
    # a tool's aligned row: a size, a time and a rate after a label holding digits of its own (final59)
    assert [(f.text, f.rule) for f in lint_text("blake3 (64MiB)             1.00 GiB    0.060s   17909.1 MB/s")] == [
        ("0.060s", "FR101"), ("17909.1 MB/s", "FR116")
    ]
    # a label naming a setting makes the row a schedule, not a run
    assert [f.kind for f in lint_text("retry backoff 1s 2s 4s", targets=True)] == ["target"] * 3


def test_lines_benchmark_tools_and_request_logs_print() -> None:
    # criterion's spaced microseconds, a web framework's request log, pytest's --durations, benchmark-ips, a label
    # naming tokens per second (final58's misses); none of them was found before
    found = {
        "twitter.json/evil-json  time:   [634.82 us 637.20 us 639.93 us]": [("634.82 us", "FR101"), ("637.20 us", "FR101"),
                                                                         ("639.93 us", "FR101")],
        "Completed 200 OK in 3080ms (Views: 192.8ms | ActiveRecord: 2869.1ms)": [("3080ms", "FR101"), ("192.8ms", "FR101"),
                                                                                 ("2869.1ms", "FR101")],
        "93.09s call     tests/test_variants.py::test_inner_python_loop": [("93.09s", "FR101")],
        "Prism::Translation::Parser:       56.3 i/s - 4.19x  slower": [("56.3 i/s", "FR115"), ("4.19x", "FR121")],
        "Prompt tokens per second: 22.61": [("22.61", "FR145")],
    }
    for line, expected in found.items():
        assert [(f.text, f.rule) for f in lint_text(line)] == expected, line
    # `us` spaced after a number is a pronoun unless a bracket or another microsecond value follows
    assert lint_text("It took 5 us to agree.") == []


def test_a_slowdown_is_a_word_of_speed_and_an_assignment_after_a_ratio_names_a_condition() -> None:
    assert [f.rule for f in lint_text("FYI if we look at the conda-build test suite the slowdown is more like 3-4x.")] == ["FR121"]
    assert [f.rule for f in lint_text("Overall geomean 3.57x in L's favor across 125 comparable ops.")] == ["FR121"]
    # `batch=1` names the condition the ratio spans, not a non-performance figure it measures
    assert [f.rule for f in lint_text("Round-trip throughput climbs ~3.5x from batch=1 to batch=64.")] == ["FR121"]


def test_work_done_in_a_time_and_a_tools_summary_of_rates() -> None:
    # a past verb of work, then `in` and the time (final59's misses)
    assert [f.rule for f in lint_text("Npm had installed all the dependencies in 10.47 seconds.")] == ["FR101"]
    assert [f.rule for f in lint_text("Sync: inserted 200 revs in 0.041 sec (4854.1/sec)")][:1] == ["FR101"]
    # `Min:` and `Max:` on one line summarise the runs: the largest run, not a limit
    line = "Throughput: 189,862.60 ± 6,175.26 rows/s, Min: 180,316.37 rows/s, Max: 200,346.56 rows/s"
    assert [(f.text, f.rule) for f in lint_text(line)][1:] == [("180,316.37 rows/s", "FR115"), ("200,346.56 rows/s", "FR115")]
    assert [f.rule for f in lint_text("Max: 200 rows/s")] != ["FR115"]  # one label alone is no summary


def test_a_ratio_of_speed_in_words() -> None:
    # no digit on the line: searched over the whole text (final59's and the select split's misses)
    found = {
        "It's more than twice as fast as Rome.": ["twice as fast"],
        "This is five times faster than the simplest SATA SSD.": ["five times faster"],
        "Using these tools, we've achieved two to three times better throughput than A100s.": [
            "two to three times better throughput"
        ],
        "The same processing takes about nine or ten times longer.": ["nine or ten times longer"],
    }
    for sentence, expected in found.items():
        assert [(f.text, f.rule) for f in lint_text(sentence)] == [(t, "FR121") for t in expected], sentence
    assert [f.kind for f in lint_text("The goal is to be twice as fast.", targets=True)] == ["target"]
    assert lint_text("If it were twice as fast we would ship it.") == []
    assert lint_text("Sometimes faster is better; two times a day.") == []


def test_korean_requests_per_second() -> None:
    # `요청/초` (final60's miss): items per second, FR114's in a table row
    assert [(f.text, f.rule) for f in lint_text("| **최적화 서버** | **4.87 요청/초** | 10개 |")] == [("4.87 요청/초", "FR114")]


def test_a_korean_bound_reached_is_a_measurement() -> None:
    # `미만 달성`, `미만으로 유지되었습니다` (final60's misses): the bound was met, by a measured time
    assert [f.rule for f in lint_text("P90 응답 시간 1ms 미만 달성")] == ["FR101"]
    assert [(f.text, f.rule) for f in lint_text("9월 올영세일에서 P90이 1ms 미만으로 유지되었습니다.")] == [("1ms", "FR101")]
    # reaching it as the aim is a target
    assert [f.kind for f in lint_text("P90 응답 시간 1ms 미만 달성이 목표", targets=True)] == ["target"]


def test_a_setting_word_is_a_whole_word() -> None:
    # `Amazon Polly` holds `poll`, a setting's word, but is a product's name (final60's table)
    doc = "| Engine | First Token to Speech | Response Time |\n|---|---|---|\n| Amazon Polly | 1090 ms | 1440 ms |\n"
    assert [(f.text, f.kind) for f in lint_text(doc, targets=True)] == [("1090 ms", "claim"), ("1440 ms", "claim")]
    assert [f.kind for f in lint_text("retryDelay: 5s", targets=True)] == ["target"]  # a key's word before a capital
    assert [f.kind for f in lint_text("exponential backoffs from ~512 seconds to 64", targets=True)][:1] == ["target"]


def test_core_web_vitals_name_measured_durations() -> None:
    # INP, FID and TBT beside LCP and FCP (final60's misses)
    line = "Our Core Web Vitals were in the red: LCP at 4.2 seconds, CLS at 0.31, and INP at 340ms."
    assert [(f.text, f.rule) for f in lint_text(line)] == [("4.2 seconds", "FR101"), ("340ms", "FR101")]
    assert [f.rule for f in lint_text("And their First Input Delay (FID) was 285ms.")] == ["FR101"]


def test_a_bound_held_against_a_checked_result_a_soft_limit_and_a_limit_key_are_targets() -> None:
    # the row's later cell is the result, its check mark says it was held against this bound (final58–60's false alarms)
    assert [(f.text, f.kind) for f in lint_text("| Throughput | ≥ 100 RPS | 196 RPS ✅ |", targets=True)] == [
        ("100 RPS", "target"), ("196 RPS", "claim")
    ]
    # no check mark, no word of a target reached: the later cell may be the change, and the bound a current reading
    assert [f.kind for f in lint_text("| 페이지 로드 시간 | < 2s | < 3s | 33% 개선 |", targets=True)][1:2] == ["claim"]
    assert [f.kind for f in lint_text("| 처리량 | 1,000 RPS Soft Limit |", targets=True)] == ["target"]
    assert lint_text("max_execution_time: 300") == []  # a limit's key, not a measured metric
    assert [f.rule for f in lint_text("avg_latency: 30")] == ["FR145"]


def test_a_point_on_a_timeline_is_no_duration() -> None:
    assert lint_text("[T=500ms]  연결 완료 → Pre-roll 전송 시작") == []  # final58's false alarm
    assert lint_text("T+90s: weights are in HBM") == []


def test_a_ratio_column_beside_columns_of_times() -> None:
    doc = (
        "| Codec | Symphonia (ms) | FFmpeg (ms) | Relative (Smaller is Better) |\n|---|---|---|---|\n"
        "| FLAC | 190.9 ± 1.0 | 267.8 ± 1.3 | 0.71 |\n| MP3 | 100.0 | 100.0 | 1.00 |\n"
    )
    # the ratio of the row's times (FR121); the baseline's `1.00` is 1 by definition, no measurement
    assert [(f.text, f.rule) for f in lint_text(doc) if f.rule == "FR121"] == [("0.71", "FR121")]
    # a compressor's `Ratio` is a size's
    doc = "| Compressor | Compression (MB/s) | Ratio |\n|---|---|---|\n| zstd | 510 | 2.88 |\n"
    assert [f.text for f in lint_text(doc)] == ["510"]


def test_a_percentage_under_a_header_of_changes_in_a_row_of_times() -> None:
    doc = "| 버전 | 시간 | 개선율 | 적용 내용 |\n|---|---|---|---|\n| **Phase 1** | 37초 | **27%** | sleep 최적화 |\n"
    assert [(f.text, f.rule) for f in lint_text(doc)] == [("37초", "FR101"), ("27%", "FR157")]
    # a share in a column of shares stays FR152's (a preview rule)
    doc = "| 버전 | 시간 | 비중 |\n|---|---|---|\n| **Phase 1** | 37초 | **27%** |\n"
    assert "FR157" not in [f.rule for f in lint_text(doc)]


def test_a_ratio_under_a_header_of_changes() -> None:
    doc = "| 요청 수 | Spring MVC | Spring WebFlux | 차이 |\n|---|---|---|---|\n| 40,000 | 373.9 | 5,596.2 | 🔺 15배 ↑ |\n"
    assert [(f.text, f.rule) for f in lint_text(doc)] == [("15배", "FR121")]


def test_a_spread_under_a_column_of_memory_or_quality_is_no_claim() -> None:
    doc = (
        "| Model | Prompt tps | Peak Memory (GB) |\n|---|---|---|\n| Qwen3-8B-4bit | 233.59 ± 2.76 | 4.78 ± 0.00 |\n"
    )
    assert [f.text for f in lint_text(doc)] == ["233.59 ± 2.76"]  # final58's false alarm: the memory's spread
    doc = "| Runner | UTMOS | CER |\n|---|---|---|\n| Base | 3.12 ± 0.54 | 0.16 ± 0.14 |\n"
    assert lint_text(doc) == []


def test_a_percent_change_of_a_count_a_success_rate_or_people_time_in_a_row_is_no_default_claim() -> None:
    # final62's false alarms (select split): no time or rate of a system changes in these rows
    docs = (
        "| 항목 | Before | After | 개선율 |\n|---|---|---|---|\n| **YOLO 모델 선택** | 3개 (크기만 다름) | 5개 (용도별 특화) | +67% |\n",
        "| 단계 | 예상 정확도 | 예상 개선 | 누적 개선 |\n|---|---|---|---|\n| Level 4-1 | ~88-92% | +4% | +17-24% |\n",
        "| Framework | Development Time | Maintenance Factor |\n|---|---|---|\n| Flutter | 3.5 months | 32% less time for updates |\n",
        "| 알고리즘 | 성공률 | 학습시간 | 비고 |\n|---|---|---|---|\n| **WSRL** | 100% | 18분 | 빠르게 100% 성공 달성 |\n",
    )
    for doc in docs:
        assert "FR126" not in [f.rule for f in lint_text(doc)], doc
    # a rate of counts is a rate: its row's change stays a claim
    doc = "| 측정 항목 | 전체 로딩 | 비동기 큐 | 개선 효과 |\n|---|---|---|---|\n| 처리량 | 3.2개/분 | 32.3개/분 | 916% ↑ |\n"
    assert "916%" in [f.text for f in lint_text(doc)]


def test_a_process_uptime_is_no_metric_of_work() -> None:
    assert lint_text("uptime_in_seconds:73\n") == []
    assert [f.rule for f in lint_text("http_request_duration_seconds_sum 0.482\n")] == ["FR144"]


def test_a_row_label_naming_a_metric_gives_the_row_its_unit() -> None:
    doc = "| stage | median | p95 |\n|---|---|---|\n| ttfa | 0.2233 | 0.4244 |\n"
    assert [(f.text, f.rule) for f in lint_text(doc)] == [("0.2233", "FR155"), ("0.4244", "FR155")]
    doc = "| | thanks | cargo |\n|---|---|---|\n| speedup | 2.648 | 1.594 |\n"
    assert [(f.text, f.rule) for f in lint_text(doc)] == [("2.648", "FR121"), ("1.594", "FR121")]
    # under a column of goals, the row's figure is a target
    doc = "| 지표 | 현재 | 목표 |\n|---|---|---|\n| 처리량 | 50 | 85 |\n"
    assert [f.text for f in lint_text(doc)] == ["50"]
    # a row describing a setting is no measurement
    doc = "| 항목 | 의미 | 기본값 |\n|---|---|---|\n| 지연 시간 | 노드 증설 후 감축 대상 노드로 모니터링하기 시작까지의 시간 | 10 |\n"
    assert lint_text(doc) == []
