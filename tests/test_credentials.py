"""The one secret policy (:mod:`tkgqa.credentials`): what the LLM cache key drops is what the service and
run configs mask, for keys, headers and options alike."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tkgqa.credentials import REDACTED, is_secret_field, redact, without_secrets

SECRETS = ["api_key", "X-API-Key", "Authorization", "openai_api_key", "client_secret", "db_password",
           "passwd", "access_token", "token", "Proxy-Authorization", "aws_credentials", "bearer"]  # fmt: skip
NOT_SECRETS = ["max_tokens", "max_completion_tokens", "tokenizer", "logit_bias", "model", "seed", "policy"]


def test_secret_names() -> None:
    assert all(is_secret_field(name) for name in SECRETS)
    assert not any(is_secret_field(name) for name in NOT_SECRETS)


def test_dropped_and_masked_by_the_same_rule() -> None:
    data = {name: "v" for name in SECRETS + NOT_SECRETS}
    assert without_secrets({"extra_headers": data}) == {"extra_headers": {n: "v" for n in NOT_SECRETS}}
    masked = redact({"extra_headers": data})["extra_headers"]
    assert {n for n, v in masked.items() if v == REDACTED} == set(SECRETS)


def test_key_looking_text_is_masked() -> None:
    assert redact(["key sk-abcdefghijklmnopqrst used"]) == ["key *** used"]


@given(st.text(max_size=30))
def test_redact_masks_exactly_what_without_secrets_drops(name: str) -> None:
    kept = without_secrets({name: 1})
    masked = redact({name: 1})
    assert (kept == {}) == (masked == {name: REDACTED})
