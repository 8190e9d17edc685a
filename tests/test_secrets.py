"""Secrets: `${ENV}` expansion at run time, redaction of everything that looks like a credential."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from factreg import secrets
from factreg.errors import UsageError


def test_expand_uses_the_environment_and_remembers_the_value() -> None:
    value = secrets.expand("Bearer ${SOME_TOKEN}", {"SOME_TOKEN": "tok-expanded-xyz"})
    assert value == "Bearer tok-expanded-xyz"
    assert "tok-expanded-xyz" not in secrets.redact("the key was tok-expanded-xyz, see")


def test_unset_variable_names_only_the_variable() -> None:
    with pytest.raises(UsageError, match=r"NOT_SET_ANYWHERE is not set"):
        secrets.expand("Bearer ${NOT_SET_ANYWHERE}", {})


def test_redact_bearer_basic_and_key_shapes() -> None:
    text = (
        "Authorization: Bearer abcdEFGH1234 | Authorization: Basic dXNlcjpwYXNz | api_key=hunter22 | "
        '{"api-key": "zzzz9999"} | sk-abcdefghijkl0123 | the first token arrives | basic usage'
    )
    out = secrets.redact(text)
    for secret in ("abcdEFGH1234", "dXNlcjpwYXNz", "hunter22", "zzzz9999", "sk-abcdefghijkl0123"):
        assert secret not in out
    assert "Bearer ***" in out and "Basic ***" in out
    assert out.endswith("the first token arrives | basic usage")  # ordinary words stay


def test_literal_credential_in_a_header_is_remembered() -> None:
    name, value = secrets.parse_header("X-Api-Key: literal-key-value-42")
    assert (name, value) == ("X-Api-Key", "literal-key-value-42")
    assert secrets.redact("sent literal-key-value-42") == "sent ***"


@pytest.mark.parametrize("text", ["no colon", ": empty name", "Bad Name: x", "X-A: a\nb"])
def test_bad_headers_are_refused(text: str) -> None:
    with pytest.raises(UsageError):
        secrets.parse_header(text)


def test_which_headers_may_be_stored() -> None:
    headers = {
        "Authorization": "Bearer ${TOKEN}",
        "X-Api-Key": "${KEY}",
        "X-Auth-Token": "Bearer literal",
        "Cookie": "session=abc",
        "X-Trace": "plain",
        "apikey": "abc123literal",
        "X-Auth": "${AUTH}",
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "User-Agent": "me/1.0",
    }
    # any header's literal value may be a credential, unless the header is known harmless
    assert secrets.literal_secret_headers(headers) == ["X-Auth-Token", "Cookie", "X-Trace", "apikey"]
    assert secrets.env_names("a ${A} b ${B_2}") == ["A", "B_2"]


# Each form of credential the one redaction rule knows, with the secret that must not survive it.
CREDENTIALS = [
    ("password: hunter2xyz", "hunter2xyz"),
    ("password=hunter2xyz", "hunter2xyz"),
    ('{"password": "correct horse battery"}', "correct horse battery"),
    ("api_key=k3y-abcdef123", "k3y-abcdef123"),
    ("OPENAI_API_KEY=plainletterskey", "plainletterskey"),
    ("token=tok3n-abcdef99", "tok3n-abcdef99"),
    ("secret=s3cr3t-value", "s3cr3t-value"),
    ("Authorization: Bearer abcDEF123456ghi", "abcDEF123456ghi"),
    ("sk-proj-abcdef0123456789", "sk-proj-abcdef0123456789"),
    ("ghp_abcdefghijklmnop0123456789", "ghp_abcdefghijklmnop0123456789"),
    ("xoxb-12345678-abcdefgh", "xoxb-12345678-abcdefgh"),
    ("https://alice:pa55word-xyz@db.example.invalid/x", "pa55word-xyz"),
    ("postgresql://u:p@ss-w0rd@h:5432/db", "p@ss-w0rd"),
    ("https://api.example.invalid/v1?key=AIzaSyQ1w2e3r4t5&model=x", "AIzaSyQ1w2e3r4t5"),
    ("https://api.example.invalid/v1?model=x&api_key=zz9", "zz9"),
    ("https://api.example.invalid/v1?token=42", "token=42"),
]


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS)
def test_every_credential_form_is_masked(text: str, secret: str) -> None:
    out = secrets.redact(f"see {text} here")
    assert secret not in out and secrets.MASK in out
    assert out.startswith("see ") and out.endswith(" here")
    assert secrets.redact(out) == out  # masking twice changes nothing


def test_url_keeps_its_user_host_and_other_parameters() -> None:
    assert secrets.redact("https://alice:pw12@h.invalid:8080/db?sslmode=require&password=zz&x=1") == (
        "https://alice:***@h.invalid:8080/db?sslmode=require&password=***&x=1"
    )


@pytest.mark.parametrize(
    "prose",
    [
        "token=42 tokens per step, tokens=1234567abc, max_tokens=512, n_token: 12",
        "the first token arrives after 0.41 s; a bearer token is sent with each request",
        "the secret: warm-up matters; token: first-token latency",
        "decode at 28 tok/s on http://127.0.0.1:8080/v1?model=x&n=3 (ctx=8192, batch=512)",
        "Bearer ${API_KEY} and password=${DB_PASSWORD}",
        "pk_fact_version and sk-learn",
    ],
)
def test_ordinary_prose_and_numbers_stay(prose: str) -> None:
    assert secrets.redact(prose) == prose


def test_remembered_value_is_masked_wherever_it_appears() -> None:
    secrets.remember("plain words rem3mbered")
    assert secrets.redact("the value plain words rem3mbered leaked") == "the value *** leaked"


def test_redact_data_masks_strings_and_values_under_credential_keys() -> None:
    data = {
        "token": "abc123def",
        "OPENAI_API_KEY": "lettersonly",
        "n_tokens": "128",
        "tokens": 42,
        "list": ["password=foo1", 3],
        "nested": {"url": "https://u:pw@h.invalid/x"},
    }
    assert secrets.redact_data(data) == {
        "token": "***",
        "OPENAI_API_KEY": "***",
        "n_tokens": "128",
        "tokens": 42,
        "list": ["password=***", 3],
        "nested": {"url": "https://u:***@h.invalid/x"},
    }


def test_dumps_redacts_like_redact_data_and_leaves_clean_data_alone() -> None:
    clean = [{"id": f"gamebox/m{i}/tg32", "value": 28.5, "flags": ["high_variance"], "unit": "tok/s"} for i in range(3)]
    assert secrets.dumps(clean, indent=2) == json.dumps(clean, indent=2)
    dirty = [*clean, {"note": "password: hunter2xyz", "token": "abc123def", "url": "https://u:pw12@h.invalid/"}]
    assert json.loads(secrets.dumps(dirty)) == secrets.redact_data(dirty)
    secrets.remember('q"uoted-s3cret')  # found in the JSON text although it is escaped there
    assert 'q\\"uoted-s3cret' not in secrets.dumps([{"x": 'say q"uoted-s3cret'}])


FRAGMENTS = [
    "password", "PASSWD", "pwd", "api_key", "Api-Key", "token", "TOKEN", "secret", "client_secret", "Bearer",
    "authorization", "Basic", "sig", "key", "sk-", "sk_", "pk_", "ghp_", "GHO-", "github_pat_", "xoxb-", "hf_",
    "glpat-", "AKIA", "https://", "u", "@", "h.invalid", "?", "&", "=", ":", ": ", '"', "'", " ", "/", "-", "_",
    "0123456789", "abcdefGHIJ", "hunter2xyz", "ABCDEFGHIJKLMNOP", "***", "${VAR}", "tok/s", "28.5", "\n",
    "X-Amz-Signature", "İ", "ß",
]


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join))
@example("AKIAABCDEFGHIJKLMNOPghp_github_pat_")  # the mask opens the boundary `ghp_…` needs: masked twice
@example("AKIAABCDEFGHIJKLMNOPkey=hunter2xyz")  # … and the one an earlier rule (`key=`) needs
@settings(max_examples=400, deadline=None)
def test_the_shortcuts_never_skip_text_a_rule_would_mask(text: str) -> None:
    ungated = text
    for value in secrets._known_sorted:  # secrets other tests remembered in this process are masked first too
        ungated = ungated.replace(value, secrets.MASK)
    for _ in range(secrets._PASSES):  # every rule, ungated, until nothing changes
        before = ungated
        for _, apply in secrets._RULES:
            ungated = apply(ungated)
        if ungated == before:
            break
    out = secrets.redact(text)
    assert out == ungated  # each rule's gate only skips text the rule leaves as it is
    if not secrets._may_hold_credential(text) and not any(v in text for v in secrets._known_sorted):
        assert out == text  # nor does the test on a whole JSON text
    assert secrets.redact(out) == out  # masking twice changes nothing


def test_importing_secrets_compiles_no_pattern() -> None:
    """Every command imports this module; its patterns are compiled on their first use, not at import (a fresh
    interpreter: this test process has used them already)."""
    import subprocess
    import sys

    probe = (
        "import re, factreg.secrets as s\n"
        "def compiled():\n"
        "    found = [v for v in vars(s).values() if isinstance(v, re.Pattern)] + [v for v in s._NEEDED\n"
        "             if isinstance(v, re.Pattern)]\n"
        "    return len(found + [v for v in vars(s).values() if type(v).__name__ == '_Lazy' and 'search' in vars(v)])\n"
        "print(compiled())\n"
        "masked = s.redact('api_key=hunter22 Authorization: Bearer abcdEFGH1234')\n"
        "print(compiled(), masked)\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    before, after = r.stdout.splitlines()
    assert before == "0"  # nothing compiled by the import
    count, masked = after.split(" ", 1)
    assert int(count) > 0 and masked == "api_key=*** Authorization: Bearer ***"  # compiled when used, and at work
