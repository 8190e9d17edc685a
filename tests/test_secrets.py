"""Secrets: `${ENV}` expansion at run time, redaction of everything that looks like a credential."""

from __future__ import annotations

import pytest

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
    }
    assert secrets.literal_secret_headers(headers) == ["X-Auth-Token", "Cookie"]
    assert secrets.env_names("a ${A} b ${B_2}") == ["A", "B_2"]
