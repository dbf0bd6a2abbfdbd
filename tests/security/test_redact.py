"""PII redaction: every rule on true positives, and what must survive untouched."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault import ConfigError, Settings
from memvault.security.redact import Redactor, entropy, iban_valid, luhn

REDACTOR = Redactor()

FOUND = [
    ("Mail alice.smith+work@mail.example.co.uk now", "Mail [EMAIL] now", "email"),
    ("écrivez à zoé@exemple.fr", "écrivez à [EMAIL]", "email"),
    ("call me at +44 20 7946 0958", "call me at [PHONE]", "phone"),
    ("or (415) 555-2671 in the US", "or [PHONE] in the US", "phone"),
    ("Berlin office: 030 12345678", "Berlin office: [PHONE]", "phone"),
    ("+33 1 42 68 53 00", "[PHONE]", "phone"),
    ("my key is sk-proj-abcdefghijklmnopqrstuvwxyz123456", "my key is [SECRET]", "secret"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token [SECRET]", "secret"),
    ("AKIAIOSFODNN7EXAMPLE", "[SECRET]", "secret"),
    ("password=hunter2xyz", "password=[SECRET]", "secret"),
    ('"api_key": "Zx81-kq"', '"api_key": "[SECRET]"', "secret"),
    ("Bearer abcdefghijklmnopqrstuvwxyz012345", "Bearer [SECRET]", "secret"),
    ("random Zk3pQ9vR2xL7mN4bT8wY1cF6hJ0s", "random [SECRET]", "secret"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
        "jwt [SECRET]",
        "secret",
    ),
    ("card 4111 1111 1111 1111 expires", "card [CARD] expires", "card"),
    ("amex 3782-822463-10005", "amex [CARD]", "card"),
    ("IBAN DE89 3704 0044 0532 0130 00", "IBAN [IBAN]", "iban"),
    ("pay GB82WEST12345698765432 today", "pay [IBAN] today", "iban"),
    ("FR14 2004 1010 0505 0001 3M02 606", "[IBAN]", "iban"),
    ("server at 192.168.1.20 and 8.8.8.8", "server at [IP] and [IP]", "ip"),
    ("ipv6 2001:db8::8a2e:370:7334", "ipv6 [IP]", "ip"),
]

SURVIVE = [
    "order #123456789 shipped on 2024-05-03 at 12:30:45",
    "version 1.2.3 and v10.4.1, Python 3.11.7",
    "costs $1,299.00 or 1299 EUR, 50% off",
    "ISBN 978-3-16-148410-0",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "localhost 127.0.0.1, ::1 and 0.0.0.0",
    "card-like 4111 1111 1111 1112 (fails Luhn)",
    "IBAN-like DE89 3704 0044 0532 0130 01 (fails mod-97)",
    "pkg@1.2.3 and @alice",
    "10.0.0.1.5 is a version, not an address",
    "zip 94107, year 2024, port 8080",
    "03/05/2024 and 12/31/1999 at 10:30",
    "snake_case_identifier_that_is_long_enough",
    "https://example.com/docs/getting-started?page=2",
    "tracking 1Z999AA10123456784",
    "[EMAIL] and [PHONE] are placeholders",
    "Ünïcödé text, 中文, emoji 🎉 and nothing else",
]


@pytest.mark.parametrize(("text", "expected", "rule"), FOUND)
def test_each_rule_finds_what_it_is_for(text: str, expected: str, rule: str) -> None:
    redaction = REDACTOR.redact(text)
    assert redaction.text == expected
    assert set(redaction.counts) == {rule} and redaction.total >= 1


@pytest.mark.parametrize("text", SURVIVE)
def test_what_is_not_personal_survives(text: str) -> None:
    redaction = REDACTOR.redact(text)
    assert redaction.text == text and redaction.total == 0


def test_counts_add_up_per_rule() -> None:
    text = "a@b.io, c@d.io, call +1 415 555 2671, from 8.8.8.8"
    assert dict(REDACTOR.redact(text).counts) == {"email": 2, "phone": 1, "ip": 1}


def test_rules_are_chosen_by_settings() -> None:
    only_email = Redactor.from_settings(Settings(redact="email"))
    redaction = only_email.redact("a@b.io or +44 20 7946 0958")
    assert redaction.text == "[EMAIL] or +44 20 7946 0958"
    assert Redactor.from_settings(Settings(redact="")).redact("a@b.io").text == "a@b.io"
    with pytest.raises(ConfigError, match="unknown redaction rules"):
        Redactor(["email", "ssn"])
    with pytest.raises(ConfigError, match="phone regions"):
        Redactor(phone_regions=["XX"])


def test_the_checks_themselves() -> None:
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    assert iban_valid("GB82WEST12345698765432") and not iban_valid("GB83WEST12345698765432")
    assert entropy("aaaa") == 0 and entropy("abcd") == 2


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=300))
def test_redaction_is_idempotent_and_never_raises(text: str) -> None:
    once = REDACTOR.redact(text).text
    assert REDACTOR.redact(once).text == once


@given(st.text(alphabet=st.characters(categories=["L", "Zs", "P"]), max_size=200))
def test_plain_words_without_digits_or_at_signs_are_untouched(text: str) -> None:
    if "@" not in text and len(max(text.split() or [""], key=len)) < 24:
        assert REDACTOR.redact(text).text == text
