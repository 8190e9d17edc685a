"""docs lint, one class of phrasing at a time: for each rule of the policy (factreg/docs/lint.py, module docstring;
tests/data/claims-real/README.md, "Labelling policy"), a sentence it must report as a claim and a sentence of the
same shape it must not. The sentences are written for these tests in the style of the real corpus (project notes,
READMEs, issues, English and Korean); each pair fails without its rule, as the second sentence was reported or the
first missed.
"""

from __future__ import annotations

import pytest

from factreg.docs.lint import lint_text


def claims(doc: str) -> list[str]:
    return [f.text for f in lint_text(doc)]


def kinds(doc: str) -> list[tuple[str, str]]:
    return [(f.text, f.kind) for f in lint_text(doc, targets=True)]


# (class, a claim with the number that must be reported, a sentence of the same class that holds no claim)
PAIRS = [
    # settings: a default, an adjustable value, `마다` after an equivalent in parentheses
    ("default value", "캐시 조회는 12초 걸렸다", "| 세션 만료 | 12초 기본값 |"),
    ("adjustable value", "**첫 응답**: 0.4초 (측정값)", "**Stagger 지연**: 0.4초 (조정 가능)"),
    ("period after an equivalent", "0.25초(250ms) 만에 첫 토큰이 나왔다", "0.25초(250ms)마다 큐를 비운다"),
    # a value asked for or set
    ("set value", "웹캠 파이프라인은 24fps로 돌았다", "카메라 드라이버에 24fps를 요청한다"),
    ("capped value", "the demo renders at 48 fps on a laptop", "the demo is capped at 48 fps on a laptop"),
    # Korean bounds that report results, and bounds that are limits
    ("bound with a statistic", "**임베딩 조회**: < 40ms (평균)", "**임베딩 조회**: < 40ms"),
    ("bound said to be fast", "**빠른 롤백**: 20초 이내 전환", "**롤백 전환**: 20초 이내 전환"),
    ("bound after a fact", "벤치마크 결과 변환은 3초 미만으로 끝났음", "변환은 3초 미만으로 끝나게"),
    ("lower bound on a rate", "부하 테스트에서 처리량은 250 req/s", "| **처리량** | > 250 req/s | 부하 테스트 |"),
    # another clause's target words do not make a number a target
    (
        "target words of another clause",
        "프루닝은 디코딩 시간을 35% 줄이고 메모리 요구 사항도 낮춘다",
        "디코딩 시간을 35% 줄이는 것이 목표이다",
    ),
    # a size after a ratio, work people do faster, time people spend
    (
        "size after a ratio",
        "새 버전은 이전보다 6배 빠른 디코딩을 보여준다",
        "새 버전은 이전보다 6배 큰 컨텍스트를 지원한다",
    ),
    (
        "people's work after a comparative",
        "3x faster decoding with the new kernel",
        "3x faster development with the new SDK",
    ),
    ("time people spend", "인덱스 재구성에 20분 걸렸다", "처음에 20분 더 쓰는 편이 낫다"),
    ("minutes of people's work", "the import takes 25 minutes", "it took 25 minutes of manual configuration"),
    # quotas per period
    ("quota per month", "| 음성 변환 | 90분 걸림 |", "| 무료 플랜 | 월 90분 |"),
    # what a percentage is of
    (
        "metric after a percentage",
        "beats the baseline by 14% on decode throughput",
        "beats the baseline by 14% on human preference",
    ),
    (
        "share of a time",
        "the fused kernel needs only 40% of the old prefill time",
        "only 40% of the old prompts were kept",
    ),
    (
        "share of a speed ceiling",
        "decode reaches 65% of the bandwidth ceiling",
        "memory use reaches 65% of the ceiling",
    ),
    ("aside in parentheses", "a 25% (at batch 8) decode speedup", "a 25% (at batch 8) memory saving"),
    ("count of tokens", "토큰 생성 속도 30% 향상", "요약 단계: 토큰 수 30% 감소 → TTFT 개선"),
    ("shrink as a change", "추론 시간을 25% 축소했다", "썸네일을 25% 축소된 크기로 저장한다"),
    # thresholds in conditions and filters
    (
        "threshold in a filter",
        "p99 latency was 900 ms on the busiest day",
        "count requests where p99 latency was above 900 ms",
    ),
    (
        "threshold in a condition",
        "the worker answered within 45 seconds",
        "it fails if the worker does not answer within 45 seconds",
    ),
    # illustrative examples about an indefinite system
    (
        "example about an indefinite system",
        "For example, our server returns 60 tokens per second.",
        "For example, a server could return 60 tokens per second.",
    ),
    # settings and actions of people
    (
        "kept loaded",
        "Models load in 10 minutes after the first request.",
        "Models stay loaded for 10 minutes after the last request.",
    ),
    ("holding a button", "The reset takes 8 seconds.", "Press and hold the reset key for 8 seconds."),
    ("length of an input", "Files are transcribed in 40 seconds.", "Files longer than 40 seconds are split."),
    # lengths of video: beside a frame rate, or an adjective on a video line
    (
        "video length at a frame rate",
        "Generating the video took 95 s at 30 fps output.",
        "195 frames give ≈ 6.5 s at 30 fps in the exported video.",
    ),
    (
        "video length as an adjective",
        "| Wan-T2V | a 12-second render of the video |",
        "| Wan-T2V | 12 second Text-to-Video model |",
    ),
    # a table row of a parameter said to be a setting
    ("setting row", "| Warmup Duration | 45 s | run 3 |", "| Warmup Duration | 45 s | 기본 설정 |"),
    # people's time and what is not speed, by the nouns around a percentage
    ("downtime and sessions", "응답 시간 40% 감소", "장애 시간 40% 감소"),
    (
        "session time",
        "**평균 응답 시간**: 2.1초 (기존 3.0초 대비 30% 감소)",
        "**평균 세션 시간**: 21분 (기존 16분 대비 30% 증가)",
    ),
    ("development speed", "**추론 속도**: **300% 향상**", "**개발 속도**: **300% 향상**"),
    ("scale factor", "upsampling is 2x faster on the GPU", "upsampling uses a 2x factor"),
    ("enlarged image", "디코더가 1.5x 만큼 빨라졌다", "1.5x 만큼 확대된 이미지를 만든다"),
    # words in a path are not prose
    (
        "path words",
        "| 2 | [run.py](../samples/session02/run.py) | 벤치마크 실행 | ~4분 |",
        "| 2 | 세션 2 실습 | ~40분 |",
    ),
    # decorated percentage cells in a row of measured times
    ("decorated cell", "| 응답 시간 | 300ms | 90ms | 🚀 70% |", "| 메모리 | 3GB | 1GB | 🚀 66% |"),
    # hours while waiting for a system
    ("waiting for a system", "the clip rendered after waiting 3 hours", "we met again after 3 hours"),
    # `적절하다` says what is appropriate; `적절히` is how something was done
    ("appropriate value", "임계값을 적절히 조정해 2.5배 빨라졌다", "실시간 채팅에는 **0.5~1초**가 적절하다"),
    # Korean settings words: debounce, overlap
    ("debounce", "**입력 응답**: 250ms", "**디바운스**: 250ms 지연으로 입력 묶기"),
    ("overlap", "음성 인식은 0.5초에 끝났다", "음성 분할 시 0.5초의 overlap을 둔다"),
    # uptime, lengths of media, delays before a retry
    ("ongoing uptime", "서버 재시작에 2시간이 걸렸다", "서버가 2시간째 실행 중이다"),
    ("length of a recording", "음성 인식은 10초 만에 끝났다", "10초 길이의 음성 파일을 준비하세요."),
    ("media said long", "Encoding the video takes 2 minutes.", "The video is 2 minutes long."),
    ("media episode", "Transcribing took 10 minutes on the laptop.", "For a 10-minute podcast, expect a 10 MB file."),
    ("recording limit", "녹음 파일 변환은 30초 걸렸다", "최대 30초까지 녹음할 수 있습니다."),
    ("wait before a retry", "The reply came after 10 seconds.", "Wait 10 seconds before retrying."),
    # a test's configured length, a command-line option, a warm-up
    ("test length", "The benchmark took 60 seconds.", "Run the benchmark for 60 seconds with 8 clients."),
    ("test length in Korean", "벤치마크 한 번에 60초가 걸렸다", "벤치마크를 60초 동안 실행한다"),
    ("command-line option", "the sweep finished in 30s", "run it with --duration 30s --rate 10"),
    ("warm-up", "Use a 5 s prefill before measuring.", "Use a 5 s warm-up before measuring."),
    # a person's time, setting up
    ("person's time", "It took the server 2 hours to index the repo.", "It took me 2 hours to set up CUDA."),
    ("setting up", "Indexing finishes in 5 minutes.", "Get started in 5 minutes."),
    ("setting up in Korean", "인덱싱이 5분 안에 끝난다", "5분 안에 설치를 마칠 수 있습니다."),
    # a context window is a size
    (
        "context window",
        "Decode is 4x faster than before.",
        "Supports up to 128K tokens of context, 4x more than before.",
    ),
    # the work took it, whatever setting words the line holds
    (
        "work beside a setting word",
        "The cron job runs at 02:00 and takes 5 minutes.",
        "The cron job runs every 5 minutes.",
    ),
    # Korean: items per second, hours of work done `만에`, a delay before closing, a validity period, an assumption,
    # meetings, a sleep
    ("items per second", "처리량이 초당 40건에서 120건으로 늘었다", "처리량 단위는 건이며 40건마다 집계한다"),
    ("hours done in", "전체 재색인이 3시간 만에 끝났다", "전체 재색인은 3시간 단위로 나눈다"),
    ("delay before closing", "알림 전송에 3초가 걸렸다", "알림 창은 3초 후 자동으로 닫힘"),
    ("validity period", "토큰 발급 응답: 15ms", "토큰 유효 기간: 15분"),
    ("assumption", "응답이 3초 걸렸다", "예: 응답이 3초 걸린다고 가정하면"),
    ("meeting time", "빌드 시간 30% 단축", "회의 시간 30% 단축"),
    ("sleep setting", "**첫 응답**: 5초", "**슬립**: 5초"),
    # windows and chunks of input, how long a test measures, how long responses are cached
    ("window of input", "Whisper processes the file in 30 seconds.", "Whisper processes audio in 30-second windows."),
    (
        "tested for",
        "Tested with 50 concurrent users, p95 was 10 ms.",
        "Tested with 50 concurrent users for 10 minutes.",
    ),
    ("measure for", "Warmup: 10 requests, then decode took 120 s.", "Warmup: 10 requests, then measure for 120 s."),
    ("cache for", "Cached responses return in 60 ms.", "Cache responses for 60 seconds."),
    # classes met in the fresh batch of real sentences (each pair written for this test)
    (
        "indefinite system as subject",
        "Our model generates 120 tokens/s on the test box.",
        "A model generating 120 tokens/s writes a page in a few seconds.",
    ),
    (
        "worked example of an answer",
        "The answer took about 4 seconds on our server.",
        "A 400-token answer takes about 4 seconds at that rate.",
    ),
    ("indefinite server in Korean", "우리 서버의 P95 지연은 9초였다.", "어떤 서버의 P95 지연이 9초라고 하자."),
    (
        "quoted example then a condition",
        "새 인덱스로 검색이 3배 빨라졌다.",
        "“검색이 3배 빨라진다”면 품질이 조금 떨어져도 괜찮다.",
    ),
    (
        "aside that is hypothetical",
        "The new build showed 45 tps on the same card (we checked twice).",
        "The new build might show 45 tps on the same card.",
    ),
    (
        "tolerance and perception",
        "Most requests completed in 700ms in the soak test.",
        "Most chat users tolerate 700ms delays.",
    ),
    (
        "requirement with shall",
        "TTFT was 2 seconds for 95% of requests.",
        "TTFT shall be 2 seconds for 95% of requests.",
    ),
    (
        "feature request",
        "Feature: streaming mode (measured 150ms TTFT)",
        "Feature Request: streaming mode with TTFT (<150ms)",
    ),
    (
        "rubric word after a parenthesis",
        "Decode ran at (60+ tokens/sec) on the M2.",
        "Decode speed (60+ tokens/sec) feels instant.",
    ),
    ("Korean requirement and perception", "음성 응답은 평균 1.5초가 걸렸다.", "음성 응답은 1.5초 이내여야 한다."),
    ("Korean perception threshold", "첫 토큰까지 700ms가 걸렸다.", "첫 토큰까지 700ms면 빠르다는 느낌이 난다."),
    ("idle time", "The model finished loading in 8 minutes.", "Idle models are dropped after 8 minutes of inactivity."),
    ("idle time in Korean", "캐시 재구성은 20분 걸렸다.", "캐시는 20분 이상 비활성이면 비운다."),
    (
        "minimum value",
        "The scan finished in 15 seconds, the index in 40 seconds.",
        "Default value is 40 seconds, minimum value is 15 seconds.",
    ),
    (
        "window named by a duration",
        "The run finished in 600 seconds.",
        "Only requests inside the 600-second sending window count.",
    ),
    ("Korean threshold with 넘기면", "요약 응답이 4초가 걸렸다.", "요약 응답이 4초를 넘기면 사용자가 떠난다."),
    ("value changed", "캐시 적용 후 조회가 8초에서 2초로 단축되었다.", "조회 제한을 8초에서 20초로 변경해 주세요."),
    ("Korean productivity and size", "새 엔진은 디코딩이 3배 빠르다.", "새 도구로 생산성이 3배 차이 난다."),
    ("Korean rate words", "| 응답 시간 | -25% |", "| 이탈률 | -25% |"),
    ("price ratio", "Paying for the H100 gave 4x faster decoding.", "It is not worth paying 4x more for the H100."),
    (
        "Korean connective before a target word",
        "캐시로 처리량을 30% 증가시켜 지연을 낮게 유지했다.",
        "캐시로 처리량을 30% 증가시키는 것이 목표이다.",
    ),
    ("lower-case tps", "the patched kernel runs at 31 tps", "the patched kernel runs 31 threads"),
    ("TFlops in mixed case", "the fused kernel reaches 2.4 TFlops", "the fused kernel uses 2.4 GB"),
    ("magnitude before a rate", "the gateway handles 12K req/s at peak", "the gateway holds 12K requests at peak"),
    ("tokens per day", "one node serves 250M tokens/day", "one node stores 250M tokens"),
    (
        "capital X before the performance",
        "the new card has 3X the performance of the old one",
        "the new card has 3X the memory of the old one",
    ),
    ("signed percentage alone", "Vulkan: +7.5%", "Vulkan: 7.5%"),
    ("change of speed without a noun", "The nightly has regressed by 9.2%", "The nightly has grown by 9.2%"),
    ("signed percentage in a cell", "| kernel B | 3,410 | **+18%** |", "| platforms | 4개 | **+18%** |"),
    ("unit in a row label", "| Decode latency (ms) | 31.5 | 29.8 |", "| Decode batch (n) | 31 | 29 |"),
    (
        "Korean rate noun after 초당",
        "초당 토큰 생성 속도가 14토큰이다.",
        "초당 토큰 생성 속도가 중요하다, 14토큰짜리 프롬프트라도.",
    ),
    ("statistic before a wait", "메일 발송: 평균 6초 (SMTP 대기)", "메일 발송: 6초 (SMTP 대기)"),
    ("wait for work to finish", "배포 완료 대기 (보통 4-6분)", "배포 전 대기 (4-6분)"),
    (
        "time per token with every",
        "the 13B model produces one token every 40ms",
        "the agent polls the queue every 40ms",
    ),
    ("issue tag before a change", "[Bug] v2.3 on H100 has regressed by 11%", "[Bug] v2.3 on H100 has grown by 11%"),
    ("film length", "렌더링은 2시간 15분 걸렸다.", "2시간 15분짜리 영화를 봤다."),
    ("audio length at a sample rate", "transcribed in 6.5s on the CPU", "trimmed to 6.5s @ 16kHz for the test"),
    ("recording length label", "transcription time: 3.2 s", "recording length: 3.2 s"),
    ("step after a delay", "**서버 시작 → 12초 만에 준비 완료**", "**서버 시작 → 12초 후 → 캐시 준비 완료**"),
    ("metric name holding its unit", "decode_latency_seconds_sum 0.482", "request_timeout_seconds 30"),
    (
        "long context as a condition",
        "Decode speed on long context is 30% lower than before.",
        "The context window of the new model is 30% lower than before.",
    ),
    ("setting word in an aside", "연결 불안정(타임아웃)으로 7초 지연이 생겼다.", "연결 타임아웃으로 7초를 쓴다."),
    # a Korean condition holding the number is not a report; its outcome is (`쓰면 … 줄었다`)
    ("Korean condition holding the number", "인덱스를 추가하면 조회가 40ms로 줄었다.", "조회를 40ms로 줄이면 어떨까?"),
    ("Korean illustration", "새 캐시 덕분에 조회는 평균 40ms로 끝난다", "이론적으로 조회는 평균 40ms로 끝날 수 있다"),
    ("Korean definition", "p90 조회 지연은 40ms였다.", "p90=40ms이면 요청의 90%가 40ms 안에 끝났다는 의미"),
    (
        "Korean example with a condition",
        "예를 들어 결과를 미리 계산해 두니, 리포트는 3분 안에 떴다.",
        "예를 들어 결과를 미리 계산해 두면, 리포트는 3분 안에 뜬다.",
    ),
    # a bound in a sentence about targets, or inside an example
    (
        "bound in a sentence about targets",
        "The gateway answered in under 80 ms on the soak test.",
        "Our targets are written per route, with p99 under 80 ms for the gateway.",
    ),
    (
        "bound in an example",
        "The gateway answered (p99 of 80 ms) on the soak test.",
        "Pick a bound (e.g., p99 < 80 ms) per route.",
    ),
    (
        "Korean aim at the sentence end",
        "검색은 1.5초, 정렬은 0.4초 걸렸다.",
        "검색은 1.5초, 정렬은 0.4초 안쪽으로 맞추는 것이 목표입니다.",
    ),
    ("Korean criterion", "사내 포털의 응답 시간은 4초였다.", "사내 포털은 4초의 응답 시간을 기준으로 한다."),
    ("Korean perception", "사내 포털의 첫 화면은 300밀리초 만에 떴다.", "300밀리초의 공백만으로도 대화가 어색해진다."),
    ("Korean check of a capability", "각 요청은 150ms 안에 응답했다", "각 요청이 150ms 안에 응답할 수 있는지 확인"),
    (
        "kept as a fact, not a target",
        "정확도는 그대로 유지되며 디코딩 시간은 2배 단축된다.",
        "정확도와 디코딩 시간 2배 단축을 함께 유지해야 한다.",
    ),
    # rubrics, settings and proposals
    ("Korean rubric verdict label", "측정: 2~4초", "양호: 2~4초"),
    ("setting key after a comma", "### users: 50, elapsed: 7분", "### users: 50, duration: 7분"),
    (
        "proposed setting",
        "We measured the reload at 45 seconds.",
        "I suggest we raise the reload window to 45 seconds.",
    ),
    ("changed setting", "chore: the reload took 90s after the upgrade", "chore: raise reload grace from 30s to 90s"),
    ("value set at", "The upload finished in 45 seconds.", "The upload limit is set at 45 seconds."),
    (
        "start period",
        "The container became healthy after a 40-second start.",
        "Give it a 40-second starting period first.",
    ),
    ("load plateau", "부하 테스트: 200 VU, 응답 지연 12분 누적", "부하 테스트: 200 VU까지 증가, 12분 플래토, 감소"),
    # people's rates, people waiting
    (
        "people's reading speed",
        "The 3B model streams about 6 tokens per second.",
        "A typical reading speed is about 6 tokens per second.",
    ),
    ("Korean people waiting", "빌드는 하루 총 90분 걸렸다", "하루 총 90분을 빌드를 기다리는 데 쓴다"),
    # a condition whose outcome is a failure
    (
        "limit by its failure",
        "If the cache is cold, the import takes longer than 40 seconds.",
        "If the import takes longer than 40 seconds, the worker is killed.",
    ),
    # the head noun decides
    (
        "head noun of a compound",
        "이번 릴리스로 65%의 추론 지연 감소를 얻었다.",
        "이번 릴리스로 65%의 추론 비용 절감을 얻었다.",
    ),
    # recall: units and names the rules did not read
    ("per second with a bound", "이 칩은 초당 80개 이상의 토큰을 생성한다.", "이 칩은 80개 이상의 토큰을 생성한다."),
    ("measured key", "ParseTime: 12.5s", "parseTimeout: 12.5s"),
    ("duration after a word and a colon", "Load:12.5s, Decode:3.1s", "Clock 10:12.5"),
    ("real-time factor", "Whisper small ran at RTF 0.31 on the laptop.", "Whisper small ran at 0.31 on the laptop."),
    ("percentage after a change of times", "p50 412ms→301ms(약 27%)", "모델 412MB→301MB(약 27%)"),
    ("Korean FLOPS", "이 보드는 2 페타플롭의 연산 성능을 낸다", "이 보드는 2 페이지의 설명서를 낸다"),
    ("bandwidth in G/s", "The board reads memory at ~120G/s.", "The board has ~120G of memory."),
    ("delay before an event that is set", "After 8 minutes the import was done.", "After 8 minutes it is evicted."),
    (
        "duration before a failure",
        "The import takes 8 minutes per request on the old disk.",
        "The import may take up to 8 minutes per request before failing.",
    ),
    ("Korean traffic and computation", "새 경로로 조회 지연이 3배 줄었다.", "새 경로로 트래픽이 3배 줄었다."),
    # round 5: Korean sentence readings
    (
        "Korean imperative",
        "저장 요청이 700ms 걸렸다",
        "저장 요청은 700ms 걸리니 로딩 표시를 보여주세요.",
    ),
    ("Korean general relation", "인덱스 추가로 조회가 3초 단축됐다", "조회 3초 단축이 전환율 향상으로 이어진다."),
    ("Korean prohibition", "업로드는 45초가 걸렸다", "업로드는 45초를 초과할 수 없다."),
    (
        "Korean obligation after a verb stem",
        "통합 빌드가 25분 안쪽에서 끝났다",
        "통합 빌드는 25분 안쪽에서 끝나야 한다.",
    ),
    (
        "Korean list in a condition",
        "로딩이 4초, 9초로 늘어났다",
        "로딩이 4초, 9초, 심지어 20초까지 늘어나면 다들 떠난다.",
    ),
    ("example label", "개선 후 응답은 평균 210ms였다", "예시: (개선 전: 평균 640ms → 개선 후: 평균 210ms)"),
    ("Korean default", "워커 시작에 45초 걸렸다", "디폴트 45초"),
    ("default after a comma", "the model loaded in 7 minutes", "it keeps the model for 7 minutes, its default."),
    ("validity lifetime", "토큰 발급 (평균 12분 걸림)", "토큰 발급 (Redis 12분 유효)"),
    ("fixed cool-down", "상태 전환에 3초 걸렸다", "3초 고정 쿨다운이 상태 전환을 막음"),
    ("Korean value changed", "커넥션 획득이 2초에서 5초로 늘었다", "커넥션 풀 설정을 2초 에서 5초로 수정했다"),
    # round 5: what a ratio is of
    ("price and frequency", "새 커널은 디코딩이 4배 빠르다", "새 요금제는 입력 토큰 가격이 4배 인하됐다"),
    ("endurance", "새 드라이버로 3배 더 빠르게 추론한다", "배터리 교체 없이 3배 더 오래 버틸 수 있다"),
    ("aside on a size", "**INT4**: 210 tok/s (3배 향상)", "**INT4**: 18GB (3배 절감)"),
    ("aside on a score", "**디코딩**: 41 tok/s (기존 대비 2배)", "**KMMLU**: 71.5% (기존 대비 2배)"),
    ("change of a count", "첫 렌더링 시간 62% 감소 (4.1초 → 1.6초)", "초기 로드 쿼리 62% 감소 (21 → 8)"),
    (
        "quality benchmark",
        "compared to the first model: decode (+31%), prefill (+12%)",
        "compared to the first model: MMLU (+31%), GSM8K (+12%)",
    ),
    (
        "frames as a count",
        "| 렌더링 | 40 ms | 12 ms | **-70%** |",
        "| 프레임 드랍 | 40 frames | 12 frames | **-70%** |",
    ),
    # round 5: English targets, perceptions, examples, settings and lengths
    (
        "sub- bound in a sentence about targets",
        "ranking answers in 80ms p95 on the new index",
        "Feed ranking systems enforce tight SLOs, commonly requiring sub-80ms p95 end to end.",
    ),
    (
        "aims",
        "the p95 latency was 2 to 3 seconds for short answers",
        "the p95 latency aims for 2 to 3 seconds for short answers",
    ),
    ("barrier", "Our build broke the 40 tok/s barrier on a Pi 5", "Try to break the 40 tok/s barrier on a Pi 5"),
    (
        "budget as a product tier",
        "The CPU is 9x slower than the budget 4060 Ti.",
        "The CPU is 9x slower than the budget.",
    ),
    (
        "perception in the clause",
        "A 4x lift on the new kernel, measured on decode.",
        "A 4x lift feels like a different machine.",
    ),
    (
        "latency tier",
        "Batch processing (420ms): measured on the old cluster",
        "Batch processing (420ms+): Appropriate for offline jobs",
    ),
    (
        "indefinite team or user",
        "Our team measured an average response time of 640 milliseconds.",
        "A team reports an average response time of 640 milliseconds and calls it fast.",
    ),
    (
        "if there is",
        "The PR improves decode performance by 3%.",
        "If there is a PR that improves performance by 3% but adds 900 lines, I may reject it.",
    ),
    (
        "example described",
        "The run held 12 requests per second for an hour.",
        "This example demonstrates load testing at 12 requests per second.",
    ),
    ("options of a setting", "the request took 240 seconds", "change this timeout to e.g. 120 or 240 seconds"),
    ("try a value", "the warm-up took 90 seconds", "Please try 90 seconds with your model."),
    ("timeline offset", "Loading took 45s: weights are in HBM.", "T+45s: weights are in HBM."),
    ("media segments", "each chunk is transcribed in 12 seconds", "the audio is chunked into 12 second segments"),
    (
        "people answering one another",
        "Voice agent response: ~350ms average",
        "Human conversation response: ~350ms average",
    ),
    (
        "configuration key in the sentence",
        "Model load took 140s for 7B models on the old disk.",
        "Adjust initialDelaySeconds by model size: 140s for 7B models.",
    ),
    ("load test configuration", "성능테스트 결과 평균 응답 45s", "성능테스트 결과 (vuser 300, duration 45s 기준)"),
    # round 5: units written in other ways, nouns of speed, Korean bounds stated as facts
    (
        "QPS after a number",
        "Benchmark 결과: Actix(210,450 QPS) > Axum(198,300 QPS)",
        "Benchmark 결과: Actix(210,450 connections) > Axum(198,300 connections)",
    ),
    (
        "tokens-per-second",
        "The command runs at about 140 tokens-per-second on an M2.",
        "The command runs about 140 tokens-per-page on an M2.",
    ),
    ("secondes", "it can take 7 secondes to stop", "it can take 7 tries to stop"),
    ("x real time", "batched inference reaches 45x REAL TIME speed", "batched inference runs on 45x RTX boxes"),
    (
        "RTF as a noun of speed",
        "INT8 gives a 25% improvement in RTF on the CPU.",
        "INT8 gives a 25% improvement in WER on the CPU.",
    ),
    (
        "memory bandwidth",
        "the new card has about 40% more memory bandwidth than the old one",
        "the new card has about 40% more memory than the old one",
    ),
    (
        "Korean bound with a copula",
        "그 결과가 바로 30ms 미만의 응답 속도입니다.",
        "단, 달릴 수 있는 시간은 30ms 미만입니다.",
    ),
    ("Korean bound with a noun ending", "통합 테스트는 2분 이내로 완료됨", "통합 테스트는 2분 이내로 완료"),
    (
        "Korean bound said to be fast",
        "캐시는 속도가 5ms 이내로 매우 빠르지만 키 목록이 없음",
        "캐시는 속도가 5ms 이내로 유지될 것",
    ),
    (
        "if you need",
        "we serve search at 8,000 req/s on two nodes",
        "If you need to serve search at 8,000 req/s, tune the defaults.",
    ),
    ("rate key before the number", "> 즉, 현재 한계 tps는 약 780 정도", "> 즉, 현재 tps 서버는 약 780 대"),
    ("bare per second", "처리량도 21.5/sec", "처리량도 21.5/page"),
    (
        "fraction of a speed",
        "I am getting 1/4 the speed on the new driver, why?",
        "I am getting 1/4 the pages on the new driver, why?",
    ),
    # round 5: abbreviations, choices of a setting, guesses asked, expected bounds, perceptions in an aside
    (
        "abbreviation inside a sentence",
        "The PR e.g. improves decode performance by 4% on the old card.",
        "If there is a PR that e.g. improves performance by 4% but adds 800 lines, I may reject it.",
    ),
    (
        "choices of a setting",
        "the export finished after 90, 120 or 240 seconds across three runs",
        "Request timeout, with 90, 120, or 240 seconds.",
    ),
    ("guesses asked as questions", "It ran 3x faster? Yes: 3x on decode.", "How much faster would it run? 3x? 6x?"),
    ("expected bound", "실측 결과: 배치 모드가 3배 이상 빠름", "예상 결과: 배치 모드가 3배 이상 빠름"),
    (
        "perception in an aside",
        "**첫 응답**: 0-120ms (측정 평균)",
        "**즉시 반응**: 0-120ms (사용자가 지연을 느끼지 않음)",
    ),
    # round 5: Korean verb forms, windows, schedules, blocks, caches, people's intervention, alternatives
    (
        "Korean reduces as a verb",
        "캐싱은 긴 프롬프트에서 지연 시간을 최대 70%까지 줄입니다.",
        "캐싱은 긴 프롬프트에서 코드를 최대 70%까지 줄 단위로 나눈다.",
    ),
    (
        "Korean modal of fast",
        "C++이 약간 더 빠를 수 있지만, 실제 프로젝트에서는 차이는 4% 미만입니다.",
        "C++이 약간 더 클 수 있지만, 실제 프로젝트에서는 차이는 4% 미만입니다.",
    ),
    (
        "aware is not perception",
        "메모리 계층을 인식하는 알고리즘으로 어텐션을 3배 빠르게 계산한다",
        "사용자가 지연을 인식하는 시간은 3초 안팎이어야 한다",
    ),
    (
        "Korean formal declarative after a bound",
        "CPU만으로 돌리면 초당 토큰 생성 속도가 8토큰 이하가 나오는 경우가 많습니다.",
        "CPU만으로 돌릴 때 초당 토큰 생성 속도는 8토큰 이하로 맞춰야 합니다.",
    ),
    ("first seconds as a window", "게임 시작 후 1초 만에 로딩 완료", "게임 시작 시 첫 1초 FPS 측정"),
    (
        "Korean delay before a set event",
        "브라우저는 약 40초 후 첫 응답을 받았다",
        "브라우저는 약 40초 후 자체적으로 keep-alive 연결을 닫는다.",
    ),
    ("seconds before an event", "변신 모션이 0.5초 걸렸다", "(변신 0.5초 전 시각적 예고 필수)"),
    (
        "people's intervention time",
        "| 배포 시간 | 14분 | 6분 | **-57%** |",
        "| 팀장님 개입 시간 | 14분 | 6분 | **-57%** |",
    ),
    (
        "blocks of a duration",
        "연기된 작업들은 약 50ms 걸려 끝났다.",
        "연기된 작업들은 약 50ms 의 블락으로 나눠 그룹 짓습니다.",
    ),
    (
        "cache lifetime",
        "시트를 읽어 캐시를 만드는 데 1시간(3600초)이 걸렸다.",
        "시트를 읽어 1시간(3600초)짜리 캐시를 재생성하는 로직",
    ),
    ("Korean alternatives", "응답이 2초에서 500ms로 단축됐다", "응답 시간을 500ms 또는 1초로 단축"),
    # round 5: a threshold that was passed
    (
        "threshold passed, in the past",
        "API의 응답 시간이 24초가 넘는 성능 이슈가 있었습니다.",
        "API의 응답 시간이 24초가 넘는 요청은 큐로 보낸다.",
    ),
    # round 6: classes with examples in two batches or more, each checked batch by batch
    ("bit rate", "iperf3 between the two nodes reports 9.2 Gbits/sec.", "The podcast audio is encoded at 128 kbps."),
    (
        "Korean supposition with 하자",
        "요청 하나를 처리하는 데 3초 걸렸다.",
        "요청 하나를 처리하는 데 3초 걸린다고 생각하자.",
    ),
    (
        "Korean supposition with 라 하자",
        "두 서버의 응답 시간은 각각 40ms와 90ms였다.",
        "두 서버의 응답 시간이 각각 40ms와 90ms라 하자.",
    ),
    (
        "Korean supposition with 라고 하면",
        "빌드 한 번에 20분이 걸렸다.",
        "빌드 한 번이 20분이라고 하면 하루 몇 번 돌릴까.",
    ),
    ("Korean concession on a number", "평균 응답시간이 15ms였다.", "평균 응답시간이 15ms여도 가끔 느린 요청이 생긴다."),
    ("reading-time line", "빌드 3분 소요", "5 분 소요"),
    (
        "window before a duration",
        "The encode step takes 30s on this machine.",
        "Each time the window advances by 30s, the buffer is flushed.",
    ),
    ("load rate beside a test's length", "부하 테스트 결과 처리량은 850 rps였다.", "부하 테스트 (80 rps, 10분간)"),
    (
        "magnitude before a rate key",
        "The proxy sustains 40K qps on one node.",
        "The proxy keeps 40K connections open on one node.",
    ),
    ("change of a counted pair", "응답 시간: 200ms → 50ms (-75%)", "동시 처리 가능 요청: 20 → 80 (+300%)"),
    (
        "aim as the subject",
        "Our build now runs inference on the board at 45fps.",
        "The goal is to be able to run inference on the board at 45fps with camera input.",
    ),
    (
        "modal of another clause",
        "The old build would crash often; it ran at 12 tok/s on the same card.",
        "With a larger batch the old build would run at 12 tok/s on the same card.",
    ),
    (
        "example aside",
        "Encoding this file took 10000ms on the old build.",
        "If encoding feels slow on a machine (e.g 10000ms), check the build flags.",
    ),
    ("past of keeping", "부하 중에도 초당 80토큰을 유지했음", "부하 중에도 초당 80토큰을 유지해야 함"),
    (
        "first seconds in Korean",
        "음성 인식은 처음부터 끝까지 1.2초 걸렸다.",
        "통화를 시작한 뒤 처음 1.2초 동안 배경 소음을 잰다.",
    ),
    (
        "reading time after a word count",
        "The full build took 7 min on the runner.",
        "2026-05-03 · 1353 words · 7 min · tags: benchmarks",
    ),
    (
        "share of a speed",
        "In my test the new kernel reaches only 60% the performance of the old one.",
        "In my test the new kernel uses only 60% of the memory of the old one.",
    ),
]

# The number of each pair's claim that the rule is about (the other sentence has the same kind of number).
REPORTED = {
    "default value": "12초",
    "adjustable value": "0.4초",
    "period after an equivalent": "0.25초",
    "set value": "24fps",
    "capped value": "48 fps",
    "bound with a statistic": "40ms",
    "bound said to be fast": "20초",
    "bound after a fact": "3초",
    "lower bound on a rate": "250 req/s",
    "target words of another clause": "35%",
    "size after a ratio": "6배",
    "people's work after a comparative": "3x faster",
    "time people spend": "20분",
    "minutes of people's work": "25 minutes",
    "quota per month": "90분",
    "metric after a percentage": "14%",
    "share of a time": "40%",
    "share of a speed ceiling": "65%",
    "aside in parentheses": "25%",
    "count of tokens": "30%",
    "shrink as a change": "25%",
    "threshold in a filter": "900 ms",
    "threshold in a condition": "45 seconds",
    "example about an indefinite system": "60 tokens per second",
    "kept loaded": "10 minutes",
    "holding a button": "8 seconds",
    "length of an input": "40 seconds",
    "video length at a frame rate": "95 s",
    "video length as an adjective": "12-second",
    "setting row": "45 s",
    "downtime and sessions": "40%",
    "session time": "30%",
    "development speed": "300%",
    "scale factor": "2x faster",
    "enlarged image": "1.5x",
    "path words": "4분",
    "decorated cell": "70%",
    "waiting for a system": "3 hours",
    "appropriate value": "2.5배",
    "debounce": "250ms",
    "overlap": "0.5초",
    "ongoing uptime": "2시간",
    "length of a recording": "10초",
    "media said long": "2 minutes",
    "media episode": "10 minutes",
    "recording limit": "30초",
    "wait before a retry": "10 seconds",
    "test length": "60 seconds",
    "test length in Korean": "60초",
    "command-line option": "30s",
    "warm-up": "5 s",
    "person's time": "2 hours",
    "setting up": "5 minutes",
    "setting up in Korean": "5분",
    "context window": "4x faster",
    "work beside a setting word": "5 minutes",
    "items per second": "초당 40건",
    "hours done in": "3시간",
    "delay before closing": "3초",
    "validity period": "15ms",
    "assumption": "3초",
    "meeting time": "30%",
    "sleep setting": "5초",
    "window of input": "30 seconds",
    "tested for": "10 ms",
    "measure for": "120 s",
    "cache for": "60 ms",
    "indefinite system as subject": "120 tokens/s",
    "worked example of an answer": "4 seconds",
    "indefinite server in Korean": "9초",
    "quoted example then a condition": "3배",
    "aside that is hypothetical": "45 tps",
    "tolerance and perception": "700ms",
    "requirement with shall": "2 seconds",
    "feature request": "150ms",
    "rubric word after a parenthesis": "60+ tokens/sec",
    "Korean requirement and perception": "1.5초",
    "Korean perception threshold": "700ms",
    "idle time": "8 minutes",
    "idle time in Korean": "20분",
    "minimum value": "15 seconds",
    "window named by a duration": "600 seconds",
    "Korean threshold with 넘기면": "4초",
    "value changed": "8초",
    "Korean productivity and size": "3배",
    "Korean rate words": "25%",
    "price ratio": "4x faster",
    "Korean connective before a target word": "30%",
    "lower-case tps": "31 tps",
    "TFlops in mixed case": "2.4 TFlops",
    "magnitude before a rate": "12K req/s",
    "tokens per day": "250M tokens/day",
    "capital X before the performance": "3X",
    "signed percentage alone": "7.5%",
    "change of speed without a noun": "9.2%",
    "signed percentage in a cell": "18%",
    "unit in a row label": "31.5",
    "Korean rate noun after 초당": "초당 토큰 생성 속도가 14토큰",
    "statistic before a wait": "6초",
    "wait for work to finish": "4-6분",
    "time per token with every": "40ms",
    "issue tag before a change": "11%",
    "film length": "15분",
    "audio length at a sample rate": "6.5s",
    "recording length label": "3.2 s",
    "step after a delay": "12초",
    "metric name holding its unit": "0.482",
    "long context as a condition": "30%",
    "setting word in an aside": "7초",
    "Korean condition holding the number": "40ms",
    "Korean illustration": "40ms",
    "Korean definition": "40ms",
    "Korean example with a condition": "3분",
    "bound in a sentence about targets": "80 ms",
    "bound in an example": "80 ms",
    "Korean aim at the sentence end": "1.5초",
    "Korean criterion": "4초",
    "Korean perception": "300밀리초",
    "Korean check of a capability": "150ms",
    "kept as a fact, not a target": "2배",
    "Korean rubric verdict label": "2~4초",
    "setting key after a comma": "7분",
    "proposed setting": "45 seconds",
    "changed setting": "90s",
    "value set at": "45 seconds",
    "start period": "40-second",
    "load plateau": "12분",
    "people's reading speed": "6 tokens per second",
    "Korean people waiting": "90분",
    "limit by its failure": "40 seconds",
    "head noun of a compound": "65%",
    "per second with a bound": "초당 80개 이상의 토큰",
    "measured key": "12.5s",
    "duration after a word and a colon": "12.5s",
    "real-time factor": "0.31",
    "percentage after a change of times": "27%",
    "Korean FLOPS": "2 페타플롭",
    "bandwidth in G/s": "120G/s",
    "delay before an event that is set": "8 minutes",
    "duration before a failure": "8 minutes",
    "Korean traffic and computation": "3배",
    "Korean imperative": "700ms",
    "Korean general relation": "3초",
    "Korean prohibition": "45초",
    "Korean obligation after a verb stem": "25분",
    "Korean list in a condition": "4초",
    "example label": "210ms",
    "Korean default": "45초",
    "default after a comma": "7 minutes",
    "validity lifetime": "12분",
    "fixed cool-down": "3초",
    "Korean value changed": "2초",
    "price and frequency": "4배",
    "endurance": "3배",
    "aside on a size": "3배",
    "aside on a score": "2배",
    "change of a count": "62%",
    "quality benchmark": "31%",
    "frames as a count": "70%",
    "sub- bound in a sentence about targets": "80ms",
    "aims": "2 to 3 seconds",
    "barrier": "40 tok/s",
    "budget as a product tier": "9x slower",
    "perception in the clause": "4x",
    "latency tier": "420ms",
    "indefinite team or user": "640 milliseconds",
    "if there is": "3%",
    "example described": "12 requests per second",
    "options of a setting": "240 seconds",
    "try a value": "90 seconds",
    "timeline offset": "45s",
    "media segments": "12 seconds",
    "people answering one another": "350ms",
    "configuration key in the sentence": "140s",
    "load test configuration": "45s",
    "QPS after a number": "210,450 QPS",
    "tokens-per-second": "140 tokens-per-second",
    "secondes": "7 secondes",
    "x real time": "45x",
    "RTF as a noun of speed": "25%",
    "memory bandwidth": "40%",
    "Korean bound with a copula": "30ms",
    "Korean bound with a noun ending": "2분",
    "Korean bound said to be fast": "5ms",
    "if you need": "8,000 req/s",
    "rate key before the number": "780",
    "bare per second": "21.5/sec",
    "fraction of a speed": "1/4",
    "abbreviation inside a sentence": "4%",
    "choices of a setting": "240 seconds",
    "guesses asked as questions": "3x",
    "expected bound": "3배",
    "perception in an aside": "0-120ms",
    "Korean reduces as a verb": "70%",
    "Korean modal of fast": "4%",
    "aware is not perception": "3배",
    "Korean formal declarative after a bound": "초당 토큰 생성 속도가 8토큰",
    "first seconds as a window": "1초",
    "Korean delay before a set event": "40초",
    "seconds before an event": "0.5초",
    "people's intervention time": "14분",
    "blocks of a duration": "50ms",
    "cache lifetime": "1시간",
    "Korean alternatives": "500ms",
    "threshold passed, in the past": "24초",
    "bit rate": "9.2 Gbits/sec",
    "Korean supposition with 하자": "3초",
    "Korean supposition with 라 하자": "40ms",
    "Korean supposition with 라고 하면": "20분",
    "Korean concession on a number": "15ms",
    "reading-time line": "3분",
    "window before a duration": "30s",
    "load rate beside a test's length": "850 rps",
    "magnitude before a rate key": "40K qps",
    "change of a counted pair": "75%",
    "aim as the subject": "45fps",
    "modal of another clause": "12 tok/s",
    "example aside": "10000ms",
    "past of keeping": "초당 80토큰",
    "first seconds in Korean": "1.2초",
    "reading time after a word count": "7 min",
    "share of a speed": "60%",
}


@pytest.mark.parametrize(("name", "claim", "other"), PAIRS, ids=[p[0] for p in PAIRS])
def test_a_claim_and_a_sentence_of_the_same_shape_that_is_not(name: str, claim: str, other: str) -> None:
    assert REPORTED[name] in claims(claim), f"{name}: {claim!r} holds the claim {REPORTED[name]!r}"
    assert claims(other) == [], f"{name}: {other!r} holds none"


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
