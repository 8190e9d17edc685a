"""Rules of durations: times of work a system did (reading: factreg/docs/lint/durations.py)."""

from __future__ import annotations

from factreg.docs.lint.rules import Rule

EXAMPLES_FR101 = (
    ("default value", "캐시 조회는 12초 걸렸다", "12초", "| 세션 만료 | 12초 기본값 |"),
    ("adjustable value", "**첫 응답**: 0.4초 (측정값)", "0.4초", "**Stagger 지연**: 0.4초 (조정 가능)"),
    ("period after an equivalent", "0.25초(250ms) 만에 첫 토큰이 나왔다", "0.25초", "0.25초(250ms)마다 큐를 비운다"),
    ("time people spend", "인덱스 재구성에 20분 걸렸다", "20분", "처음에 20분 더 쓰는 편이 낫다"),
    ("time to recover, people's", "- **Failover:** 18 minutes on average", "18 minutes", "- **MTTR:** 18 minutes on average"),
    (
        "minutes of people's work",
        "the import takes 25 minutes",
        "25 minutes",
        "it took 25 minutes of manual configuration",
    ),
    ("quota per month", "| 음성 변환 | 90분 걸림 |", "90분", "| 무료 플랜 | 월 90분 |"),
    (
        "threshold in a filter",
        "p99 latency was 900 ms on the busiest day",
        "900 ms",
        "count requests where p99 latency was above 900 ms",
    ),
    (
        "kept loaded",
        "Models load in 10 minutes after the first request.",
        "10 minutes",
        "Models stay loaded for 10 minutes after the last request.",
    ),
    ("holding a button", "The reset takes 8 seconds.", "8 seconds", "Press and hold the reset key for 8 seconds."),
    (
        "length of an input",
        "Files are transcribed in 40 seconds.",
        "40 seconds",
        "Files longer than 40 seconds are split.",
    ),
    (
        "video length at a frame rate",
        "Generating the video took 95 s at 30 fps output.",
        "95 s",
        "195 frames give ≈ 6.5 s at 30 fps in the exported video.",
    ),
    (
        "video length as an adjective",
        "| Wan-T2V | a 12-second render of the video |",
        "12-second",
        "| Wan-T2V | 12 second Text-to-Video model |",
    ),
    ("setting row", "| Warmup Duration | 45 s | run 3 |", "45 s", "| Warmup Duration | 45 s | 기본 설정 |"),
    ("debounce", "**입력 응답**: 250ms", "250ms", "**디바운스**: 250ms 지연으로 입력 묶기"),
    ("length of a recording", "음성 인식은 10초 만에 끝났다", "10초", "10초 길이의 음성 파일을 준비하세요."),
    ("media said long", "Encoding the video takes 2 minutes.", "2 minutes", "The video is 2 minutes long."),
    (
        "media episode",
        "Transcribing took 10 minutes on the laptop.",
        "10 minutes",
        "For a 10-minute podcast, expect a 10 MB file.",
    ),
    ("recording limit", "녹음 파일 변환은 30초 걸렸다", "30초", "최대 30초까지 녹음할 수 있습니다."),
    (
        "test length",
        "The benchmark took 60 seconds.",
        "60 seconds",
        "Run the benchmark for 60 seconds with 8 clients.",
    ),
    ("test length in Korean", "벤치마크 한 번에 60초가 걸렸다", "60초", "벤치마크를 60초 동안 실행한다"),
    ("command-line option", "the sweep finished in 30s", "30s", "run it with --duration 30s --rate 10"),
    ("warm-up", "Use a 5 s prefill before measuring.", "5 s", "Use a 5 s warm-up before measuring."),
    (
        "work beside a setting word",
        "The cron job runs at 02:00 and takes 5 minutes.",
        "5 minutes",
        "The cron job runs every 5 minutes.",
    ),
    ("delay before closing", "알림 전송에 3초가 걸렸다", "3초", "알림 창은 3초 후 자동으로 닫힘"),
    ("validity period", "토큰 발급 응답: 15ms", "15ms", "토큰 유효 기간: 15분"),
    ("assumption", "응답이 3초 걸렸다", "3초", "예: 응답이 3초 걸린다고 가정하면"),
    ("sleep setting", "**첫 응답**: 5초", "5초", "**슬립**: 5초"),
    (
        "tested for",
        "Tested with 50 concurrent users, p95 was 10 ms.",
        "10 ms",
        "Tested with 50 concurrent users for 10 minutes.",
    ),
    (
        "measure for",
        "Warmup: 10 requests, then decode took 120 s.",
        "120 s",
        "Warmup: 10 requests, then measure for 120 s.",
    ),
    ("cache for", "Cached responses return in 60 ms.", "60 ms", "Cache responses for 60 seconds."),
    (
        "worked example of an answer",
        "The answer took about 4 seconds on our server.",
        "4 seconds",
        "A 400-token answer takes about 4 seconds at that rate.",
    ),
    ("indefinite server in Korean", "우리 서버의 P95 지연은 9초였다.", "9초", "어떤 서버의 P95 지연이 9초라고 하자."),
    (
        "tolerance and perception",
        "Most requests completed in 700ms in the soak test.",
        "700ms",
        "Most chat users tolerate 700ms delays.",
    ),
    (
        "requirement with shall",
        "TTFT was 2 seconds for 95% of requests.",
        "2 seconds",
        "TTFT shall be 2 seconds for 95% of requests.",
    ),
    (
        "feature request",
        "Feature: streaming mode (measured 150ms TTFT)",
        "150ms",
        "Feature Request: streaming mode with TTFT (<150ms)",
    ),
    ("Korean requirement and perception", "음성 응답은 평균 1.5초가 걸렸다.", "1.5초", "음성 응답은 1.5초 이내여야 한다."),
    ("Korean perception threshold", "첫 토큰까지 700ms가 걸렸다.", "700ms", "첫 토큰까지 700ms면 빠르다는 느낌이 난다."),
    (
        "idle time",
        "The model finished loading in 8 minutes.",
        "8 minutes",
        "Idle models are dropped after 8 minutes of inactivity.",
    ),
    ("idle time in Korean", "캐시 재구성은 20분 걸렸다.", "20분", "캐시는 20분 이상 비활성이면 비운다."),
    (
        "minimum value",
        "The scan finished in 15 seconds, the index in 40 seconds.",
        "15 seconds",
        "Default value is 40 seconds, minimum value is 15 seconds.",
    ),
    (
        "window named by a duration",
        "The run finished in 600 seconds.",
        "600 seconds",
        "Only requests inside the 600-second sending window count.",
    ),
    ("Korean threshold with 넘기면", "요약 응답이 4초가 걸렸다.", "4초", "요약 응답이 4초를 넘기면 사용자가 떠난다."),
    ("value changed", "캐시 적용 후 조회가 8초에서 2초로 단축되었다.", "8초", "조회 제한을 8초에서 20초로 변경해 주세요."),
    ("statistic before a wait", "메일 발송: 평균 6초 (SMTP 대기)", "6초", "메일 발송: 6초 (SMTP 대기)"),
    ("film length", "렌더링은 2시간 15분 걸렸다.", "15분", "2시간 15분짜리 영화를 봤다."),
    (
        "audio length at a sample rate",
        "transcribed in 6.5s on the CPU",
        "6.5s",
        "trimmed to 6.5s @ 16kHz for the test",
    ),
    ("recording length label", "transcription time: 3.2 s", "3.2 s", "recording length: 3.2 s"),
    ("Korean illustration", "새 캐시 덕분에 조회는 평균 40ms로 끝난다", "40ms", "이론적으로 조회는 평균 40ms로 끝날 수 있다"),
    ("Korean definition", "p90 조회 지연은 40ms였다.", "40ms", "p90=40ms이면 요청의 90%가 40ms 안에 끝났다는 의미"),
    (
        "bound in an example",
        "The gateway answered (p99 of 80 ms) on the soak test.",
        "80 ms",
        "Pick a bound (e.g., p99 < 80 ms) per route.",
    ),
    ("Korean aim at the sentence end", "검색은 1.5초, 정렬은 0.4초 걸렸다.", "1.5초", "검색은 1.5초, 정렬은 0.4초 안쪽으로 맞추는 것이 목표입니다."),
    ("Korean criterion", "사내 포털의 응답 시간은 4초였다.", "4초", "사내 포털은 4초의 응답 시간을 기준으로 한다."),
    ("Korean perception", "사내 포털의 첫 화면은 300밀리초 만에 떴다.", "300밀리초", "300밀리초의 공백만으로도 대화가 어색해진다."),
    ("Korean check of a capability", "각 요청은 150ms 안에 응답했다", "150ms", "각 요청이 150ms 안에 응답할 수 있는지 확인"),
    ("setting key after a comma", "### users: 50, elapsed: 7분", "7분", "### users: 50, duration: 7분"),
    (
        "changed setting",
        "chore: the reload took 90s after the upgrade",
        "90s",
        "chore: raise reload grace from 30s to 90s",
    ),
    ("value set at", "The upload finished in 45 seconds.", "45 seconds", "The upload limit is set at 45 seconds."),
    ("load plateau", "부하 테스트: 200 VU, 응답 지연 12분 누적", "12분", "부하 테스트: 200 VU까지 증가, 12분 플래토, 감소"),
    ("Korean people waiting", "빌드는 하루 총 90분 걸렸다", "90분", "하루 총 90분을 빌드를 기다리는 데 쓴다"),
    ("duration after a word and a colon", "Load:12.5s, Decode:3.1s", "12.5s", "Clock 10:12.5"),
    (
        "duration before a failure",
        "The import takes 8 minutes per request on the old disk.",
        "8 minutes",
        "The import may take up to 8 minutes per request before failing.",
    ),
    ("Korean imperative", "저장 요청이 700ms 걸렸다", "700ms", "저장 요청은 700ms 걸리니 로딩 표시를 보여주세요."),
    ("Korean general relation", "인덱스 추가로 조회가 3초 단축됐다", "3초", "조회 3초 단축이 전환율 향상으로 이어진다."),
    ("Korean prohibition", "업로드는 45초가 걸렸다", "45초", "업로드는 45초를 초과할 수 없다."),
    ("Korean obligation after a verb stem", "통합 빌드가 25분 안쪽에서 끝났다", "25분", "통합 빌드는 25분 안쪽에서 끝나야 한다."),
    ("Korean list in a condition", "로딩이 4초, 9초로 늘어났다", "4초", "로딩이 4초, 9초, 심지어 20초까지 늘어나면 다들 떠난다."),
    ("example label", "개선 후 응답은 평균 210ms였다", "210ms", "예시: (개선 전: 평균 640ms → 개선 후: 평균 210ms)"),
    ("Korean default", "워커 시작에 45초 걸렸다", "45초", "디폴트 45초"),
    ("validity lifetime", "토큰 발급 (평균 12분 걸림)", "12분", "토큰 발급 (Redis 12분 유효)"),
    ("fixed cool-down", "상태 전환에 3초 걸렸다", "3초", "3초 고정 쿨다운이 상태 전환을 막음"),
    (
        "sub- bound in a sentence about targets",
        "ranking answers in 80ms p95 on the new index",
        "80ms",
        "Feed ranking systems enforce tight SLOs, commonly requiring sub-80ms p95 end to end.",
    ),
    (
        "aims",
        "the p95 latency was 2 to 3 seconds for short answers",
        "2 to 3 seconds",
        "the p95 latency aims for 2 to 3 seconds for short answers",
    ),
    (
        "indefinite team or user",
        "Our team measured an average response time of 640 milliseconds.",
        "640 milliseconds",
        "A team reports an average response time of 640 milliseconds and calls it fast.",
    ),
    (
        "options of a setting",
        "the request took 240 seconds",
        "240 seconds",
        "change this timeout to e.g. 120 or 240 seconds",
    ),
    ("try a value", "the warm-up took 90 seconds", "90 seconds", "Please try 90 seconds with your model."),
    ("timeline offset", "Loading took 45s: weights are in HBM.", "45s", "T+45s: weights are in HBM."),
    (
        "media segments",
        "each chunk is transcribed in 12 seconds",
        "12 seconds",
        "the audio is chunked into 12 second segments",
    ),
    (
        "people answering one another",
        "Voice agent response: ~350ms average",
        "350ms",
        "Human conversation response: ~350ms average",
    ),
    (
        "configuration key in the sentence",
        "Model load took 140s for 7B models on the old disk.",
        "140s",
        "Adjust initialDelaySeconds by model size: 140s for 7B models.",
    ),
    ("load test configuration", "성능테스트 결과 평균 응답 45s", "45s", "성능테스트 결과 (vuser 300, duration 45s 기준)"),
    ("perception in an aside", "**첫 응답**: 0-120ms (측정 평균)", "0-120ms", "**즉시 반응**: 0-120ms (사용자가 지연을 느끼지 않음)"),
    ("first seconds as a window", "게임 시작 후 1초 만에 로딩 완료", "1초", "게임 시작 시 첫 1초 FPS 측정"),
    (
        "Korean delay before a set event",
        "브라우저는 약 40초 후 첫 응답을 받았다",
        "40초",
        "브라우저는 약 40초 후 자체적으로 keep-alive 연결을 닫는다.",
    ),
    ("seconds before an event", "변신 모션이 0.5초 걸렸다", "0.5초", "(변신 0.5초 전 시각적 예고 필수)"),
    ("blocks of a duration", "연기된 작업들은 약 50ms 걸려 끝났다.", "50ms", "연기된 작업들은 약 50ms 의 블락으로 나눠 그룹 짓습니다."),
    ("Korean alternatives", "응답이 2초에서 500ms로 단축됐다", "500ms", "응답 시간을 500ms 또는 1초로 단축"),
    (
        "threshold passed, in the past",
        "API의 응답 시간이 24초가 넘는 성능 이슈가 있었습니다.",
        "24초",
        "API의 응답 시간이 24초가 넘는 요청은 큐로 보낸다.",
    ),
    ("Korean supposition with 하자", "요청 하나를 처리하는 데 3초 걸렸다.", "3초", "요청 하나를 처리하는 데 3초 걸린다고 생각하자."),
    ("Korean supposition with 라 하자", "두 서버의 응답 시간은 각각 40ms와 90ms였다.", "40ms", "두 서버의 응답 시간이 각각 40ms와 90ms라 하자."),
    ("Korean supposition with 라고 하면", "빌드 한 번에 20분이 걸렸다.", "20분", "빌드 한 번이 20분이라고 하면 하루 몇 번 돌릴까."),
    ("Korean concession on a number", "평균 응답시간이 15ms였다.", "15ms", "평균 응답시간이 15ms여도 가끔 느린 요청이 생긴다."),
    ("reading-time line", "빌드 3분 소요", "3분", "5 분 소요"),
    (
        "window before a duration",
        "The encode step takes 30s on this machine.",
        "30s",
        "Each time the window advances by 30s, the buffer is flushed.",
    ),
    (
        "example aside",
        "Encoding this file took 10000ms on the old build.",
        "10000ms",
        "If encoding feels slow on a machine (e.g 10000ms), check the build flags.",
    ),
    ("first seconds in Korean", "음성 인식은 처음부터 끝까지 1.2초 걸렸다.", "1.2초", "통화를 시작한 뒤 처음 1.2초 동안 배경 소음을 잰다."),
    (
        "reading time after a word count",
        "The full build took 7 min on the runner.",
        "7 min",
        "2026-05-03 · 1353 words · 7 min · tags: benchmarks",
    ),
)

EXAMPLES_FR102 = (
    ("waiting for a system", "the clip rendered after waiting 3 hours", "3 hours", "we met again after 3 hours"),
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

EXAMPLES_FR103 = (
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
    ("setting up", "Indexing finishes in 5 minutes.", "5 minutes", "Get started in 5 minutes."),
    ("setting up in Korean", "인덱싱이 5분 안에 끝난다", "5분", "5분 안에 설치를 마칠 수 있습니다."),
    (
        "window of input",
        "Whisper processes the file in 30 seconds.",
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
    ("Korean condition holding the number", "인덱스를 추가하면 조회가 40ms로 줄었다.", "40ms", "조회를 40ms로 줄이면 어떨까?"),
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
        "If the cache is cold, the import takes longer than 40 seconds.",
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
        "the model loaded in 7 minutes",
        "7 minutes",
        "it keeps the model for 7 minutes, its default.",
    ),
    ("Korean value changed", "커넥션 획득이 2초에서 5초로 늘었다", "2초", "커넥션 풀 설정을 2초 에서 5초로 수정했다"),
    (
        "latency tier",
        "Batch processing (420ms): measured on the old cluster",
        "420ms",
        "Batch processing (420ms+): Appropriate for offline jobs",
    ),
    ("secondes", "it can take 7 secondes to stop", "7 secondes", "it can take 7 tries to stop"),
    ("Korean bound with a copula", "그 결과가 바로 30ms 미만의 응답 속도입니다.", "30ms", "단, 달릴 수 있는 시간은 30ms 미만입니다."),
    ("Korean bound with a noun ending", "통합 테스트는 2분 이내로 완료됨", "2분", "통합 테스트는 2분 이내로 완료"),
    ("Korean bound said to be fast", "캐시는 속도가 5ms 이내로 매우 빠르지만 키 목록이 없음", "5ms", "캐시는 속도가 5ms 이내로 유지될 것"),
    (
        "choices of a setting",
        "the export finished after 90, 120 or 240 seconds across three runs",
        "240 seconds",
        "Request timeout, with 90, 120, or 240 seconds.",
    ),
    ("people's intervention time", "| 배포 시간 | 14분 | 6분 | **-57%** |", "14분", "| 팀장님 개입 시간 | 14분 | 6분 | **-57%** |"),
)

RULES = (
    Rule(
        "FR101",
        "duration",
        "A time a system took, in prose: `120 ms`, `3.75 s`, `6m58s`, `30~60초`, `2 to 3 seconds`.",
        (
            "Reads a number with a duration unit (`ms`, `µs`, `s`, `sec`, `min`, `6m58s`, `초`, `밀리초`, `분`). "
            "Leaves clock times, dates, schedules (`30분마다`, `5 minutes ago`), lengths of media and of inputs (`a "
            "10-minute podcast`, `10초 길이의 음성`), reading times, uptime, time people spend (`It took me 2 hours`, "
            "`5분 안에 설치`), windows and quotas, product names (`Vega 10s`), and hypothetical or illustrative "
            "numbers (`would`, `예를 들어`, `~라면`); a duration that is a setting, a timeout, a threshold in a "
            "condition or a target is FR201's."
        ),
        EXAMPLES_FR101,
    ),
    Rule(
        "FR103",
        "bare-duration",
        "A time a system took, with no word of measured work near it: `**첫 응답**: 0.4초`, `the sweep finished in 30s`.",
        (
            "Reads what FR101 reads, where no word of measured work or of a measured figure (`took`, `latency`, "
            "`p95`, `average`, `걸렸`, `소요`, `평균`, `응답 시간`) stands within 40 characters before the number or "
            "25 after it (or in its table's header row), or where a bound, goal or estimate is beside it (`< 500ms`, "
            "`up to 5 minutes`, `최대 60초`, `예상: 60초`) or the line speaks of goals, examples or assumptions. On the "
            "labelled real sentences such durations are as often settings, media lengths, limits and people's time "
            "as measurements, so the rule is a preview rule."
        ),
        EXAMPLES_FR103,
        preview=True,
    ),
    Rule(
        "FR102",
        "long-duration",
        "Hours and days of work a system did: `a training run takes 2 hours`, `2시간이 소요`.",
        (
            "Reads hours and days only with work done by a system nearby (`takes`, `소요`, `build`, `training`): "
            "hours and days are more often people's time, schedules and uptime, which it leaves. A preview rule "
            "since final33 joined the select split (precision 0.92 there: build timeouts and budgets)."
        ),
        EXAMPLES_FR102,
        preview=True,
    ),
)
