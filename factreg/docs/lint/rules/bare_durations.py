"""Rules of durations no word of measured work stands beside: long ones, bare ones and precise ones (reading:
factreg/docs/lint/context.py, `measured`, and factreg/docs/lint/families.py, `_precise_reading`)."""

from __future__ import annotations

from factreg.docs.lint.rules import Rule

EXAMPLES_FR102 = (
    ("a system's work", "rendering the clip took 3 hours", "3 hours", "we met again after 3 hours"),
    ("ongoing uptime", "서버 재시작에 2시간이 걸렸다", "2시간", "서버가 2시간째 실행 중이다"),
    (
        "person's time",
        "It took the server 2 hours to index the repo.",
        "2 hours",
        "It took me 2 hours to set up CUDA.",
    ),
    ("hours done in", "전체 재색인이 3시간 만에 끝났다", "3시간", "전체 재색인은 3시간 단위로 나눈다"),
    ("cache lifetime", "시트를 읽어 캐시를 만드는 데 1시간(3600초)이 걸렸다.", "1시간", "시트를 읽어 1시간(3600초)짜리 캐시를 재생성하는 로직"),
)

EXAMPLES_FR104 = (
    (
        "a build time before and after",
        "The crate goes from building in 15.1s to building in 7.5s.",
        "7.5s",
        "The crate goes from building in 15 steps to building in 7.5 steps.",
    ),
    ("a time read off a run", "The first request after the restart was 2.3 seconds.", "2.3 seconds",
     "The first request after the restart was 2.3 kilobytes."),
    ("a Korean time read off a run", "다시 돌려 보니 2.4초가 나왔다.", "2.4초", "다시 돌려 보니 2.4초 분량의 음성이 나왔다."),
    ("a percentile read beside its threshold", "✓ 'p(95)<500' p(95)=148.92ms", "148.92ms", "thresholds: 'p(95)<500ms'"),
    ("a mean time with the run's spread next", "SHA256   1.33M (753.33ns) (± 0.91%)    224B/op", "753.33ns",
     "SHA256   1.33M (753.33ns timeout)    224B/op"),
)


EXAMPLES_FR103 = (
    ("a setting named a word after", "On long runs the 60s data-path step was too slow.", "60s", "On long runs the 60s data-path timeout is too tight."),
    ("where a change ended, bounded", "응답 시간: 30초~1분 → <500ms", "500ms", "응답 시간: <500ms"),
    ("length of a voice sample", "The clone came back after 24s.", "24s", "I have a 10s and 24s voice sample."),
    (
        "a recording's sample count",
        "whisper: a.wav, 2418.1 sec end to end",
        "2418.1 sec",
        "whisper: processing 'a.wav' (38688821 samples, 2418.1 sec)",
    ),
    ("a lifetime", "Access tokens are refreshed in 150 ms.", "150 ms", "Access tokens are short-lived (15 minutes)."),
    (
        "reference speech",
        "the embedding is computed in only 2 seconds",
        "2 seconds",
        "the embedding is meaningful with only 2 seconds of reference speech",
    ),
    ("bound with a statistic", "**임베딩 조회**: < 40ms (평균)", "40ms", "**임베딩 조회**: < 40ms"),
    ("bound said to be fast", "**빠른 롤백**: 20초 이내 전환", "20초", "**롤백 전환**: 20초 이내 전환"),
    ("bound after a fact", "벤치마크 결과 변환은 3초 미만으로 끝났음", "3초", "변환은 3초 미만으로 끝나게"),
    (
        "threshold in a condition",
        "the worker answered within 45 seconds",
        "45 seconds",
        "it fails if the worker does not answer within 45 seconds",
    ),
    ("path words", "| 2 | [run.py](../samples/session02/run.py) | 벤치마크 실행 | ~4분 |", "4분", "| 2 | 세션 2 실습 | ~40분 |"),
    ("overlap", "음성 인식은 0.5초에 끝났다", "0.5초", "음성 분할 시 0.5초의 overlap을 둔다"),
    ("wait before a retry", "The reply came after 10 seconds.", "10 seconds", "Wait 10 seconds before retrying."),
    ("setting up", "Indexing is done after 5 minutes.", "5 minutes", "Get started in 5 minutes."),
    ("setting up in Korean", "인덱싱이 5분 안에 끝난다", "5분", "5분 안에 설치를 마칠 수 있습니다."),
    (
        "window of input",
        "Whisper gets through the file in 30 seconds.",
        "30 seconds",
        "Whisper processes audio in 30-second windows.",
    ),
    ("wait for work to finish", "배포 완료 대기 (보통 4-6분)", "4-6분", "배포 전 대기 (4-6분)"),
    (
        "time per token with every",
        "the 13B model produces one token every 40ms",
        "40ms",
        "the agent polls the queue every 40ms",
    ),
    ("step after a delay", "**서버 시작 → 12초 만에 준비 완료**", "12초", "**서버 시작 → 12초 후 → 캐시 준비 완료**"),
    ("setting word in an aside", "연결 불안정(타임아웃)으로 7초 지연이 생겼다.", "7초", "연결 타임아웃으로 7초를 쓴다."),
    (
        "Korean example with a condition",
        "예를 들어 결과를 미리 계산해 두니, 리포트는 3분 안에 떴다.",
        "3분",
        "예를 들어 결과를 미리 계산해 두면, 리포트는 3분 안에 뜬다.",
    ),
    (
        "bound in a sentence about targets",
        "The gateway answered in under 80 ms on the soak test.",
        "80 ms",
        "Our targets are written per route, with p99 under 80 ms for the gateway.",
    ),
    ("Korean rubric verdict label", "측정: 2~4초", "2~4초", "양호: 2~4초"),
    (
        "proposed setting",
        "We measured the reload at 45 seconds.",
        "45 seconds",
        "I suggest we raise the reload window to 45 seconds.",
    ),
    (
        "start period",
        "The container became healthy after a 40-second start.",
        "40-second",
        "Give it a 40-second starting period first.",
    ),
    (
        "limit by its failure",
        "If the cache is cold, the import runs longer than 40 seconds.",
        "40 seconds",
        "If the import takes longer than 40 seconds, the worker is killed.",
    ),
    ("measured key", "ParseTime: 12.5s", "12.5s", "parseTimeout: 12.5s"),
    (
        "delay before an event that is set",
        "After 8 minutes the import was done.",
        "8 minutes",
        "After 8 minutes it is evicted.",
    ),
    (
        "default after a comma",
        "the model answered after 7 minutes",
        "7 minutes",
        "it keeps the model for 7 minutes, its default.",
    ),
    (
        "latency tier",
        "Batch processing (420ms): measured on the old cluster",
        "420ms",
        "Batch processing (420ms+): Appropriate for offline jobs",
    ),
    ("Korean bound with a copula", "그 결과가 바로 30ms 미만의 응답 속도입니다.", "30ms", "단, 달릴 수 있는 시간은 30ms 미만입니다."),
    ("Korean bound with a noun ending", "통합 테스트는 2분 이내로 완료됨", "2분", "통합 테스트는 2분 이내로 완료"),
    ("Korean bound said to be fast", "캐시는 속도가 5ms 이내로 매우 빠르지만 키 목록이 없음", "5ms", "캐시는 속도가 5ms 이내로 유지될 것"),
    (
        "choices of a setting",
        "the export finished after 90, 120 or 240 seconds across three runs",
        "240 seconds",
        "Request timeout, with 90, 120, or 240 seconds.",
    ),
)


RULES = (
    Rule(
        "FR103",
        "bare-duration",
        "A time a system took, with no word of measured work near it: `**첫 응답**: 0.4초`, `the sweep finished in 30s`.",
        (
            "Reads what FR101 reads, where no word of measured work or of a measured figure (`took`, `latency`, "
            "`p95`, `average`, `걸렸`, `소요`, `평균`, `응답 시간`) stands within 40 characters before the number or "
            "25 after it (or in its table's header row), no key of a log line names a measure (`total_time=\"1.49s\"`, "
            "`time=12 ms`), no approximation precedes it in English (`~18 seconds`, `about 4 minutes`, not `~5min or "
            "less`), no `vs` stands beside it (`~5s vs ~300ms`), an English line is not a label and its time (`- npm install: 6 minutes`, not `timeout: 30s`) "
            "and its table row is not a row of times (two or more cells holding only a duration, no bound "
            "among them): all those are FR101's; or where a bound, goal or estimate is beside it (`< 500ms`, "
            "`up to 5 minutes`, `최대 60초`, `예상: 60초`) or the line speaks of goals, examples or assumptions. On the "
            "labelled real sentences such durations are as often settings, media lengths, limits and people's time "
            "as measurements, so the rule is a preview rule."
        ),
        EXAMPLES_FR103,
        preview=True,
    ),
    Rule(
        "FR104",
        "precise-duration",
        "FR103's time written to a decimal beside another time or a verb of what happened: `from 15.1s to 7.5s`.",
        (
            "Reads what FR103 reads, on a prose line (not a table row), where the figure is written to a decimal "
            "(`7.5s`, `2.3 seconds`, `1.2초`) and, on an English line, the line holds another duration or a verb of "
            "what happened (`took`, `was`, `dropped`, `went`, `finished`), on a Korean line a verb in the past "
            "(`걸렸다`, `줄었다`, `측정했다`) and no word of a goal, bound, setting or length (`목표`, `이하`, `설정`, "
            "`길이`): a figure read off a run, not a setting or an estimate, which are mostly written round. Not in "
            "a line of availability levels, a rubric, a recording's length or targets, nor right after a bound. "
            "Also a time right after a percentile's label, on any prose line (k6's `✓ 'p(95)<500' p(95)=148.92ms`, "
            "`P95: 419ms (목표 <200ms)`): the percentile read, beside the goal it is held to; and a mean time in "
            "brackets with the run's spread next (Crystal's Benchmark.ips: `1.33M (753.33ns) (± 0.91%)`). "
            "Split from FR103 by this context, it is in the default set."
        ),
        EXAMPLES_FR104,
    ),
    Rule(
        "FR102",
        "long-duration",
        "Hours and days of work a system did: `a training run takes 2 hours`, `2시간이 소요`.",
        (
            "Reads hours and days (not hours written with minutes, `2h 3m`: FR101's) only with work done by a system "
            "nearby (`takes`, `소요`, `build`, `training`): "
            "hours and days are more often people's time, schedules and uptime, which it leaves. A preview rule "
            "since final33 joined the select split (precision 0.92 there: build timeouts and budgets)."
        ),
        EXAMPLES_FR102,
        preview=True,
    ),
)
