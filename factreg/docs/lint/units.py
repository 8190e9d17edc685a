"""The units a claim can have, each alternation built once from this table, and the claim pattern built from it."""

from __future__ import annotations

from factreg.docs.lint.patterns import lazy
from factreg.docs.lint.vocab import _END, _MAGNITUDE, _NUM, _NUM_FIRST, _PM, _SP

# The units a claim can have (each alternation built once from this table) and the claim pattern.
_UNITS = [
    # rates
    ("rate", rf"(?i:tok(?:en)?s?|tks?|t){_SP}?/{_SP}?(?i:s|secs?|seconds?){_END}"),
    ("rate", rf"(?i:tok(?:en)?s?)(?:{_SP}|-)(?i:per|a)(?:{_SP}|-)(?i:second|sec){_END}"),  # tokens-per-second
    ("rate", rf"토큰{_SP}?/{_SP}?(?:초|s{_END}|sec{_END})"),
    ("rate", rf"(?i:tok(?:en)?s?|tg|pp){_SP}(?i:max|min|avg){_SP}(?i:per|a){_SP}(?i:second|sec){_END}"),
    ("rate", rf"(?i:tg|pp){_SP}?/{_SP}?(?i:s|secs?|seconds?){_END}"),
    ("rate", rf"(?i:tok(?:en)?s?){_SP}?/{_SP}?(?i:day|hour|hr|h|min){_END}"),  # 390M tokens/day
    ("req", rf"(?i:req(?:uest)?s?){_SP}?/{_SP}?(?i:s|sec|second){_END}|(?:HTTP{_SP})?(?i:requests){_SP}per{_SP}second{_END}"),
    # other things per second: it/s, files/sec, chars/초, words per second, RPS, fps
    (
        "persec",
        rf"(?i:i(?=/)|its?|iters?|iterations?|files?|chars?|characters?|words?|images?|imgs?|samples?|queries|"
        rf"steps?|sentences?|pages?|documents?|docs?|lines?|ops?|rows?|records?|msgs?|messages|runs|events?|"
        rf"responses|connections|transactions|txns?|operations|writes|reads|inserts|infer(?:ences)?|vectors|batches|"
        rf"predictions|embeddings|jobs?|spans?|objs?|objects|keys|tiles?|tasks?|hashes|packets|pkts?|lookups|calls|samp|tests|"
        rf"[KMG]?elem(?:ent)?s?)"
        rf"{_SP}?(?:/{_SP}?|{_SP}per{_SP})"
        rf"(?:(?i:s|secs?|seconds?){_END}|초)",
    ),
    # (not a key after a count: sysbench's `thds: 1 tps: 258.32`)
    ("persec", rf"(?:RPS|QPS|TPS|rps|qps|tps|IOPS){_END}(?!{_SP}?:)"),
    # `5.8건/s`, `16.6장/초`, `4.87 요청/초`: items per second
    ("persec", rf"(?:건|장|개|회|요청|쿼리|트랜잭션|메시지|이벤트){_SP}?/{_SP}?(?:(?i:s|sec){_END}|초)"),
    ("persec", rf"/(?:s|sec){_END}(?!/)"),
    ("persec", r"\[#/sec\]"),  # ApacheBench's `Requests per second:    8665.48 [#/sec] (mean)`
    ("bw", r"\[Kbytes/sec\]"),  # and its `Transfer rate:          142,584.32 [Kbytes/sec] received`
    ("persec", rf"(?i:per){_SP}(?i:sec(?:ond)?)(?=\.|{_END})"),  # sysbench's `(30.94 per sec.)`  # a bare `/s`: `처리량도 16.7/sec`, `500/s에서 2000/s로`
    ("fps", rf"(?i:fps|frames{_SP}per{_SP}second){_END}"),
    ("fps", r"프레임(?=[을이으로도\s,.)]|$)"),  # a game benchmark's `평균 51프레임을 기록`: frames a second
    ("bw", rf"(?:[KMGT]i?B|[KMGT]b|[GT]|[kmgt]i?b){_SP}?/{_SP}?(?:s|sec|Sec){_END}"),  # `69.9mib/s` too
    ("bw", rf"(?i:(?:kilo|mega|giga|tera)bytes?){_SP}(?i:per){_SP}(?i:second){_END}"),  # `57 megabytes per second`
    ("bw", rf"[KMGT]i?Bps{_END}"),  # `3.92 MBps`: bytes per second (not `Mbps`, bits)
    # bit rates: `4.68 Gbits/sec`, `283.58 Mbps`, `290kbit/s`, `9.4Gbits / sec`
    ("bits", rf"[KMGTkmg](?:bps|(?i:bits?){_SP}?/{_SP}?(?:s|sec)|(?i:bits?){_SP}(?i:per){_SP}(?i:second)){_END}"),
    ("bits", rf"(?i:(?:kilo|mega|giga|tera)bits?){_SP}(?i:per){_SP}(?i:second){_END}"),  # `6 gigabits per second`
    ("flops", rf"(?:[GTP]?FLOPS|[GTP]?(?i:flops)|(?i:tera|giga|peta)(?i:flops?)|TOPS){_END}"),
    ("flops", rf"(?:기가|테라|페타){_SP}?플롭스?"),  # `1 페타플롭`
    # time per operation, as Go's and JMH's benchmarks print it (`45487 ns/op`, `3.2 us/op`), Rust's `cargo bench`
    # (`6,670 ns/iter`) and RocksDB's db_bench (`0.220 micros/op`, `1.42 micros/read`)
    ("op", rf"(?:ns|[µμ]s|us|ms){_SP}?/{_SP}?(?:op|iter){_END}|micros{_SP}?/{_SP}?(?:op|read|write|iter){_END}"),
    ("op", rf"s/it{_END}"),  # tqdm's seconds per iteration: `[00:27<00:00,  3.92s/it]`
    # CPU cycles per unit of work (`3.61 cycles per operation`, `0.9 cycles/byte`)
    ("op", rf"(?i:cycles?){_SP}?(?:/|{_SP}per{_SP}){_SP}?(?i:op(?:eration)?|byte|element|iteration|call|char(?:acter)?|value|row){_END}"),
    # time per token
    ("mstok", rf"ms{_SP}?/{_SP}?(?i:tok(?:en)?){_END}|ms{_SP}per{_SP}token{_END}"),
    ("stok", rf"s{_SP}?/{_SP}?(?i:tok(?:en)?){_END}"),
    # durations
    ("ms", rf"(?:ms|msecs?|(?i:milli-?seconds?|millisecs?)){_END}|밀리초|\[ms\]"),  # ApacheBench's `11.195 [ms] (mean)`
    ("us", rf"(?:[µμ]s|(?<=\d)us|usecs?|(?i:micro-?seconds?)){_END}|마이크로초"),
    # `| 273.6142 us |`, `| **57.518 us** |`, `` `3.18 us` ``, a row's last cell: a table cell's microseconds, spaced
    ("us", rf"us(?={_SP}*(?:\*\*|__|`)?{_SP}*(?:\||\n|$))|us(?=[`)])"),  # and `(9.9 us)`
    # criterion's `time:   [634.82 us 637.20 us 639.93 us]`: spaced microseconds, beside another or closing the bracket
    ("us", r"us(?=[ \t]*\]|[ \t]+\d[\d.]*[ \t]us\b)"),
    ("ns", rf"(?:ns|(?i:nano-?seconds?)){_END}|나노초"),
    ("s", rf"(?:s|(?i:secs?|second(?:e?s)?)){_END}"),  # `5 secondes`
    ("s", rf"m{_SP}?[0-5]?\d(?:\.\d+)?s{_END}"),  # 6m58s, 1m 11s
    ("s", rf"min[0-5]?\d(?:\.\d+)?s{_END}"),  # 18min37s
    ("hm", rf"h{_SP}?[0-5]?\d{_SP}?(?:m|min|mins)(?:{_SP}?[0-5]?\d{_SP}?s)?{_END}"),  # 2h3min, 1h 57m, 1h 16m 51s
    ("s", r"초(?![과기반록등월석점콜소])"),
    ("hm", rf"시간{_SP}?[0-5]?\d{_SP}?분(?:{_SP}?[0-5]?\d(?:\.\d+)?{_SP}?초)?"),  # 2시간 37분: hours and minutes
    ("mns", rf"분{_SP}?[0-5]?\d(?:\.\d+)?{_SP}?초"),  # 10분54초, 6분 48초: minutes and seconds
    ("min", rf"(?:min|mins|(?i:minutes?)){_END}"),
    # not `8분이 참여해주셨다`: 분 counting people
    ("min", r"분(?![기의류포산할배석리량야위자모해명노수출란담쟁열필실비단지들께])(?!이[ \t]?(?:참여|참석|응답해|오셨|계셨|모였|방문))"),
    ("h", rf"(?i:hours?|hrs?){_END}|시간(?![당대표제외차])"),
    ("d", rf"(?i:days?){_END}"),
    # ratios and relative changes (checked further in Python: what follows decides)
    ("ratio", r"[×✕✖]"),
    (
        "x",
        rf"(?<=\d)x{_END}|(?<=\d)X(?={_SP}?(?i:faster|slower|quicker|speedup|speed-up|slowdown|the{_SP}(?:performance|speed|throughput)){_END})",
    ),
    ("xcap", r"(?<=\d)X(?=[.,;)]|$)"),
    ("xsp", rf"(?<={_SP})x(?={_SP}+(?i:faster|slower|quicker|speedup|speed-up|slowdown){_END})"),
    ("times", rf"(?i:times)(?={_SP}+(?i:faster|slower|quicker|as{_SP}|more|less|longer|shorter|higher|lower)|[.;)]|$)"),
    ("ratio", r"배(?![포치열경터송달출선당제관우추꼽양심수율속신탈려])"),
    ("pct", r"%(?![pP](?![A-Za-z]))|(?<=\d )(?i:percent)(?![A-Za-z])"),  # not `1%p`: percentage points (of accuracy)
]


_UNIT_NAMES = [name for name, _ in _UNITS]


_UNIT_ALT = "|".join(f"(?P<u{i}>{rx})" for i, (_, rx) in enumerate(_UNITS))


_NORMAL = {
    "rate": "tok/s",
    "req": "req/s",
    "mstok": "ms/tok",
    "stok": "s/tok",
    "ms": "ms",
    "us": "µs",
    "ns": "ns",
    "s": "s",
    "min": "min",
    "h": "h",
    "hm": "h",
    "mns": "min",
    "d": "d",
    "persec": "/s",
    "op": "/op",
    "fps": "fps",
    "bw": "B/s",
    "bits": "bit/s",
    "flops": "FLOPS",
    "ratio": "×",
    "x": "×",
    "xsp": "×",
    "xcap": "×",
    "times": "×",
    "pct": "%",
}


_RANGE = (
    rf"(?:{_SP}?[~～〜–—‒-]{_SP}?|{_SP}(?:to|and|through){_SP}|{_SP}?(?:에서|부터){_SP}?"
    rf"|{_SP}?(?:→|->|⇒){_SP}?)"  # a before → after pair whose unit is written once: 155 → 732 chars/초
)


# What may follow a number that starts a claim (a cheap test that turns most numbers away before the units are
# tried): not a digit, not punctuation that ends it, not a capital that cannot start a unit (`27B`, `8 GB`; `Q` starts `QPS`), not a slash but that of `/s`.
_NEXT = r"(?=[ \t\u00a0]{0,2}(?:[^ \t\n\u00a00-9A-EHJLN-PU-WYZ.,:;)\]|/(\"']|P(?=FLOPS|B/s))|/s)"  # `&` starts `&nbsp;`


_CLAIM = lazy(
    rf"(?P<n1>{_NUM_FIRST}){_NEXT}"
    rf"(?:"
    rf"(?P<pm>{_PM})(?P<n2>{_NUM})(?:{_SP}?(?:{_UNIT_ALT.replace('(?P<u', '(?P<p')}))?"
    rf"|"
    rf"(?:(?:[KkM]|{_SP}(?i:million|thousand))?{_RANGE}(?:[~≈]|(?i:about|around|nearly|roughly){_SP}+)?(?P<n3>{_NUM}))?"
    rf"(?:{_MAGNITUDE})?(?P<sp>\+?(?:\*\*|__)?(?:{_SP}{{0,2}}|&nbsp;)|-(?=(?i:second|minute|millisecond|hour)))"
    rf"(?:{_UNIT_ALT})"
    rf")"
)


# `the 401s`, `404s`, `5xx`: HTTP status codes in the plural, not seconds (`120s` stays a duration)
_HTTP_CODES = frozenset({200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 409, 429, 500, 502, 503, 504})


_KIND = {f"{prefix}{i}": name for i, name in enumerate(_UNIT_NAMES) for prefix in ("u", "p")}
