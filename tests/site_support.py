"""A registry for the HTML report's tests: the case study's gamebox decode history (a drop when the build changed),
a decision and a correction, and facts carrying hostile text (markup, scripts, URLs, a secret)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from tests.conftest import ago

SHIFTED = "gamebox/35b-a3b/tg32"
OLD, NEW = "8cf427ff", "1a2b3c4"
MONTHLY = [28.3, 27.6, 28.1, 28.9, 27.8, 28.4, 27.5, 28.0, 28.6, 27.9, 28.2]
WEEKLY = [11.9, 12.6, 11.4, 12.2]
HOSTILE_FACT = "night/hostile/ttft"
SCRIPT = "<script>alert('x')</script>"
IMG = '"><img src=x onerror=alert(1)>'
URL = "https://evil.example/track.png"
SECRET = "sk-live0123456789abcdefXYZ"
UNIT = "s</text><script>alert(3)</script>"
HOSTILE_TEXTS = (SCRIPT, IMG, "</style><style>body{display:none}</style>", "</title><script>alert(2)</script>", UNIT)


def ok(r: Any) -> Any:
    assert r.exit_code == 0, r.stderr
    return r


def build_registry(cli: Any, tmp_path: Path) -> None:
    """Record the histories, the decision and the correction through the CLI, as a team would."""
    for k, v in enumerate(MONTHLY):
        samples = ",".join(str(round(v + d, 2)) for d in (-0.2, 0.0, 0.2))
        ok(cli("record", SHIFTED, "-m", "tg_rate", "--samples", samples, "-c", "machine=gamebox",
               "-c", f"build_commit={OLD}", "-c", "model=35b-a3b", "--measured-at", ago(30 * (len(MONTHLY) + 1 - k))))
    rows = [{"fact_version": len(MONTHLY), "verified_at": ago(28 - 7 * i), "verdict": "conditions_changed",
             "method_kind": "llama-bench", "hostname": "gamebox", "value": v, "spread": 0.2, "n": 3,
             "samples": json.dumps([v - 0.2, v, v + 0.2]),
             "observed": json.dumps({"build_commit": NEW, "machine": "gamebox"}), "diff": "{}", "message": "re-run"}
            for i, v in enumerate(WEEKLY)]
    line = next(obj for obj in map(json.loads, ok(cli("export")).stdout.splitlines())
                if obj.get("kind") == "fact" and obj["id"] == SHIFTED)
    line["verifications"] = rows  # the fact as the cron machine exports it, with its verifications
    path = tmp_path / "verifications.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ok(cli("import", str(path)))
    ok(cli("record", "night/35b-a3b/ttft", "-m", "ttft", "--samples", "0.41,0.45,0.52", "-c", "machine=gamebox",
           "--measured-at", ago(3)))
    ok(cli("record", "night/35b-a3b/ttft-warm", "-m", "ttft", "--samples", "0.44,0.45,0.46,0.45,0.47",
           "-c", "machine=gamebox", "-c", "warm=true", "--measured-at", ago(2)))
    ok(cli("record", HOSTILE_FACT, "-m", "hostile_ttft", "--unit", UNIT, "--direction", "lower",
           "--samples", "0.5,0.6,0.7", "-c", f"machine={IMG}",
           "-c", "build=</style><style>body{display:none}</style>", "--subject", SCRIPT,
           "--note", f"{SCRIPT} see {URL} api_key={SECRET} </title><script>alert(2)</script>", "--measured-at", ago(1)))
    ok(cli("decision", "add", f"Voice front end {SCRIPT}", "--cites", f"{SHIFTED},night/35b-a3b/ttft,{HOSTILE_FACT}",
           "--date", ago(20, date_only=True)))
    ok(cli("correct", "night/35b-a3b/ttft", "--by", "night/35b-a3b/ttft-warm", "--as", "night/35b-a3b/ttft-warm",
           "--cause", f"cold start {IMG}"))


class Page(HTMLParser):
    """What a test reads in a generated page: elements with their attributes, text, scripts and styles."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.raw[self._in][-1] += data
        else:
            self.text.append(data)

    def find(self, tag: str, cls: str | None = None) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements
                if t == tag and (cls is None or cls in (a.get("class") or "").split())]
