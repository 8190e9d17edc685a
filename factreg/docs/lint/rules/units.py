"""Rules of units written elsewhere than after the number: spreads, test names, labels, metric names."""

from __future__ import annotations

from factreg.docs.lint.rules import Rule

EXAMPLES_FR131 = (
    ("a spread without a unit", "median of 5 runs: 11.9 ± 7.2", "11.9 ± 7.2", "median of 5 runs: `11.9 ± 7.2`"),
    ("a rating's spread is no performance", "Runs of the new build: 19.5 +/- 16.8", "19.5 +/- 16.8",
     "Elo difference: 19.5 +/- 16.8"),
    ("a path named target is no goal", "1.08 ± 0.11 times faster than ./target/release/fd", "1.08 ± 0.11",
     "Our target: 1.08 ± 0.11 times faster than ./build/fd"),
)

EXAMPLES_FR141 = (
    ("numbers after a test name", "pp512 560 -> 180", "560 -> 180", "we ran pp512 and tg32 on it"),
    (
        "prompt and generation rates",
        "tg128 with 8000pp / 400tg t/s",
        "8000pp / 400tg t/s",
        "tg128 with `8000pp / 400tg t/s`",
    ),
)

EXAMPLES_FR145 = (
    ("arithmetic shown", "- 측정 TPS : 1050", "1050", "- 실 TPS : 1050 / 40 = 26.25"),
    ("a latency a tool printed", "Avg Latency:  81.99", "81.99", "Avg Latency:  see below"),
    ("transactions per second", "straight PG (TPS: 389), pgbouncer (TPS: 305)", "389", "straight PG (threads: 389), pgbouncer (threads: 305)"),
    ("not a setting", "Total Time:  56.60", "56.60", "Total Time interval:  56.60"),
    ("a label per second, not a cap", "Rows inserted/sec:    1,751,841", "1,751,841", "Rate limit (req/sec): 100"),
)

EXAMPLES_FR146 = (
    ("rustc's time passes", "time:   0.026; rss:  184MB ->  207MB  late_resolve_crate", "0.026",
     "rss:  184MB ->  207MB  late_resolve_crate"),
    ("Ruby's Benchmark row", "seq  64.560736   0.001101  64.561837 ( 64.562194)",
     "64.560736   0.001101  64.561837 ( 64.562194", "seq  64 0 64 (64)"),
    ("wrk's requests a second", "Req/Sec    12.99k     1.64k   20.75k    81.07%", "12.99k     1.64k   20.75k", "Req/Sec is wrk's column of requests."),
    ("ApacheBench's connection times", "Processing:     3    6  22.2      3     173", "3    6  22.2      3     173", "Processing: 3 files, 6 folders"),
    ("ApacheBench's percentiles", "  95%     98", "98", "  95% of the 98 runs"),
    (
        "memtier_benchmark's totals",
        "Totals       4000.67         0.00      3635.77         0.77258         0.62300",
        "4000.67         0.00      3635.77         0.77258         0.62300",
        "Totals       4000 rows, 3635 kept",
    ),
    ("zsh's time", "make  5.14s user 2.04s system 94% cpu 7.595 total", "7.595", "make  94% cpu total"),
    ("openssl speed", "aes-128-gcm  310758.55k  785113.43k  1156720.81k  1277712.38k", "310758.55k  785113.43k  1156720.81k  1277712.38k", "aes-128-gcm  310758 bytes"),
    ("ffmpeg's progress", "frame= 5896 fps=305 q=30.0 size=N/A", "305", "frame= 5896 q=30.0 size=N/A"),
    ("Benchmark.js's spread", "serde x 3,137 ops/sec ±1.19% (91 runs sampled)", "±1.19%", "serde x 3,137 ops ±1.19% of runs"),
)

EXAMPLES_FR142 = (
        ("unit in a row label", "| Decode latency (ms) | 31.5 | 29.8 |", "31.5", "| Decode batch (n) | 31 | 29 |"),
    ("a label of a size", "Benchmark duration (s): 19.08", "19.08", "Model size (GB): 19.08"),
)

EXAMPLES_FR143 = (
    (
        "real-time factor",
        "Whisper small ran at RTF 0.31 on the laptop.",
        "0.31",
        "Whisper small ran at 0.31 on the laptop.",
    ),
)

EXAMPLES_FR144 = (
    ("a producer's linger setting", "produce_latency_ms=100", "100", "--producer-config linger_ms=100"),
        ("metric name holding its unit", "decode_latency_seconds_sum 0.482", "0.482", "request_timeout_seconds 30"),
    ("a setting named in seconds", "ttft_seconds_sum 0.11", "0.11", "request_timeout_seconds 30"),
    ("a JSON key in milliseconds", '"mean_ttft_ms": 190.5,', "190.5", '"retry_delay_ms": 500,'),
    ("a key in camel case", '"Top50PercentLatencyInMs": 2.4613,', "2.4613", '"cacheLifetimeMs": 600000,'),
    ("a process's uptime", "http_request_duration_seconds_sum 0.482", "0.482", "uptime_in_seconds:73"),
)

RULES = (
    Rule(
        "FR131",
        "spread",
        "A value with a spread and no unit of its own: `11.9 ± 7.2`.",
        (
            "Reads `±`, `+/-` spreads: a measured value with its variation; a spread with a unit is its unit's "
            "rule's; not on a line naming a rating (`Elo difference: 19.5 +/- 16.8`). A spread of percentages with no word of performance near it (`| 요청 성공률 | 83.9 ± 1.76 % |`, "
            "a success rate's) is FR124's. Leaves spreads inside code, and targets (FR201)."
        ),
        EXAMPLES_FR131,
    ),
    Rule(
        "FR141",
        "test-name-rate",
        "A rate whose unit is written by a test name or elsewhere on the line: `pp512 560 -> 180`, `8000pp / 400tg t/s`.",
        (
            "Reads the numbers after llama-bench test names (`pp512`, `tg128`) and `Npp / Mtg t/s`; leaves test "
            "names alone (`tg32`)."
        ),
        EXAMPLES_FR141,
    ),
    Rule(
        "FR142",
        "label-unit",
        "A number after a label holding its unit: `Benchmark duration (s): 19.08`, `| Latency (ms) | 22.68 |`.",
        (
            "Reads the first number after a label whose parenthesis names a time or rate unit; leaves labels of "
            "sizes and counts."
        ),
        EXAMPLES_FR142,
    ),
    Rule(
        "FR145",
        "metric-label",
        "A bare number after a label naming a time or a rate: `Avg Latency:  81.99`, `TPS: 389`, `Total Time:  56.60`.",
        (
            "Reads the number after a colon that follows `latency`, `response time`, `duration`, `elapsed`, "
            "`throughput`, `TPS`, `QPS`, `RPS`, `run time` or `total time` (with an optional `avg`, `max`, `p99`, …) "
            "or a count per second (`Rows inserted/sec:`, `Bandwidth (msg/sec):`; not a cap, `Rate limit (req/sec):`), "
            "where no unit follows it (FR101 and the rate rules read those); leaves clock times, quoted values and "
            "settings on the line (`timeout`, `interval`)."
        ),
        EXAMPLES_FR145,
    ),
    Rule(
        "FR146",
        "tool-row",
        "Numbers of a row a benchmark tool prints in its fixed format: `Req/Sec  12.99k  1.64k  20.75k  81.07%`.",
        (
            "Reads wrk's `Req/Sec` row (average, spread, maximum), ApacheBench's connection times (`Processing:` "
            "with its five numbers) and its served-within lines (`95%     98`), and memtier_benchmark's `Sets`, "
            "`Gets` and `Totals` rows (latencies printed to five decimals), BSD time's `real … user … sys` line, "
            "zsh's `… cpu 7.595 total`, `openssl speed`'s rows (thousands of bytes a second) and ffmpeg's progress "
            "(`frame= 5896 fps=305`) and Benchmark.js's spread (`… ops/sec ±1.72% (60 runs sampled)`), whose units "
            "are in the tool's column names or manual; leaves the same words "
            "before other numbers."
        ),
        EXAMPLES_FR146,
    ),
    Rule(
        "FR143",
        "real-time-factor",
        "A real-time factor: `RTF 0.25`, `real-time factor: 0.3`.",
        (
            "Reads `RTF` or `real-time factor` before a number; leaves other uses of `factor`."
        ),
        EXAMPLES_FR143,
    ),
    Rule(
        "FR144",
        "metric-name-unit",
        "A metric whose name holds its unit: `ttft_seconds_sum 0.11`.",
        (
            "Reads Prometheus-style metrics named `…_seconds`/`…_milliseconds` and their value, and keys of JSON "
            "or log records whose name ends in their unit (`\"mean_ttft_ms\": 190.5`, `LatencyInMs: 2.46`, "
            "`total_sec=12`); leaves settings so named (`request_timeout_seconds 30`, `\"retry_delay_ms\": 500`, "
            "`cacheLifetimeMs: 600000`) and a process's uptime (`uptime_in_seconds:73`)."
        ),
        EXAMPLES_FR144,
    ),
)
