"""The rule of targets, limits and settings (reading: factreg/docs/lint/targets.py and durations.py)."""

from __future__ import annotations

from factreg.docs.lint.rules import Rule

EXAMPLES_FR201 = (
    ("a row labelled as a target", "| 최종 목표 | 50 TPS | 산출 근거 |", "50 TPS", "| 현재 | 50 TPS | 측정 |"),
    ("a target in the row's label", "| p95 target | 300 ms |", "300 ms", "| p95 | 300 ms |"),
    ("a cache time", "- 캐시 시간 1분으로 감소", "1분", "- 캐시 조회 시간 1분으로 감소"),
    ("a per-query timeout", "the query hit a 120-second per-query timeout", "120-second", "the query took 120 seconds"),
    (
        "set in a change",
        "The build job is set in this PR at 75 minutes.",
        "75 minutes",
        "The build job ran in this PR for 75 minutes.",
    ),
    ("capped", "We capped the request at 30 seconds.", "30 seconds", "The request was served in 30 seconds."),
    (
        "a lifetime",
        "Access tokens are short-lived (15 minutes).",
        "15 minutes",
        "Access tokens are refreshed in 150 ms.",
    ),
    ("default value", "| 세션 만료 | 12초 기본값 |", "12초", "캐시 조회는 12초 걸렸다"),
    ("adjustable value", "**Stagger 지연**: 0.4초 (조정 가능)", "0.4초", "**첫 응답**: 0.4초 (측정값)"),
    ("period after an equivalent", "0.25초(250ms)마다 큐를 비운다", "0.25초", "0.25초(250ms) 만에 첫 토큰이 나왔다"),
    ("set value", "카메라 드라이버에 24fps를 요청한다", "24fps", "웹캠 파이프라인은 24fps로 돌았다"),
    ("timed out after", "The request timed out after 30 seconds.", "30 seconds", "The request finished after 30 seconds."),
    ("a test's configured duration", "Test Duration: 30 seconds", "30 seconds", "Test took: 30 seconds"),
    ("a row of settings", "| **Cron 주기 조정** | 5분 → 10분 |", "5분", "| **배치 처리 시간** | 5분 → 10분 |"),
    ("a test's configured duration in Korean", "* 테스트 시간: 10분", "10분", "* 테스트에 걸린 시간: 10분"),
    (
        "a failure named before the condition",
        'The chat shows "network error" when the LLM takes longer than 60s to answer.',
        "60s",
        "The chat shows the answer when the LLM takes longer than 60s to answer.",
    ),
    (
        "a plan's limits",
        "| Feature | Workers Free | Workers Paid |\n|---|---|---|\n| CPU time | 10 ms | 5 min |",
        "10 ms",
        "| Feature | Workers A | Workers B |\n|---|---|---|\n| CPU time | 10 ms | 5 min |",
    ),
    (
        "a rubric's verdict columns",
        "| Metric | Good | Needs Improvement | Poor |\n|---|---|---|---|\n| LCP | ≤ 2.5s | 2.5s – 4.0s | > 4.0s |",
        "2.5s",
        "| Metric | Before | After | Change |\n|---|---|---|---|\n| LCP | 2.5s | 4.0s | +1.5s |",
    ),
    (
        "a rubric's table",
        "| 등급 | Cold Start | Warm Start |\n|---|---|---|\n| 보통 | 2-4초 | 1-2초 |",
        "2-4초",
        "| 기기 | Cold Start | Warm Start |\n|---|---|---|\n| 보통 | 2-4초 | 1-2초 |",
    ),
    (
        "a table of settings",
        "| 설정 | 값 | 설명 |\n|---|---|---|\n| Duration | 60초 | 테스트 지속 시간 |",
        "60초",
        "| 측정 | 값 | 설명 |\n|---|---|---|\n| Duration | 60초 | 테스트 지속 시간 |",
    ),
    (
        "a column of defaults",
        "| Parameter | Type | Default |\n|---|---|---|\n| import | integer | 30s |",
        "30s",
        "| Parameter | Type | Measured |\n|---|---|---|\n| import | integer | 30s |",
    ),
    ("a condition on what it takes", "한 요청에 평균 0.1초가 소요되면 100 TPS를 처리한다", "0.1초", "한 요청에 평균 0.1초가 소요되어 100 TPS를 처리했다"),
    (
        "an alert rule's table",
        "| 조건 | 지속 시간 | 알림 채널 |\n|---|---|---|\n| p99 Latency > 5초 | 10분 | Slack |",
        "10분",
        "| 구간 | 지속 시간 | 비고 |\n|---|---|---|\n| p99 Latency | 10분 | Slack |",
    ),
    (
        "a row of an alert rule",
        "| alert | condition | for |\n|---|---|---|\n| Critical | >= | 5분 |",
        "5분",
        "| alert | measured | for |\n|---|---|---|\n| Critical | 실측 | 5분 |",
    ),
    (
        "capped value",
        "the demo is capped at 48 fps on a laptop",
        "48 fps",
        "the demo renders at 48 fps on a laptop",
    ),
    ("bound with a statistic", "**임베딩 조회**: < 40ms", "40ms", "**임베딩 조회**: < 40ms (평균)"),
    ("bound said to be fast", "**롤백 전환**: 20초 이내 전환", "20초", "**빠른 롤백**: 20초 이내 전환"),
    ("bound after a fact", "변환은 3초 미만으로 끝나게", "3초", "벤치마크 결과 변환은 3초 미만으로 끝났음"),
    ("lower bound on a rate", "| **처리량** | > 250 req/s | 부하 테스트 |", "250 req/s", "부하 테스트에서 처리량은 250 req/s"),
    ("target words of another clause", "디코딩 시간을 35% 줄이는 것이 목표이다", "35%", "프루닝은 디코딩 시간을 35% 줄이고 메모리 요구 사항도 낮춘다"),
    (
        "threshold in a filter",
        "count requests where p99 latency was above 900 ms",
        "900 ms",
        "p99 latency was 900 ms on the busiest day",
    ),
    (
        "threshold in a condition",
        "it fails if the worker does not answer within 45 seconds",
        "45 seconds",
        "the worker answered within 45 seconds",
    ),
    (
        "kept loaded",
        "Models stay loaded for 10 minutes after the last request.",
        "10 minutes",
        "Models load in 10 minutes after the first request.",
    ),
    ("holding a button", "Press and hold the reset key for 8 seconds.", "8 seconds", "The reset takes 8 seconds."),
    ("setting row", "| Warmup Duration | 45 s | 기본 설정 |", "45 s", "| Warmup Duration | 45 s | run 3 |"),
    ("appropriate value", "실시간 채팅에는 **0.5~1초**가 적절하다", "0.5~1초", "임계값을 적절히 조정해 2.5배 빨라졌다"),
    ("debounce", "**디바운스**: 250ms 지연으로 입력 묶기", "250ms", "**입력 응답**: 250ms"),
    ("overlap", "음성 분할 시 0.5초의 overlap을 둔다", "0.5초", "음성 인식은 0.5초에 끝났다"),
    ("wait before a retry", "Wait 10 seconds before retrying.", "10 seconds", "The reply came after 10 seconds."),
    (
        "test length",
        "Run the benchmark for 60 seconds with 8 clients.",
        "60 seconds",
        "The benchmark took 60 seconds.",
    ),
    ("test length in Korean", "벤치마크를 60초 동안 실행한다", "60초", "벤치마크 한 번에 60초가 걸렸다"),
    ("command-line option", "run it with --duration 30s --rate 10", "30s", "the sweep finished in 30s"),
    ("warm-up", "Use a 5 s warm-up before measuring.", "5 s", "Use a 5 s prefill before measuring."),
    (
        "work beside a setting word",
        "The cron job runs every 5 minutes.",
        "5 minutes",
        "The cron job runs at 02:00 and takes 5 minutes.",
    ),
    ("delay before closing", "알림 창은 3초 후 자동으로 닫힘", "3초", "알림 전송에 3초가 걸렸다"),
    ("validity period", "토큰 유효 기간: 15분", "15분", "토큰 발급 응답: 15ms"),
    ("sleep setting", "**슬립**: 5초", "5초", "**첫 응답**: 5초"),
    (
        "tested for",
        "Tested with 50 concurrent users for 10 minutes.",
        "10 minutes",
        "Tested with 50 concurrent users, p95 was 10 ms.",
    ),
    (
        "measure for",
        "Warmup: 10 requests, then measure for 120 s.",
        "120 s",
        "Warmup: 10 requests, then decode took 120 s.",
    ),
    ("cache for", "Cache responses for 60 seconds.", "60 seconds", "Cached responses return in 60 ms."),
    (
        "tolerance and perception",
        "Most chat users tolerate 700ms delays.",
        "700ms",
        "Most requests completed in 700ms in the soak test.",
    ),
    (
        "requirement with shall",
        "TTFT shall be 2 seconds for 95% of requests.",
        "2 seconds",
        "TTFT was 2 seconds for 95% of requests.",
    ),
    (
        "feature request",
        "Feature Request: streaming mode with TTFT (<150ms)",
        "150ms",
        "Feature: streaming mode (measured 150ms TTFT)",
    ),
    (
        "rubric word after a parenthesis",
        "Decode speed (60+ tokens/sec) feels instant.",
        "60+ tokens/sec",
        "Decode ran at (60+ tokens/sec) on the M2.",
    ),
    ("Korean requirement and perception", "음성 응답은 1.5초 이내여야 한다.", "1.5초", "음성 응답은 평균 1.5초가 걸렸다."),
    ("Korean perception threshold", "첫 토큰까지 700ms면 빠르다는 느낌이 난다.", "700ms", "첫 토큰까지 700ms가 걸렸다."),
    (
        "idle time",
        "Idle models are dropped after 8 minutes of inactivity.",
        "8 minutes",
        "The model finished loading in 8 minutes.",
    ),
    (
        "minimum value",
        "Default value is 40 seconds, minimum value is 15 seconds.",
        "40 seconds",
        "The scan finished in 15 seconds, the index in 40 seconds.",
    ),
    ("Korean threshold with 넘기면", "요약 응답이 4초를 넘기면 사용자가 떠난다.", "4초", "요약 응답이 4초가 걸렸다."),
    ("value changed", "조회 제한을 8초에서 20초로 변경해 주세요.", "8초", "캐시 적용 후 조회가 8초에서 2초로 단축되었다."),
)

RULES = (
    Rule(
        "FR201",
        "target",
        "A target, limit, threshold, budget or setting: `TTFT < 150 ms target`, `timeout 30 s`, `30초 이내로 응답해야`.",
        (
            "Reported only with `--targets`, never fails: targets, SLOs, budgets, requirements, bounds in Korean "
            "notes, thresholds in conditions, rubrics (`Good: < 600ms`), settings (timeouts, intervals, TTLs, "
            "configuration keys, command-line options, a test's configured length) and columns headed by a target "
            "or a limit."
        ),
        EXAMPLES_FR201,
        kind="target",
    ),
)
