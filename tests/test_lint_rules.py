"""The lint's rules (factreg/docs/lint/rules/): the policy tests generated from each rule's own examples, the
rule id on every finding and in every output format, `--explain`, `ignore[ID]` in every form of the ignore
directives, rule selection (`[lint] select`/`ignore`/`preview`, `--select`, `--ignore`, `--all`), the generated
policy page, and the lint package's modules in the wheel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factreg.docs.lint import lint_text
from factreg.docs.lint.rules import Rule, UnknownRule, all_rules, by_id, explain, page, selected

EXAMPLES = [(rule, ex) for rule in all_rules() for ex in rule.examples]


def test_every_rule_has_a_claim_and_a_non_claim_and_a_unique_id() -> None:
    ids = [r.id for r in all_rules()]
    assert len(ids) == len(set(ids)) and len(ids) >= 12
    for rule in all_rules():
        assert rule.examples, f"{rule.id} has no example"
        assert all(claim and other and reported for _, claim, reported, other in rule.examples), rule.id
        assert rule.doc and rule.decision and rule.name, rule.id


@pytest.mark.parametrize(("rule", "example"), EXAMPLES, ids=[f"{r.id}-{ex[0]}" for r, ex in EXAMPLES])
def test_a_rule_reports_its_examples_and_not_the_sentence_of_the_same_shape(rule: Rule, example: tuple) -> None:
    case, claim, reported, other = example
    found = [f.text for f in lint_text(claim, targets=True) if f.rule == rule.id and f.kind == rule.kind]
    assert reported in found, f"{rule.id} {case}: {claim!r} holds {reported!r} ({found})"
    others = lint_text(other, targets=True)
    assert not [f for f in others if f.rule == rule.id], f"{rule.id} {case}: {other!r} holds none"
    if rule.kind == "claim":  # a sentence that is not a claim holds no claim of any rule
        assert [f.text for f in others if f.kind == "claim"] == [], f"{rule.id} {case}: {other!r}"


def test_every_finding_names_a_rule_that_exists() -> None:
    doc = (
        "It runs at 28 tok/s, TTFT 120 ms, 3x faster, +20% throughput, 11.9 ± 7.2, RTF 0.3, 900 GB/s, 40 req/s.\n"
        "iperf3 reports 9.2 Gbits/sec. Each node has a 10 Gbits/sec uplink.\n"
        "A training run takes 2 hours. Keep TTFT under 150 ms (target).\n"
        "| model | decode (t/s) | change |\n|---|---|---|\n| q4 | 52.5 | -21% |\n"
    )
    found = lint_text(doc, targets=True)
    known = {r.id for r in all_rules()}
    assert found and all(f.rule in known for f in found)
    assert {f.rule for f in found} >= {"FR101", "FR102", "FR111", "FR112", "FR113", "FR116", "FR118", "FR121", "FR122", "FR131"}
    assert {f.rule for f in found if f.kind == "target"} == {"FR201"}


def test_selection_default_all_select_and_ignore() -> None:
    every = {r.id for r in all_rules()}
    default = {r.id for r in all_rules() if not r.preview}
    assert selected() == default
    assert selected(preview=True) == every
    assert selected(["FR1"]) == {i for i in default if i.startswith("FR1")}
    assert selected(["FR101", "FR111"]) == {"FR101", "FR111"}
    assert selected(None, ["FR12"]) == default - {"FR121", "FR122", "FR125", "FR126"}
    assert selected(["ALL"], ["FR201"], preview=True) == every - {"FR201"}
    for preview_rule in every - default:  # a preview rule runs when named by its full id
        assert selected([preview_rule]) == {preview_rule}
    with pytest.raises(UnknownRule):
        selected(["FR999"])
    with pytest.raises(UnknownRule):
        selected(None, ["E501"])
    assert by_id("fr101").id == "FR101"


def test_lint_text_keeps_only_the_rules_asked_for() -> None:
    doc = "TTFT 120 ms and 28 tok/s, 3x faster.\n"
    assert [f.rule for f in lint_text(doc)] == ["FR101", "FR111", "FR121"]
    assert [f.text for f in lint_text(doc, rules=frozenset({"FR111"}))] == ["28 tok/s"]


IGNORE_FORMS = [
    # (document, what stays: (text, rule))
    ("TTFT 120 ms and 28 tok/s <!-- factreg: ignore[FR101] -->\nTTFT 90 ms\n", [("28 tok/s", "FR111"), ("90 ms", "FR101")]),
    ("TTFT 120 ms and 28 tok/s <!-- factreg: ignore[fr101, FR111] -->\n", []),
    ("<!-- factreg: ignore-next-line[FR111] -->\nTTFT 120 ms and 28 tok/s\n28 tok/s\n", [("120 ms", "FR101"), ("28 tok/s", "FR111")]),
    (
        "<!-- factreg: ignore-start[FR101] -->\nTTFT 120 ms, 28 tok/s\nTTFT 90 ms\n<!-- factreg: ignore-end -->\nTTFT 80 ms\n",
        [("28 tok/s", "FR111"), ("80 ms", "FR101")],
    ),
    (
        "<!-- factreg: ignore-file[FR111] -->\nTTFT 120 ms, 28 tok/s\n\n30 tok/s and 3x faster\n",
        [("120 ms", "FR101"), ("3x faster", "FR121")],
    ),
    # the forms without a list still silence every rule
    ("TTFT 120 ms and 28 tok/s <!-- factreg: ignore -->\nTTFT 90 ms\n", [("90 ms", "FR101")]),
    ("<!-- factreg: ignore-file -->\n120 ms, 28 tok/s\n", []),
    # a directive shown as code is an example, not a directive
    ("TTFT 120 ms `<!-- factreg: ignore[FR101] -->`\n", [("120 ms", "FR101")]),
]


@pytest.mark.parametrize(("doc", "kept"), IGNORE_FORMS)
def test_ignore_with_rule_ids_silences_exactly_those_rules(doc: str, kept: list[tuple[str, str]]) -> None:
    assert [(f.text, f.rule) for f in lint_text(doc)] == kept


def test_the_policy_page_is_generated_from_the_rules() -> None:
    written = (Path(__file__).resolve().parent.parent / "docs" / "lint-rules.md").read_text(encoding="utf-8")
    assert written == page(), "regenerate: python -m factreg.docs.lint.rules > docs/lint-rules.md"
    for rule in all_rules():
        assert f"## {rule.id} {rule.name}" in written


DOC = "TTFT 120 ms and 28 tok/s, 3x faster.\nKeep TTFT under 150 ms (target).\n"


def test_cli_names_the_rule_in_text_json_github_and_sarif(cli, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(DOC, encoding="utf-8")
    text = cli("docs", "lint", str(tmp_path))
    assert text.exit_code == 1
    assert [line.split(": ", 1)[1].split(" ", 1)[0] for line in text.stdout.splitlines()] == ["FR101", "FR111", "FR121"]
    rows = json.loads(cli("docs", "lint", "--json", "--targets", str(tmp_path)).stdout)
    assert [(r["text"], r["rule"]) for r in rows] == [
        ("120 ms", "FR101"),
        ("28 tok/s", "FR111"),
        ("3x faster", "FR121"),
        ("150 ms", "FR201"),
    ]
    github = cli("docs", "lint", "--format", "github", str(tmp_path)).stdout.splitlines()
    assert [line.split("title=", 1)[1].split("::", 1)[0] for line in github] == ["FR101", "FR111", "FR121"]
    log = json.loads(cli("docs", "lint", "--format", "sarif", "--targets", str(tmp_path)).stdout)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["FR101", "FR111", "FR121", "FR201"]
    described = {r["id"]: r["shortDescription"]["text"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert set(described) == {"FR101", "FR111", "FR121", "FR201"} and described["FR101"].startswith("duration: ")


def test_cli_select_ignore_and_all(cli, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(DOC, encoding="utf-8")

    def rules(*args: str) -> list[str]:
        return [r["rule"] for r in json.loads(cli("docs", "lint", "--json", *args, str(tmp_path)).stdout)]

    assert rules() == ["FR101", "FR111", "FR121"]
    assert rules("--select", "FR1", "--ignore", "FR12") == ["FR101", "FR111"]
    assert rules("--select", "fr111") == ["FR111"]
    assert rules("--all") == rules("--select", "ALL", "--all")
    clean = cli("docs", "lint", "--ignore", "FR1", str(tmp_path))
    assert clean.exit_code == 0 and clean.stdout == ""
    bad = cli("docs", "lint", "--select", "FR999", str(tmp_path))
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: no lint rule 'FR999'") and bad.stdout == ""


def test_config_select_ignore_and_preview(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.md").write_text(DOC, encoding="utf-8")
    (tmp_path / ".factreg").mkdir()
    config = tmp_path / ".factreg" / "config.toml"
    monkeypatch.chdir(tmp_path)
    config.write_text('[lint]\nselect = ["FR1"]\nignore = ["FR101"]\n', encoding="utf-8")
    assert [r["rule"] for r in json.loads(cli("docs", "lint", "--json", "a.md").stdout)] == ["FR111", "FR121"]
    # a list on the command line replaces the file's (as ruff's --select and --ignore do)
    assert [r["rule"] for r in json.loads(cli("docs", "lint", "--json", "--ignore", "FR12", "a.md").stdout)] == [
        "FR101",
        "FR111",
    ]
    # docs check --lint reads the same selection
    check = cli("docs", "check", "--lint", "--json", "a.md")
    assert [c["rule"] for c in json.loads(check.stdout)["claims"]] == ["FR111", "FR121"]
    config.write_text('[lint]\npreview = "maybe"\n', encoding="utf-8")
    bad = cli("docs", "lint", "a.md")
    assert bad.exit_code == 2 and "lint.preview must be true or false" in bad.stderr
    config.write_text('[lint]\nignore = ["XYZ"]\n', encoding="utf-8")
    bad = cli("docs", "lint", "a.md")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: no lint rule 'XYZ'")


def test_cli_explain_prints_a_rules_doc_and_examples(cli) -> None:
    run = cli("docs", "lint", "--explain", "fr143")
    assert run.exit_code == 0
    rule = by_id("FR143")
    assert run.stdout == explain(rule)
    assert run.stdout.startswith("FR143 real-time-factor\n") and rule.doc in run.stdout
    for _, claim, reported, other in rule.examples:
        assert claim in run.stdout and reported in run.stdout and other in run.stdout
    bad = cli("docs", "lint", "--explain", "FR000")
    assert bad.exit_code == 2 and bad.stderr.startswith("Error: no lint rule") and bad.stdout == ""


def test_importing_the_lint_compiles_no_pattern() -> None:
    # the start-up of every command that never lints pays nothing for the lint's patterns: each is compiled on its
    # first use (factreg.docs.lint.patterns)
    import subprocess
    import sys

    code = (
        "import re, sys\n"
        "import factreg.docs.lint, factreg.docs.lint.rules\n"
        "from factreg.docs.lint import lint_text\n"
        "from factreg.docs.lint.patterns import Lazy\n"
        "mods = [m for n, m in sys.modules.items() if n.startswith('factreg.docs.lint')]\n"
        "lazy = [v for m in mods for v in vars(m).values() if isinstance(v, Lazy)]\n"
        "print(len(lazy), sum(v._rx is not None for v in lazy))\n"
        "lint_text('It runs at 28 tok/s.')\n"
        "print(sum(v._rx is not None for v in lazy))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    (total, at_import), (after_use,) = (map(int, line.split()) for line in run.stdout.splitlines())
    assert total > 150 and at_import == 0 and after_use > 0


def test_docs_check_with_lint_names_the_rules_in_github_and_sarif(cli, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(DOC, encoding="utf-8")
    github = cli("docs", "check", "--lint", "--format", "github", str(tmp_path))
    assert github.exit_code == 1
    assert [line.split("title=", 1)[1].split("::", 1)[0] for line in github.stdout.splitlines()] == [
        "FR101",
        "FR111",
        "FR121",
    ]
    log = json.loads(cli("docs", "check", "--lint", "--format", "sarif", str(tmp_path)).stdout)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["FR101", "FR111", "FR121"]


def test_no_module_of_the_lint_package_is_over_600_lines() -> None:
    # the 2,247-line module was split by family; complexity is kept by ruff (C901, max 25, pyproject.toml)
    package = Path(__file__).resolve().parent.parent / "factreg" / "docs" / "lint"
    sizes = {p.relative_to(package).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in package.rglob("*.py")}
    assert len(sizes) >= 15 and max(sizes.values()) <= 600, sizes


def test_a_bit_rate_stays_with_the_preview_rule() -> None:
    """FR116 reads bytes per second and FLOPS, in table rows and in prose, in the default set; a link's or a codec's
    bit rate (a throttling preset, `| 4G/LTE | 4 Mbps |`) and a default stay FR113's, as they are as often a
    setting."""
    found = lint_text(
        "| 4G/LTE | 4 Mbps | 3 Mbps |\n| nvme0 | 3.2 GB/s | 989 TFLOPS |\n\nThe bus moves 900 GB/s. The link does 4 Gbps."
        " The default recovery rate is 40 MB/s.\n"
    )
    assert [(f.text, f.rule) for f in found] == [
        ("4 Mbps", "FR113"), ("3 Mbps", "FR113"), ("3.2 GB/s", "FR116"), ("989 TFLOPS", "FR116"), ("900 GB/s", "FR116"),
        ("4 Gbps", "FR113"), ("40 MB/s", "FR113"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "doc",
    [
        "- 50% 속도 향상 → 판매량 12% 증가",
        "- 40% 속도 향상 → 가입 15% 증가",
        "P99 latency went from 3 seconds to 500ms, and 40% reduction in user abandonment for API-heavy applications.",
    ],
)
def test_a_business_figure_beside_a_speed_up_is_not_a_default_claim(doc: str) -> None:
    """The change of sales, sign-ups or abandonment a speed-up brought is FR124's (a preview rule), not FR122's."""
    last = [f for f in lint_text(doc) if f.unit == "%"][-1]  # the business figure's change, the line's last percent
    assert last.text in ("12%", "15%", "40%") and last.rule == "FR124"


@pytest.mark.parametrize(
    "doc",
    [
        "| 접근법 | 신뢰도 | 개선율 |\n|---|---|---|\n| AI 전용 | 85.0% | +1.5% |",
        "| 측정 지표 | 전 | 후 | 설명 |\n|---|---|---|---|\n| **성능** | 86 | 98 (14% ↑) | 웹 페이지의 성능 점수 |",
        "Nearly matches Bun on speed but uses ~12% more memory.",
        "그 결과 실험 설정 작성과 리뷰에 소요되는 평균 시간이 2일 → 30분으로 무려 97% 단축되었습니다.",
        "fpng.cpp compression compared to stb_image_write.h: 12-19x faster with roughly 5-11% avg. smaller files.",
        "One surprise result was that scanning a mere 2% of a page at a time can yield improvements in latency.",
    ],
)
def test_a_change_of_a_share_a_score_memory_or_peoples_time_is_not_a_default_claim(doc: str) -> None:
    """A percent change of a percentage, of a score, of memory or of the time people spend is FR124's (preview)."""
    last = [f for f in lint_text(doc) if f.unit == "%"][-1]
    assert last.rule == "FR124", last


def test_a_change_of_a_measured_percentage_row_stays_a_claim() -> None:
    doc = "| Metric | PR no-LP | PR LP |\n|---|---|---|\n| Mean TPOT | +7.6% | **+13.2%** |"
    assert {f.rule for f in lint_text(doc)} == {"FR126"}


def test_a_goal_to_reach_is_no_achievement() -> None:
    doc = "인텔의 NPU는 30% 성능 향상을 목표로 하고 있으나, 국내 기업들이 50% 이상 성능 향상 기준을 달성할 가능성이 높아졌다."
    assert [f.kind for f in lint_text(doc, targets=True) if f.text == "30%"] == ["target"]


def test_a_percent_change_beside_times_and_counts_is_not_a_default_claim() -> None:
    times = "| 지표 | 전 | 후 | 개선율 |\n|---|---|---|---|\n| `GET /api/pets` | 331ms | 37ms | **-89%** |"
    mixed = "| 지표 | 전 | 후 | 개선율 |\n|---|---|---|---|\n| `GET /api/pets` | 쿼리 **155** · 331ms | 쿼리 **5** · 37ms | **-89%** |"
    assert [f.rule for f in lint_text(times) if f.unit == "%"] == ["FR125"]
    assert [f.rule for f in lint_text(mixed) if f.unit == "%"] == ["FR124"]  # the change of the times or the count?


def test_a_default_changed_is_a_setting() -> None:
    doc = "Reduce the default of the `--storage.tsdb.max-block-duration` from 10% to 2% or 1%."
    assert {f.kind for f in lint_text(doc, targets=True)} == {"target"}


@pytest.mark.parametrize(
    "doc",
    [
        "Rate limit: 25 requests per second.",
        "API endpoints have a default limit of 25 requests per second.",
        "| | p50 | p75 | p95 |\n|---|---|---|---|\n| Uncompressed | 3,412 | 8,691 | 43,188 |",
        "I connected 50 clients each publishing at 1000 msgs/s to a broker.",
        "how to improve the broker capability to allow more than 100kmsg/s",
        "ioDebounceMs: 25,",
    ],
)
def test_a_rate_limit_and_a_size_percentile_are_no_claims(doc: str) -> None:
    assert [f for f in lint_text(doc) if f.kind == "claim"] == []


@pytest.mark.parametrize(
    ("doc", "texts"),
    [
        ("Caching should reduce the test time of this repo from 4 minutes to less than 1.5.", ["4 minutes", "1.5"]),
        ("It cut the step from 20+ minutes to ~7.", ["20+ minutes", "7"]),
        ("Build times are cut from around 20 minutes to just over 15", ["20 minutes", "15"]),
        ("It grew from 2 s to 20 GB of logs.", ["2 s"]),  # the second figure has a unit of its own
        ("Speed went from ~40 to ~85 tok/sec.", ["40 to ~85 tok/sec"]),
    ],
)
def test_a_change_written_with_one_unit_reports_both_figures(doc: str, texts: list[str]) -> None:
    assert [f.text for f in lint_text(doc, rules=selected(preview=True))] == texts


@pytest.mark.parametrize(
    ("doc", "text"),
    [
        ('  "output_throughput": 21.667133016541207,', "21.667133016541207"),  # a JSON record's metric
        ("| QPS: 190K, P99: 0.97ms |", "190K"),  # a rate with its magnitude
    ],
)
def test_a_metric_key_before_its_number_is_read(doc: str, text: str) -> None:
    assert text in [f.text for f in lint_text(doc) if f.kind == "claim"]


@pytest.mark.parametrize(
    "doc",
    [
        "Alert: p95 latency > 5s sustained for 5 minutes.",
        "We may want to tweak it so that the loading message only shows after ~150ms+ of loading.",
        "make RATE=10000 DURATION=10s CONNECTIONS=100  # Custom parameters",
        "Warning: Unable to complete 100 samples in 5.0s. You may wish to increase target time to 73.6s.",
        "- 배치 서버에서 fixed-delay 1분 → 10분 마다 처리",
    ],
)
def test_how_long_a_condition_lasts_or_a_message_waits_is_no_claim(doc: str) -> None:
    assert [f for f in lint_text(doc, rules=selected()) if f.kind == "claim"] == []


def test_a_compute_rate_per_chip_in_a_header_names_its_column() -> None:
    doc = "| Hardware | TFLOP/sec/chip | MFU |\n|---|---|---|\n| 1x v5p-128 | 328 | 71.47% |"
    assert [(f.text, f.unit) for f in lint_text(doc)] == [("328", "FLOPS")]


def test_jobs_spans_and_tiles_per_second_are_rates() -> None:
    doc = "throughput: 101.5 job/s. We got 6k spans/second and 10k tiles/s."
    assert [f.text for f in lint_text(doc)] == ["101.5 job/s", "6k spans/second", "10k tiles/s"]


def test_a_measured_download_speed_is_a_default_claim_and_a_plan_is_not() -> None:
    measured = "과기정통부의 조사결과 KT와 LG유플러스의 다운로드 속도는 각각 652.1Mbps, 528Mbps로 집계됐다."
    plan = "1Gbps 상품의 다운로드 속도가 평균 983.25Mbps로 나타났다."
    assert [f.text for f in lint_text(measured, rules=selected())] == ["652.1Mbps", "528Mbps"]
    assert [f.text for f in lint_text(plan, rules=selected())] == ["983.25Mbps"]


def test_a_token_rate_per_device_in_a_header_names_its_column() -> None:
    doc = "| Model | Approx tokens/sec/device |\n|---|---|\n| Llama 3.1 70B | 960 |"
    assert [(f.text, f.unit) for f in lint_text(doc)] == [("960", "tok/s")]


@pytest.mark.parametrize(
    ("doc", "text"),
    [
        ("크롬 개발자도구를 통해 본 결과 TTFB가 약 8초정도 입니다.", "8초"),
        ("Their Largest Contentful Paint (LCP) was averaging 4.2 seconds.", "4.2 seconds"),
        ("- 1회차 : 1,103 ms", "1,103 ms"),
    ],
)
def test_a_web_timing_or_a_numbered_run_is_a_measured_duration(doc: str, text: str) -> None:
    assert [(f.text, f.rule) for f in lint_text(doc)] == [(text, "FR101")]


def test_an_expected_value_column_and_a_value_chosen_are_targets() -> None:
    table = "| 측정 구간 | 측정값 | 기대값 | 판정 |\n|---|---|---|---|\n| 서버 TTFB | 5,800ms | 5~7초 | 정상 |"
    assert [(f.text, f.kind) for f in lint_text(table, targets=True)] == [("5,800ms", "claim"), ("5~7초", "target")]
    assert [f.kind for f in lint_text("많은 회사들은 LCP를 1초로 정하기도 한다.", targets=True)] == ["target"]


@pytest.mark.parametrize(
    ("doc", "found"),
    [
        ("readwhilewriting :       0.220 micros/op 4553529 ops/sec;", [("0.220 micros/op", "FR115"), ("4553529 ops/sec", "FR115")]),
        ("test json_rust_parse  ... bench:       6,670 ns/iter (+/- 507)", [("6,670 ns/iter", "FR115")]),
        ("http_reqs..................: 130736 3772.018811/s", [("3772.018811/s", "FR115")]),
        ("Messages/sec: 19776911.69", [("19776911.69", "FR115")]),
        ("MB/sec: 603.54", [("603.54", "FR116")]),
        ("Statements/sec: 990.63", [("990.63", "FR115")]),
        ("Total: 264.10 MB Transfer Rate: 26.48 MB/Sec", [("26.48 MB/Sec", "FR116")]),
        ("serde x 3,137,878 ops/sec ±1.19% (91 runs sampled)", [("3,137,878 ops/sec", "FR115"), ("±1.19%", "FR146")]),
        ("> real    0m22.453s", [("0m22.453s", "FR101")]),  # a quoted `time` report: `>` opens a quote, it bounds nothing
        ("time                 892.0 μs   (885.7 μs .. 897.2 μs)", [("892.0 μs", "FR101"), ("885.7 μs", "FR101"), ("897.2 μs", "FR101")]),
        ("change: [+4.4991% +7.4272% +10.486%] (p = 0.00 < 0.05)", [("4.4991%", "FR122"), ("7.4272%", "FR122"), ("10.486%", "FR122")]),
        ("Framerate sticks at around 5-10 FPS throughout the game.", [("5-10 FPS", "FR117")]),
    ],
)
def test_what_benchmark_tools_print_is_read_by_a_default_rule(doc: str, found: list[tuple[str, str]]) -> None:
    assert [(f.text, f.rule) for f in lint_text(doc)] == found


@pytest.mark.parametrize(
    "doc",
    [
        "| 지표 | 값 |\n|---|---|\n| **RTO** (Recovery Time Objective) | 30-60분 |",
        "첫 SSE 이벤트가 전송된 이후의 생성 시간은 115초 응답 시작 기한에 포함되지 않는다.",
    ],
)
def test_a_recovery_objective_and_a_deadline_are_targets(doc: str) -> None:
    assert [f.kind for f in lint_text(doc, targets=True)] == ["target"]


def test_a_min_column_of_ratios_holds_no_minutes() -> None:
    doc = "| Num Bits | Samples | Mean Ratio | Min Ratio | Max Ratio |\n|---|---|---|---|---|\n| 1 | 100,000 | 1.0005 | 0.8962 | 1.1260 |"
    assert lint_text(doc, targets=True) == []


def test_a_site_as_the_subject_of_a_sentence_is_an_illustration() -> None:
    doc = "A site with a 500ms total load time but 1.8-second TTFB will feel slower than one with 200ms TTFB."
    assert [f for f in lint_text(doc) if f.kind == "claim"] == []


@pytest.mark.parametrize(
    "doc",
    [
        "| Model | CPU | GPU | Speed-up | Similarity |\n|---|---|---|---|---|\n| large-v3 | 77.09s | 29.72s | 2.59x | 92.63% |",
        "| 기준 | eDOCr | VL API | 가중치 |\n|---|---|---|---|\n| 처리 시간 | 23초 | 50초 | 15% |",
    ],
)
def test_a_last_column_after_a_ratio_or_of_weights_is_no_change(doc: str) -> None:
    assert [f.rule for f in lint_text(doc) if f.unit == "%"] == ["FR152"]


def test_bsd_time_openssl_speed_and_ffmpeg_progress_are_tool_rows() -> None:
    doc = (
        "138.87 real      1696.52 user        46.86 sys\n\n"
        "aes-128 cbc     105336.34k   112751.42k   114742.10k   115345.41k   113988.95k\n\n"
        "frame=  132 fps= 50 q=28.0 size=N/A time=00:00:16.77 bitrate=N/A speed= 6.4x\n"
    )
    assert [f.text for f in lint_text(doc) if f.rule == "FR146"] == [
        "138.87 real      1696.52 user        46.86",
        "105336.34k   112751.42k   114742.10k   115345.41k   113988.95k",
        "50",
    ]


@pytest.mark.parametrize(
    "doc",
    ["1회 실패: 5초 → 2회: 10초 → 3회: 20초 → 4회: 40초", "waiting time: p1: 0초/ p2: 24초/ p3: 27초"],
)
def test_a_retry_schedule_and_a_waiting_time_are_no_default_claims(doc: str) -> None:
    assert [f for f in lint_text(doc, rules=selected()) if f.kind == "claim"] == []


def test_a_segment_length_set_beside_a_measured_latency_is_a_setting() -> None:
    doc = "HLS playlist configured with a segment duration of 2 seconds, produced latency between 6-10 seconds."
    assert [(f.text, f.kind) for f in lint_text(doc, targets=True)] == [("2 seconds", "target"), ("6-10 seconds", "claim")]


@pytest.mark.parametrize(
    ("doc", "text"),
    [("**예상 효과**: 50초 → 37초 (약 26% 단축)", "50초"), ("Expected ~22 min -> a few minutes.", "22 min")],
)
def test_an_estimate_stated_as_a_fact_is_a_measured_claim(doc: str, text: str) -> None:
    assert (text, "FR101") in [(f.text, f.rule) for f in lint_text(doc)]


def test_frames_a_game_benchmark_recorded_are_a_rate() -> None:
    doc = "GTX970은 평균 51프레임을 기록해, 평균 54프레임을 기록한 GTX1060과 엇비슷했다."
    assert [(f.text, f.unit, f.rule) for f in lint_text(doc)] == [("51프레임", "fps", "FR117"), ("54프레임", "fps", "FR117")]
    assert lint_text("30프레임 애니메이션을 만들었다.", rules=selected()) == []


def test_how_often_is_a_setting_and_how_long_a_claim() -> None:
    doc = "그런데 5분에 한 번씩 모든 api를 호출하고, 돌아오는 응답의 시간이 대략적으로 2초정도 걸렸다."
    assert [(f.text, f.kind) for f in lint_text(doc, targets=True)] == [("5분", "target"), ("2초", "claim")]
