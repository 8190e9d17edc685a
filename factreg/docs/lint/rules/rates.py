"""Rules of rates: tokens, requests and items per second, bandwidth and compute (reading: factreg/docs/lint/context.py)."""

from __future__ import annotations

from factreg.docs.lint.rules import Rule

EXAMPLES_FR111 = (
    ("a bound in a heading names a class", "## Results (about 100 tok/s)", "100 tok/s", "### Slow inference (< 100 tok/s)"),
    (
        "what a figure means",
        "측정해 보니 이 서버는 초당 10개의 토큰을 생성했다.",
        "초당 10개의 토큰",
        "예를 들어, TPOT는 사용자 당 초당 10개의 토큰을 읽을 수 있는 것입니다.",
    ),
    (
        "example about an indefinite system",
        "For example, our server returns 60 tokens per second.",
        "60 tokens per second",
        "For example, a server could return 60 tokens per second.",
    ),
    (
        "indefinite system as subject",
        "Our model generates 120 tokens/s on the test box.",
        "120 tokens/s",
        "A model generating 120 tokens/s writes a page in a few seconds.",
    ),
    (
        "rubric word after a parenthesis",
        "Decode ran at (60+ tokens/sec) on the M2.",
        "60+ tokens/sec",
        "Decode speed (60+ tokens/sec) feels instant.",
    ),
    ("tokens per day", "one node serves 250M tokens/day", "250M tokens/day", "one node stores 250M tokens"),
    ("a change's bare first figure before an arrow", "- 7B models: **17 → 80-94 tok/s**", "17", "- 7B models: **17 → 80-94 tokens**"),
    ("Korean rate noun after 초당", "초당 토큰 생성 속도가 14토큰이다.", "초당 토큰 생성 속도가 14토큰", "초당 토큰 생성 속도가 중요하다, 14토큰짜리 프롬프트라도."),
    (
        "people's reading speed",
        "The 3B model streams about 6 tokens per second.",
        "6 tokens per second",
        "A typical reading speed is about 6 tokens per second.",
    ),
    ("per second with a bound", "이 칩은 초당 80개 이상의 토큰을 생성한다.", "초당 80개 이상의 토큰", "이 칩은 80개 이상의 토큰을 생성한다."),
    (
        "barrier",
        "Our build broke the 40 tok/s barrier on a Pi 5",
        "40 tok/s",
        "Try to break the 40 tok/s barrier on a Pi 5",
    ),
    (
        "tokens-per-second",
        "The command runs at about 140 tokens-per-second on an M2.",
        "140 tokens-per-second",
        "The command runs about 140 tokens-per-page on an M2.",
    ),
    (
        "Korean formal declarative after a bound",
        "CPU만으로 돌리면 초당 토큰 생성 속도가 8토큰 이하가 나오는 경우가 많습니다.",
        "초당 토큰 생성 속도가 8토큰",
        "CPU만으로 돌릴 때 초당 토큰 생성 속도는 8토큰 이하로 맞춰야 합니다.",
    ),
    (
        "modal of another clause",
        "The old build would crash often; it ran at 12 tok/s on the same card.",
        "12 tok/s",
        "With a larger batch the old build would run at 12 tok/s on the same card.",
    ),
    ("past of keeping", "부하 중에도 초당 80토큰을 유지했음", "초당 80토큰", "부하 중에도 초당 80토큰을 유지해야 함"),
)

EXAMPLES_FR117 = (
    ("a Korean pair's bare second figure", "TPS는 236에서 1,968로 향상되었다.", "1,968", "사용자 수는 236에서 1,968로 늘었다."),
    ("one condition among others", "Table 2 measured 4000 QPS in the run.", "4000 QPS", "Table 2: Latency (QPS: 4000; key: 16 bytes)"),
    ("a figure multiplied into a total", "피크 때 110 TPS를 기록했다.", "110 TPS", "110 TPS × 5분 × 평균 주문액 50,000원 = 1,650만원"),
    ("a rate keyed by its figure", "TPS: ~22 요청/초", "22", "TPS 목표: ~22 요청/초"),
    ("rate key before the number", "> 즉, 현재 한계 tps는 약 780 정도", "780", "> 즉, 현재 tps 서버는 약 780 대"),
    ("processed, in Korean", "- 초당 약 300개의 요청을 처리함", "초당 약 300개의 요청", "- 초당 약 300개의 요청을 처리해야 함"),
    ("a rate in code font", "I get `150 tps` upping the concurrency.", "150 tps", "I set `--rate 150 tps` for the run."),
    ("an item rate read to a decimal", "In the benchmark the parser handled 412.6 docs/sec.", "412.6 docs/sec",
     "In the benchmark the parser should handle 412.6 docs/sec."),
    ("seconds per iteration seen", "With my GTX 1050 Ti I get around 1.56s/it.", "1.56s/it", "With my GTX 1050 Ti I aim for 1.56s/it."),
    ("a frame rate seen", "After the update I get only 18 fps.", "18 fps", "After the update we aim for 18 fps."),
    ("a requirement", "The server handles 460 req/s on one core.", "460 req/s", "The server must handle 460 req/s on one core."),
    ("lower-case tps", "the patched kernel runs at 31 tps", "31 tps", "the patched kernel runs 31 threads"),
    (
        "magnitude before a rate",
        "the gateway handles 12K req/s at peak",
        "12K req/s",
        "the gateway holds 12K requests at peak",
    ),
    (
        "magnitude before a rate key",
        "The proxy sustains 40K qps on one node.",
        "40K qps",
        "The proxy keeps 40K connections open on one node.",
    ),
    ("a Korean record", "배치 작업이 초당 1,200건 처리를 기록했다.", "초당 1,200건", "배치 작업의 목표는 초당 1,200건 처리를 기록하는 것이다."),
)

EXAMPLES_FR118 = (
    (
        "a bit rate under a throughput column",
        "| VPN | Throughput | CPU |\n|---|---|---|\n| WireGuard | 950 Mbps | 8% |",
        "950 Mbps",
        "| VPN | Price | CPU |\n|---|---|---|\n| WireGuard | $950 | 8% |",
    ),
    ("a bit rate read to a decimal", "Between the two hosts the link ran at 9.41 Gbits/sec.", "9.41 Gbits/sec",
     "Between the two hosts the link should run at 9.41 Gbits/sec."),
    ("a speed test", "Contabo showed 800 Mbps on a quick iperf3 burst test.", "800 Mbps", "Contabo's plan is capped at 800 Mbps."),
    ("iperf3", "iperf3 between the two nodes reports 9.2 Gbits/sec.", "9.2 Gbits/sec", "The podcast audio is encoded at 128 kbps."),
    ("a drop", "The total throughput dropped to just 582.37 Mbps.", "582.37 Mbps", "The link is set to 582.37 Mbps."),
)

EXAMPLES_FR112 = (
    ("packets per second", "Throughput was 424 pkt/s.", "424 pkt/s", "Throughput was 424 pkt."),
    ("Korean items per second", "처리 속도: ~10건/초", "10건/초", "처리 단위: 10건/묶음"),
    ("IOPS, with a magnitude word", "Random reads of small files: 110 thousand IOPS.", "110 thousand IOPS", "Random reads of small files: 110 thousand files."),
    ("set value", "웹캠 파이프라인은 24fps로 돌았다", "24fps", "카메라 드라이버에 24fps를 요청한다"),
    (
        "capped value",
        "the demo renders at 48 fps on a laptop",
        "48 fps",
        "the demo is capped at 48 fps on a laptop",
    ),
    ("lower bound on a rate", "부하 테스트에서 처리량은 250 req/s", "250 req/s", "| **처리량** | > 250 req/s | 부하 테스트 |"),
    ("items per second", "처리량이 초당 40건에서 120건으로 늘었다", "초당 40건", "처리량 단위는 건이며 40건마다 집계한다"),
    (
        "aside that is hypothetical",
        "The new build showed 45 tps on the same card (we checked twice).",
        "45 tps",
        "The new build might show 45 tps on the same card.",
    ),
    (
        "example described",
        "The run held 12 queries per second for an hour.",
        "12 queries per second",
        "This example demonstrates load testing at 12 queries per second.",
    ),
    (
        "QPS after a number",
        "Benchmark 결과: Actix(210,450 QPS) > Axum(198,300 QPS)",
        "210,450 QPS",
        "Benchmark 결과: Actix(210,450 connections) > Axum(198,300 connections)",
    ),
    (
        "if you need",
        "we serve search at 8,000 req/s on two nodes",
        "8,000 req/s",
        "If you need to serve search at 8,000 req/s, tune the defaults.",
    ),
    ("bare per second", "처리량도 215/sec", "215/sec", "처리량도 215/page"),
    ("load rate beside a test's length", "부하 테스트 결과 처리량은 850 rps였다.", "850 rps", "부하 테스트 (80 rps, 10분간)"),
    (
        "aim as the subject",
        "Our build now runs inference on the board at 45fps.",
        "45fps",
        "The goal is to be able to run inference on the board at 45fps with camera input.",
    ),
)

EXAMPLES_FR114 = (
    (
        "a load test's stage is a plan",
        "| 단계 | 요청률 |\n|---|---|\n| 본 측정 | 85 req/s |",
        "85 req/s",
        "| 단계 | 요청률 |\n|---|---|\n| 워밍업 | 85 req/s |",
    ),
    (
        "a band's columns",
        "| 지표 | 이전 | 이후 |\n|---|---|---|\n| 동시 요청 | 40 req/s | 50 ~ 200 req/s |",
        "50 ~ 200 req/s",
        "| 지표 | 안전 구간 | 주의 구간 |\n|---|---|---|\n| 동시 요청 | < 50 req/s | 50 ~ 200 req/s |",
    ),
    (
        "a Korean magnitude before the unit",
        "| 항목 | Kafka |\n|---|---|\n| **최대 처리량** | ~100만 msg/s |",
        "100만 msg/s",
        "| 항목 | Kafka |\n|---|---|\n| **최대 처리량** | ~100만 msg |",
    ),
    (
        "a normal range is a threshold",
        "| 항목 | 측정값 | 조치 |\n|---|---|---|\n| 속도 | 12-18건/s | 없음 |",
        "12-18건/s",
        "| 항목 | 정상 범위 | 이상 시 조치 |\n|---|---|---|\n| 속도 | 12-18건/s | 워커 수 확인 |",
    ),
    (
        "a table of plans holds each plan's limits",
        "| Endpoint | Run 1 | Run 2 |\n|---|---|---|\n| Search | 10 requests per second | 12 requests per second |",
        "10 requests per second",
        "| Usage plan | Basic | Pro |\n|---|---|---|\n| Rate Limit | 10 requests per second | 12 requests per second |",
    ),
    ("requests per second in a row", "| 50 | 23.64 req/s | ✅ |", "23.64 req/s", "| 50 | 23.64 requests | ✅ |"),
    ("queries per second", "| search | 40K qps | 3 nodes |", "40K qps", "| search | 40K queries | 3 nodes |"),
    ("rate after a slash", "| categories_api | 6918 | 220.52/s |", "220.52/s", "| categories_api | 6918 | 220.52/page |"),
)

EXAMPLES_FR115 = (
    ("millions of requests a second", "HAProxy reached 1.03 million HTTP requests per second.",
     "1.03 million HTTP requests per second", "HAProxy logged 1.03 million HTTP requests."),
    ("CPU cycles per operation", "linux_base64_decode  :  3.61 cycles per operation (best)", "3.61 cycles per operation",
     "It ran for 3 cycles per day."),
    ("ApacheBench's requests per second", "Requests per second:    8665.48 [#/sec] (mean)", "8665.48 [#/sec]", "Requests per second:    n/a [#/sec] (mean)"),
    ("wrk's transfer rate", "Transfer/sec:    169.25MB", "169.25MB", "Transfer size:    169.25MB"),
    ("a browser benchmark's score", "Geometric mean: 14.90 runs/s", "14.90 runs/s", "Geometric mean of 14.90 runs"),
    (
        "a JMH result row",
        "JsonBench.read  thrpt  25  12345.678  12.345  ops/s",
        "12345.678  12.345  ops/s",
        "JsonBench.read  thrpt  25  iterations, score in ops/s",
    ),
    ("benchstat cells", "Decode-14    1254.1µ ± 1%   435.7µ ± 0%", "1254.1µ ± 1%", "Decode-14    weight 5m ± 2%"),
    ("wrk's request rate", "Requests/sec:   1170.78", "1170.78", "Requests/sec: see the table"),
    ("db_bench's time per operation", "readrandom   :      77.782 micros/op;", "77.782 micros/op", "readrandom   :      see micros/op"),
    ("a k6 summary line", "http_reqs..................: 130736 3772.018811/s", "3772.018811/s", "http_reqs: the count and its rate/s"),
    (
        "EXPLAIN ANALYZE's times",
        "Seq Scan on params  (cost=0.00..966.96 rows=49996 width=41) (actual time=0.009..3.200 rows=50000 loops=1)",
        "0.009..3.200",
        "Seq Scan on params  (cost=0.00..966.96 rows=49996 width=41)",
    ),
    ("a progress bar's rate", "Sampling: 100%|██████████| 30/30 [00:12<00:00,  2.38it/s]", "2.38it/s", "Sampling: 30 steps"),
    ("a serving benchmark's rate", "Request throughput: 6.05 requests/s", "6.05 requests/s", "Request throughput: see below"),
    (
        "records per second",
        "the producer sent 999.4 records/sec",
        "999.4 records/sec",
        "the producer is limited to 1000 records/sec",
    ),
    (
        "time per operation",
        "BenchmarkGin_StaticAll-8   25604   45487 ns/op   0 B/op",
        "45487 ns/op",
        "Keep the handler under 50000 ns/op.",
    ),
    (
        "operations per second",
        "JsonBench.roundRobin  thrpt  16  101966.373 ops/s",
        "101966.373 ops/s",
        "a budget of 100000 ops/s",
    ),
    (
        "elements per second",
        "thrpt:  [144.71 Kelem/s 146.73 Kelem/s]",
        "144.71 Kelem/s",
        "For example, a parser could take 144 Kelem/s.",
    ),
)

EXAMPLES_FR113 = (
    (
        "bit rate",
        "Each node has a 10 Gbits/sec uplink.",
        "10 Gbits/sec",
        "The podcast audio is encoded at 128 kbps.",
    ),
    ("a default", "the default recovery rate is 40 MB/s", "40 MB/s", "the recovery file is 40 MB"),
)

EXAMPLES_FR116 = (
    ("ApacheBench's transfer rate", "Transfer rate:          142.32 [Kbytes/sec] received", "142.32 [Kbytes/sec]",
     "Transfer rate:          142.32 [Kbytes] received"),
    ("a certification's minimum", "이 NPU는 45 TOPS의 성능을 낸다", "45 TOPS", "코파일럿+ PC의 최소 기준인 45 TOPS를 넘는다"),
    ("a requirement is a target", "이 NPU는 벤치마크에서 45 TOPS의 성능을 기록했다.", "45 TOPS", "코파일럿을 실행하려면 40 TOPS 성능의 NPU가 필요하다."),
    ("a tool's bandwidth keyed by its unit", "Grammar: DataFormat(Json), MiB/s:        50.17", "50.17",
     "Grammar: DataFormat(Json), MiB:        50.17"),
    (
        "a value in code font with its equivalent",
        "The hash runs at `23.8 ns/op (10.1 GB/s)` here.",
        "10.1 GB/s",
        "Run it with `--rate 10.1GB/s (max)` here.",
    ),
    ("bytes per second written MBps", "Download rate was 3.92 MBps on Fedora.", "3.92 MBps", "Download size was 3.92 MB on Fedora."),
    ("a drive's read speed", "순차 읽기 속도는 최대 7,000MB/s에 이른다.", "7,000MB/s", "순차 읽기 블록은 최대 7,000MB 크기다."),
    ("Korean bytes per second", "다른 압축 방식에 비해 초당 250MB 정도를 압축한다.", "초당 250MB", "다른 압축 방식에 비해 250MB 정도를 아낀다."),
    (
        "bytes per second in words",
        "A single process wrote messages at 57 megabytes per second.",
        "57 megabytes per second",
        "A single process wrote messages of 57 megabytes each.",
    ),
    (
        "a specification table",
        "| GPU | Memory BW | Interconnect |\n|---|---|---|\n| L40S | 864 GB/s | PCIe 4.0 |",
        "864 GB/s",
        "| GPU | Memory | Interconnect |\n|---|---|---|\n| L40S | 864 GB | PCIe 4.0 |",
    ),
    ("compute in a row", "| H100 SXM | 989 TFLOPS | 700W |", "989 TFLOPS", "| H100 SXM | 989 W | 700W |"),
    ("TFlops in mixed case", "the fused kernel reaches 2.4 TFlops", "2.4 TFlops", "the fused kernel uses 2.4 GB"),
    ("Korean FLOPS", "이 보드는 2 페타플롭의 연산 성능을 낸다", "2 페타플롭", "이 보드는 2 페이지의 설명서를 낸다"),
    ("bandwidth in G/s", "The board reads memory at ~120G/s.", "120G/s", "The board has ~120G of memory."),
    ("petaflops", "| H200 | Hopper | ~1.2 PFLOPS (with sparsity) |", "1.2 PFLOPS", "| H200 | Hopper | ~1.2 PB (with sparsity) |"),
    ("bytes per second in lower case", "| TCP to TCP | 69.9mib/s | 5mib/s |", "69.9mib/s", "| TCP to TCP | 69.9mib | 5mib |"),
    ("teraflops spelled out", "An A100 advertises 312 teraflops of FP16 throughput.", "312 teraflops", "An A100 holds 312 tera of bytes."),
    ("a bus, not a codec", "the bus moves 900 GB/s here", "900 GB/s", "the codec audio bandwidth of 1.1 kbps"),
)

RULES = (
    Rule(
        "FR111",
        "token-rate",
        "A token rate or time per token: `28 tok/s`, `초당 28토큰`, `25 ms/token`, `10 to 29 tokens max per second`.",
        (
            "Reads tokens per second in its English and Korean forms (`t/s`, `tg/s`, `tokens per second`, `토큰/초`, "
            "`초당 N토큰`) and time per token; leaves people's reading speed (`human reading speed is 4–7 tokens per "
            "second`) and hypotheticals."
        ),
        EXAMPLES_FR111,
    ),
    Rule(
        "FR112",
        "item-rate",
        "Requests, items or frames per second: `250 req/s`, `40 it/s`, `50K qps`, `초당 40건`, `60 fps`.",
        (
            "Reads per-second rates of other things (`req/s`, `RPS`, `QPS`, `TPS`, `IOPS`, `it/s`, `files/sec`, "
            "`events/second`, `infer/sec`, `vectors/second`, `건/초`, `장/s`, `/s`, `fps`, a magnitude in words: `4 million ops/sec`, a rate's key before its "
            "number: `TPS 15.4`); leaves the frame rate of a video, a rate a load "
            "generator is set to (`(50 rps, 5분간)`, FR201) and settings (`capped at 30 fps`)."
        ),
        EXAMPLES_FR112,
        preview=True,
    ),
    Rule(
        "FR117",
        "seen-item-rate",
        "What FR112 reads, beside a word of what a run gave: `I get only 18 fps`, `averaged just 43fps`, `초당 40건을 기록`.",
        (
            "Reads what FR112 reads in prose where a word of a rate seen on a run stands within 40 characters before "
            "it or 25 after it (`get`, `hitting`, `averaged`, `drops to`, `runs at`, `reached`, `handles`, "
            "`sustains`, `measured`, `faster`, `기록`, `측정`, `달성`, `떨어`) and its line names no goal, "
            "requirement, limit, cap, example or offered load (`at 100 RPS`, `목표`, `기준`, `이상`, `설정`). "
            "Chosen on the select split before final44 was scored: 48 of 48 right there, 18 of 18 on the tune split "
            "(FR112's other prose rates: 82 of 134). Also an item rate in prose written to a decimal on a line "
            "speaking of a benchmark or of speed and naming no condition, goal, default or setting: 28 more right, 1 "
            "wrong on the select split."
        ),
        EXAMPLES_FR117,
    ),
    Rule(
        "FR118",
        "seen-bit-rate",
        "What FR113 reads in prose, beside a word of what a run gave: `showed 800 Mbps on a quick iperf3 burst test`.",
        (
            "Reads FR113's bit rates in prose where a word of a link's speed seen on a run stands within 40 "
            "characters before it or 25 after it (`showed`, `sustained`, `measured`, `reached`, `averaged`, "
            "`median`, `dropped to`, `throughput`, `iperf3`, `download speed`, `측정`, `기록`) and its line names no "
            "goal, limit, preset, default, theoretical or nominal figure or codec bit rate (`up to`, `throttling`, "
            "`bitrate`, `최대`, `기본`, `이론`). Chosen on the select split before final46 was scored: 10 of 10 right "
            "there, 3 of 3 on the tune split (FR113's other bit rates: 41 of 55). Also a bit rate in prose written "
            "to a decimal (`9.41 Gbits/sec`, `943.2 Mbps`) on a line naming no condition, goal, default or setting "
            "(`if`, `should`, `up to`, `per`, `목표`, `이상`, `기본`, `설정`): 63 more right, 2 wrong on the select split."
        ),
        EXAMPLES_FR118,
    ),
    Rule(
        "FR114",
        "table-item-rate",
        "What FR112 reads, in a table row: `| 5 | 0.217s | 23.05 req/s |`, `| rsv_PUT_api | 973.79ms | 100.596307/s |`.",
        (
            "Reads what FR112 reads where the number is in a table row; in tables such rates are nearly always "
            "measured (in prose they are as often loads, limits, frame rates of media and worked examples, which "
            "keeps FR112 a preview rule). A row of a plan or an allowance is a target's: a load test's stages "
            "(`| 워밍업 | 60초 | 5 req/s |`, spike, ramp-up), quotas, bursts and recommended rates."
        ),
        EXAMPLES_FR114,
    ),
    Rule(
        "FR115",
        "tool-rate",
        "Rates and times per operation as benchmark tools print them: `45487 ns/op`, `101966 ops/s`, "
        "`999.4 records/sec`, `148.57 Kelem/s`, `14.90 runs/s`, `1254.1µ ± 1%`, `Requests/sec: 1170.78`, "
        "`Transfer/sec: 169.25MB`.",
        (
            "Reads what FR112 reads (and a time per operation, `ns/op`, `µs/op`, `ms/op`) when its unit is one that "
            "Go's, JMH's, Criterion's and Kafka's benchmarks, PostgreSQL's EXPLAIN ANALYZE (`actual time=0.009..3.200`, "
            "milliseconds), progress bars (`it/s`, `img/sec`, `samples/sec`), "
            "redis-benchmark (`requests per second`) and serving benchmarks (`requests/s`) print, and the rows "
            "those tools print with the unit "
            "elsewhere: JMH's `thrpt`/`avgt` rows (score, error, then the unit column), benchstat's cells "
            "(`1254.1µ ± 1%`, two on a line or one beside `(p=`), wrk's `Requests/sec:` and `Transfer/sec:` (and a tool's "
            "`Messages/sec:`), RocksDB's db_bench (`micros/op`), `cargo bench` (`ns/iter`) and k6's summary lines "
            "(`http_reqs.....: 130736 3772.0/s`). Such a number is "
            "nearly always pasted output of a run (right 44 times of 45 on the select split, where final35's "
            "pasted output taught it; the other was a producer's rate limit; 84 of 85 once the progress bars' and "
            "serving benchmarks' units joined after final38). Limits and budgets in these units "
            "are targets, as everywhere."
        ),
        EXAMPLES_FR115,
    ),
    Rule(
        "FR113",
        "bit-rate",
        "Bit rates, and a bandwidth given as a default: `4.68 Gbits/sec`, `a default of 40 MB/s`.",
        (
            "Reads bits per second (`Mbps`, `Gbits/sec`), and bytes per second or FLOPS with `default` or `기본` "
            "just before them; leaves a codec's bit rate on an audio line (`a bandwidth of 1.1 kbps`). Bit rates "
            "are as often a link's speed, a network throttling preset (`| 4G/LTE | 4 Mbps | 3 Mbps |`) or a codec "
            "setting as a measurement: a preview rule (0.42 on the select split once bytes per second left it)."
        ),
        EXAMPLES_FR113,
        preview=True,
    ),
    Rule(
        "FR116",
        "bandwidth-compute",
        "Bandwidth in bytes per second and compute rates: `900 GB/s`, `| L40S | 864 GB/s | 362 TFLOPS |`, `6.1 TFLOPS`.",
        (
            "Reads bytes per second and FLOPS/TOPS, in prose and in table rows: a device's or a run's figure "
            "(right 85 times of 85 on the select split, which holds final38; in a table row only, 42 of 42 when it "
            "joined the default set after final37). Bit rates and defaults are FR113's."
        ),
        EXAMPLES_FR116,
    ),
)
