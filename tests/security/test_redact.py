"""PII redaction: every rule on what it is for, and everything that must survive untouched."""

from __future__ import annotations

import random
import string

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault import ConfigError, Settings
from memvault.security import guard
from memvault.security.redact import (
    ENTROPY_BITS,
    IBAN_LENGTHS,
    MAX_MEAN_RUN,
    MIN_SECRET_LENGTH,
    PLACEHOLDERS,
    RULES,
    Redactor,
    entropy,
    iban_valid,
    luhn,
    mean_run,
    plain,
    random_looking,
)

REDACTOR = Redactor()

FOUND = [
    # email
    ("Mail alice.smith+work@mail.example.co.uk now", "Mail [EMAIL] now", "email"),
    ("écrivez à zoé@exemple.fr", "écrivez à [EMAIL]", "email"),
    ("o'brien@example.ie wrote", "[EMAIL] wrote", "email"),
    ("<bob@example.com>, 'carol@example.org'", "<[EMAIL]>, '[EMAIL]'", "email"),
    ("mailto:bob@example.com?subject=hi", "mailto:[EMAIL]?subject=hi", "email"),
    (
        "[bob@example.com](mailto:bob@example.com), eve@example.com[1]",
        "[[EMAIL]](mailto:[EMAIL]), [EMAIL][1]",
        "email",
    ),
    ("Email: BOB@EXAMPLE.COM.", "Email: [EMAIL].", "email"),
    ("用户@例子.广告 and x@xn--p1ai.xn--p1ai", "[EMAIL] and [EMAIL]", "email"),
    # phone: international anywhere, national in the configured regions
    ("call me at +44 20 7946 0958", "call me at [PHONE]", "phone"),
    ("UK: 020 7946 0958 or 07911 123456", "UK: [PHONE] or [PHONE]", "phone"),
    ("or (415) 555-2671 in the US", "or [PHONE] in the US", "phone"),
    ("415.555.2671, +1-415-555-2671, tel:+14155552671", "[PHONE], [PHONE], tel:[PHONE]", "phone"),
    ("Berlin office: 030 12345678, +49 (0) 30 1234567", "Berlin office: [PHONE], [PHONE]", "phone"),
    ("Paris +33 1 42 68 53 00 / 06 12 34 56 78", "Paris [PHONE] / [PHONE]", "phone"),
    ("Madrid +34 912 345 678, Roma +39 06 6982 0000", "Madrid [PHONE], Roma [PHONE]", "phone"),
    ("Amsterdam +31 20 123 4567", "Amsterdam [PHONE]", "phone"),
    ("Sydney +61 2 9876 5432, mobile 04 12 345 678", "Sydney [PHONE], mobile [PHONE]", "phone"),
    ("Toronto +1 (416) 555-0199", "Toronto [PHONE]", "phone"),
    ("Mumbai +91-98765-43210 or 98765 43210", "Mumbai [PHONE] or [PHONE]", "phone"),
    ("Tokyo +81 3-1234-5678, 北京 +86 138 0013 8000", "Tokyo [PHONE], 北京 [PHONE]", "phone"),
    # secret: known prefixes
    ("key sk-proj-Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789", "key [SECRET]", "secret"),
    ("sk-ant-api03-Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789-AbCd", "[SECRET]", "secret"),
    ("token ghp_Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789", "token [SECRET]", "secret"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH", "[SECRET]", "secret"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[SECRET]", "secret"),
    (
        "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "[SECRET] [SECRET]",
        "secret",
    ),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[SECRET]", "secret"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [SECRET]", "secret"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
        "jwt [SECRET]",
        "secret",
    ),
    ("Authorization: Bearer abc.def-ghi_jkl~mno123", "Authorization: Bearer [SECRET]", "secret"),
    ("Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQ=", "Authorization: Basic [SECRET]", "secret"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY----- ok",
        "[SECRET] ok",
        "secret",
    ),
    # secret: assignments and URLs
    ("password=hunter2xyz", "password=[SECRET]", "secret"),
    ("password: hunter2", "password: [SECRET]", "secret"),
    ('{"api_key": "abc123def456"}', '{"api_key": "[SECRET]"}', "secret"),
    ('DB_PASSWORD="correct horse battery staple"', 'DB_PASSWORD="[SECRET]"', "secret"),
    (
        "--password=s3cr3t! and client_secret = 'q8v-Xz_9'",
        "--password=[SECRET] and client_secret = '[SECRET]'",
        "secret",
    ),
    ("aws_secret_access_key = 0123456789abcdef", "aws_secret_access_key = [SECRET]", "secret"),
    ("export GITHUB_TOKEN=abc123", "export GITHUB_TOKEN=[SECRET]", "secret"),
    (
        "postgres://admin:S3cretPass@db.internal:5432/app",
        "postgres://admin:[SECRET]@db.internal:5432/app",
        "secret",
    ),
    ("redis://:pw12345@cache:6379", "redis://:[SECRET]@cache:6379", "secret"),
    (
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "https://hooks.slack.com/services/[SECRET]",
        "secret",
    ),
    # secret: random-looking words
    ("random Zk3pQ9vR2xL7mN4bT8wY1cF6hJ0s", "random [SECRET]", "secret"),
    (
        "https://example.com/reset/Zk3pQ9vR2xL7mN4bT8wY1cF6hJ0s/confirm",
        "https://example.com/reset/[SECRET]/confirm",
        "secret",
    ),
    # card
    ("card 4111 1111 1111 1111 expires", "card [CARD] expires", "card"),
    ("visa 4111-1111-1111-1111, mc 5555555555554444", "visa [CARD], mc [CARD]", "card"),
    ("mc 2223003122003222 and amex 3782-822463-10005", "mc [CARD] and amex [CARD]", "card"),
    ("amex 378282246310005; discover 6011111111111117", "amex [CARD]; discover [CARD]", "card"),
    ("jcb 3530111333300000, diners 36227206271667", "jcb [CARD], diners [CARD]", "card"),
    ("unionpay 6200000000000005", "unionpay [CARD]", "card"),
    ("card:4111111111111111.", "card:[CARD].", "card"),
    # iban
    ("IBAN DE89 3704 0044 0532 0130 00", "IBAN [IBAN]", "iban"),
    ("pay GB82WEST12345698765432 today", "pay [IBAN] today", "iban"),
    ("FR14 2004 1010 0505 0001 3M02 606", "[IBAN]", "iban"),
    ("NL91 ABNA 0417 1643 00, BE68 5390 0754 7034", "[IBAN], [IBAN]", "iban"),
    ("ES91 2100 0418 4502 0005 1332", "[IBAN]", "iban"),
    ("IT60 X054 2811 1010 0000 0123 456", "[IBAN]", "iban"),
    ("CH93 0076 2011 6238 5295 7 and NO93 8601 1117 947", "[IBAN] and [IBAN]", "iban"),
    ("AT61 1904 3002 3457 3201, PL61 1090 1014 0000 0712 1981 2874", "[IBAN], [IBAN]", "iban"),
    ("DE89370400440532013000 GB82WEST12345698765432", "[IBAN] [IBAN]", "iban"),
    # ip
    ("server at 192.168.1.20 and 8.8.8.8", "server at [IP] and [IP]", "ip"),
    (
        "listen 192.168.1.20:8080, range 10.0.0.1-10.0.0.255",
        "listen [IP]:8080, range [IP]-[IP]",
        "ip",
    ),
    ("ipv6 2001:db8::8a2e:370:7334", "ipv6 [IP]", "ip"),
    ("[2001:db8::1]:443 and fe80::1%eth0", "[[IP]]:443 and [IP]%eth0", "ip"),
    ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", "[IP]", "ip"),
    ("mapped ::ffff:8.8.8.8", "mapped [IP]", "ip"),
]

SURVIVES = [
    # order numbers, tracking ids, ids
    "order #123456789 shipped",
    "order 4155552671, Order no. 020 7946 0958, ticket: 4155552671",
    "invoice INV-2024-000123, ref 98765 43210",
    "tracking 1Z999AA10123456784, USPS 9400 1000 0000 0000 0000 00, Amazon TBA123456789000",
    "pid 123456, PR #12345, AWS account 123456789012",
    "tweet 1783456789012345678, discord 412345678901234567",
    "https://example.com/users/4155552671 and https://example.com/?id=4155552671&x=1",
    # dates and times
    "shipped on 2024-05-03 at 12:30:45",
    "03/05/2024 and 12/31/1999 at 10:30, 3 May 2024",
    "2024-05-03T12:30:45Z, 20240503, window 10:30\u201311:45",
    "timestamp 1716800000, in ms 1716800000123",
    # versions and semver
    "version 1.2.3 and v10.4.1, Python 3.11.7",
    "1.2.3-beta.4+build.5678, node v20.11.1",
    "version 10.0.0.1, v1.2.3.4, windows 10.0.19045.3803, chrome 124.0.6367.91",
    # prices, percentages, quantities
    "costs $1,299.00 or 1299 EUR, 50% off",
    "€1.299,00 or ₹1,23,456; 1,234,567 users at 98.6% uptime",
    "1 234 567 890 bytes, 0.1234567890 probability",
    "lat 48.8566, lon 2.3522 and 37.7749, -122.4194",
    # ISBN, ZIP codes, years, ports
    "ISBN 978-3-16-148410-0, ISBN-10 0-306-40615-2, ISBN 9783161484100",
    "zip 94107, zip 90210-1234, SW1A 1AA, year 2024, port 8080",
    # UUIDs, git SHAs, digests
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    # code identifiers and references
    "snake_case_identifier_that_is_long_enough",
    "AbstractSingletonProxyFactoryBean2 calls getUserAccountBalanceForCustomer2",
    "CPyBytesWriter_WriteF32BE, HTTPServerErrorResponseHandlerV2",
    "iPhone15ProMax-256GB-NaturalTitanium and 5-Coder-32B-Instruct-Q4_K_M",
    "max_tokens=4096 token_count=1234 tokenizer=gpt2",
    'api_key = os.environ["OPENAI_API_KEY"]; client = OpenAI(api_key=api_key)',
    "token = self.token; password: None; secret: ***; token=${TOKEN}",
    "pip install sk-learn-style-package-name",
    "std::vector<int> x; y = a[::2] + b[1::2] + c[1000::1000]",
    "q@k.transpose(0, 1)",
    # paths and URLs without credentials
    "/Users/JohnSmith2/Documents/ProjectsAlpha9/file.py",
    "https://example.com/docs/getting-started?page=2#install",
    "https://github.com/python/cpython/blob/fcf1d003bf4f0100c9d0921ff3d70e1127ca1b71/Lib/x.py",
    "https://huggingface.co/HuggingFaceH4/zephyr-orpo-141b-A35b-v0",
    # addresses that name no one, and things shaped like addresses
    "localhost 127.0.0.1, ::1 and 0.0.0.0, netmask 255.255.255.0",
    "10.0.0.1.5 is a version, not an address; MAC 00:1A:2B:3C:4D:5E",
    "pkg@1.2.3, @alice, name@localhost and git@github.com:org/repo.git",
    # checks that fail
    "card-like 4111 1111 1111 1112 (fails Luhn)",
    "IBAN-like DE89 3704 0044 0532 0130 01 (fails mod-97)",
    # numbers in bulk
    "[1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20]",
    # placeholders, words, other scripts
    "[EMAIL] and [PHONE] are placeholders; so are [SECRET], [CARD], [IBAN], [IP]",
    "Pneumonoultramicroscopicsilicovolcanoconiosis; SGVsbG8gV29ybGQ=",
    "Ünïcödé text, 中文, 日本語, Привет, العربية, emoji 🎉🚀 and nothing else",
]


@pytest.mark.parametrize(("text", "expected", "rule"), FOUND)
def test_each_rule_finds_what_it_is_for(text: str, expected: str, rule: str) -> None:
    redaction = REDACTOR.redact(text)
    assert redaction.text == expected
    assert set(redaction.counts) == {rule}
    assert redaction.total == redaction.text.count(PLACEHOLDERS[rule]) >= 1
    assert REDACTOR.redact(redaction.text).text == redaction.text


@pytest.mark.parametrize("text", SURVIVES)
def test_what_is_not_personal_survives(text: str) -> None:
    redaction = REDACTOR.redact(text)
    assert redaction.text == text
    assert redaction.total == 0 and dict(redaction.counts) == {}


def test_counts_add_up_per_rule() -> None:
    text = "a@b.io, c@d.io, call +1 415 555 2671, from 8.8.8.8, card 4111111111111111"
    redaction = REDACTOR.redact(text)
    assert dict(redaction.counts) == {"email": 2, "phone": 1, "ip": 1, "card": 1}
    assert redaction.total == 5
    assert REDACTOR.redact("nothing here").counts == {}


def test_only_the_secret_part_of_a_credential_goes() -> None:
    assert REDACTOR.redact("password=alice@example.com").text == "password=[SECRET]"
    redaction = REDACTOR.redact("https://user:S3cretPass@example.com/x")
    assert redaction.text == "https://user:[SECRET]@example.com/x"
    assert dict(redaction.counts) == {"secret": 1}


def _wide(text: str) -> str:
    """``text`` in full-width forms (NFKC makes them ASCII again)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


HIDDEN = [
    # invisible characters inside, compatibility forms: what a model sees once they are plain
    ("mail jane\u200b.doe@example.com now", "mail [EMAIL] now", "email"),
    ("mail jane.doe\u200b@example.com now", "mail [EMAIL] now", "email"),
    ("mail jane\u200bdoe@example.com now", "mail [EMAIL] now", "email"),
    (f"mail jane.doe{_wide('@')}example.com now", "mail [EMAIL] now", "email"),
    ("mail jane.doe@exam\u00adple.com now", "mail [EMAIL] now", "email"),
    (f"call {_wide('+44 20 7946 0958')}", "call [PHONE]", "phone"),
    ("call +44\u00a020\u00a07946\u00a00958 now", "call [PHONE] now", "phone"),
    (f"card {_wide('4111111111111111')} ok", "card [CARD] ok", "card"),
    ("card 4111\u00a01111\u00a01111\u00a01111 ok", "card [CARD] ok", "card"),
    ("card 4111\u202f1111\u202f1111\u202f1111 ok", "card [CARD] ok", "card"),
    ("card 4111\u20111111\u20111111\u20111111 ok", "card [CARD] ok", "card"),
    ("IBAN DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000", "IBAN [IBAN]", "iban"),
    ("IBAN DE89\u202f3704\u202f0044\u202f0532\u202f0130\u202f00", "IBAN [IBAN]", "iban"),
    ("key sk\u2011proj\u2011Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789", "key [SECRET]", "secret"),
    ("key sk-proj-Ab3dEfGh\u00adIjKlMnOpQrStUvWxYz0123456789", "key [SECRET]", "secret"),
    ("key sk-proj-Ab3d\u200bEfGhIjKl\u2060MnOpQrStUvWxYz0123456789", "key [SECRET]", "secret"),
    ("from 8.8\u200b.8.8 on", "from [IP] on", "ip"),
]


@pytest.mark.parametrize(("text", "expected", "rule"), HIDDEN)
def test_pii_hidden_by_invisible_or_compatibility_characters_is_found(
    text: str, expected: str, rule: str
) -> None:
    redaction = REDACTOR.redact(text)
    assert (redaction.text, dict(redaction.counts)) == (expected, {rule: 1})
    shown = guard.wrap("turn", redaction.text, "0123456789abcdef" * 2)  # normalises
    assert REDACTOR.redact(shown).total == 0  # what the model is shown holds nothing
    assert REDACTOR.redact(redaction.text).text == redaction.text


def test_only_what_is_redacted_changes_in_text_with_hidden_characters() -> None:
    note = _wide("Note")
    text = f"{note}\u200b: ﬁle à jane\u200b@example.com, café\u00a0ok"
    assert REDACTOR.redact(text).text == f"{note}\u200b: ﬁle à [EMAIL], café\u00a0ok"
    untouched = f"{note}\u200b: ﬁle\u00ad à café\u00a0ok, {_wide('4 @ 2')}"
    assert REDACTOR.redact(untouched).text == untouched


@pytest.mark.parametrize(
    "text",
    [
        "Lottery numbers 4 15 55 52 67 1",
        "Lottery numbers 41 55 52 67 12",
        "scores 3 12 9 15 3 22 8 11, coordinates 4 15 55 52 67 1 9",
        "spelled 4 1 5 5 5 5 2 6 7 1",
    ],
)
def test_runs_of_small_numbers_are_not_phone_numbers(text: str) -> None:
    assert REDACTOR.redact(text).text == text


def test_phone_numbers_in_pairs_still_are() -> None:
    assert REDACTOR.redact("06 12 34 56 78 or 01.42.68.53.00").text == "[PHONE] or [PHONE]"
    assert REDACTOR.redact("chiama 33 31 23 45 67").text == "chiama [PHONE]"  # IT: no trunk 0
    danish = Redactor(["phone"], ["DK"])
    assert danish.redact("ring 32 12 34 56 nu").text == "ring [PHONE] nu"
    assert danish.redact("tal 3 21 23 45 6").text == "tal 3 21 23 45 6"


def test_card_numbers_and_ibans_are_never_phone_numbers() -> None:
    phones_only = Redactor(["phone"])
    for text in ("4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00", "5555555555554444"):
        assert phones_only.redact(text).text == text


def test_rules_are_chosen_by_settings() -> None:
    text = "a@b.io or +44 20 7946 0958 from 8.8.8.8"
    only_email = Redactor.from_settings(Settings(redact="email"))
    assert only_email.redact(text).text == "[EMAIL] or +44 20 7946 0958 from 8.8.8.8"
    assert Redactor.from_settings(Settings(redact="")).redact(text).text == text
    assert Redactor.from_settings(Settings()).rules == RULES
    assert Redactor(" Email, IP ,email").rules == ("email", "ip")


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_alone_redacts_only_its_own(rule: str) -> None:
    samples = {
        "email": "bob@example.com",
        "phone": "+44 20 7946 0958",
        "secret": "ghp_Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789",
        "card": "4111 1111 1111 1111",
        "iban": "GB82 WEST 1234 5698 7654 32",
        "ip": "8.8.8.8",
    }
    text = " | ".join(samples.values())
    expected = text.replace(samples[rule], PLACEHOLDERS[rule])
    redaction = Redactor([rule]).redact(text)
    assert redaction.text == expected and dict(redaction.counts) == {rule: 1}


def test_phone_regions_decide_national_formats() -> None:
    uk, us = "020 7946 0958", "(415) 555-2671"
    assert Redactor(["phone"], ["GB"]).redact(f"{uk} {us}").text == f"[PHONE] {us}"
    assert Redactor(["phone"], "us").redact(f"{uk} {us}").text == f"{uk} [PHONE]"
    international_only = Redactor.from_settings(Settings(redact="phone", redact_phone_regions=""))
    assert international_only.redact(f"{uk} +44 20 7946 0958").text == f"{uk} [PHONE]"


def test_unknown_rules_and_regions_are_config_errors_naming_the_valid_ones() -> None:
    with pytest.raises(
        ConfigError, match="unknown redaction rules: ssn; valid rules: email, phone"
    ):
        Redactor(["email", "ssn"])
    with pytest.raises(ConfigError, match=r"unknown phone regions: XX; valid regions .*\bGB\b"):
        Redactor(phone_regions=["GB", "XX"])
    with pytest.raises(ConfigError):
        Redactor.from_settings(Settings(redact="email,names"))


def test_what_a_neighbour_hid_is_found_and_placeholders_stay() -> None:
    once = REDACTOR.redact("call +44 20 7946 0958+44 20 7946 0959 or [PHONE]")
    assert REDACTOR.redact(once.text).text == once.text
    assert REDACTOR.redact("[EMAIL][PHONE][SECRET]").text == "[EMAIL][PHONE][SECRET]"


def test_the_checks_themselves() -> None:
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    assert iban_valid("GB82WEST12345698765432") and not iban_valid("GB83WEST12345698765432")
    assert entropy("aaaa") == 0 and entropy("abcd") == 2 and entropy("") == 0
    assert mean_run("AbcDef12") == 8 / 3 and mean_run("HTTPServer") == 5


def test_the_iban_table_covers_sepa() -> None:
    sepa = (
        "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE"
        " IS LI NO CH GB MC SM AD VA AL ME MD MK RS"
    ).split()
    assert set(sepa) <= set(IBAN_LENGTHS)
    assert (IBAN_LENGTHS["DE"], IBAN_LENGTHS["GB"], IBAN_LENGTHS["NO"]) == (22, 22, 15)


# The random-looking test, measured on both sides of its thresholds.


def test_random_tokens_are_secrets() -> None:
    rng = random.Random(20240503)
    alphabets = (
        string.ascii_letters + string.digits,
        string.ascii_letters + string.digits + "+/",
        string.ascii_letters + string.digits + "-_",
    )
    tokens = [
        "".join(rng.choice(alphabet) for _ in range(length))
        for alphabet in alphabets
        for length in (24, 32, 40, 64)
        for _ in range(50)
    ]
    redacted = [REDACTOR.redact(f"x {token} y").text == "x [SECRET] y" for token in tokens]
    assert sum(redacted) / len(tokens) >= 0.95
    assert sorted(entropy(t) for t in tokens)[len(tokens) // 2] > ENTROPY_BITS + 0.5


def test_entropy_threshold_on_both_sides() -> None:
    below = "aB3cD5eF" * 3  # 8 symbols, equally often: 3.0 bits
    above = "aB3cD5eF7gH9" * 2  # 12 symbols: 3.58 bits
    assert len(below) == len(above) == MIN_SECRET_LENGTH
    assert entropy(below) < ENTROPY_BITS <= entropy(above)
    assert max(mean_run(below), mean_run(above)) < MAX_MEAN_RUN / 2
    assert REDACTOR.redact(below).text == below
    assert REDACTOR.redact(above).text == "[SECRET]"


def test_run_threshold_on_both_sides() -> None:
    wordy = "Abcde1Fghij2Klmno3Pqrst4"  # runs of 5 and 1: mean 3.0
    choppy = "Abcd1Efgh2Ijkl3Mnop4Qrst5"  # runs of 4 and 1: mean 2.5
    assert mean_run(choppy) <= MAX_MEAN_RUN < mean_run(wordy)
    assert min(entropy(wordy), entropy(choppy)) > ENTROPY_BITS
    assert not random_looking(wordy) and random_looking(choppy)


def test_length_threshold() -> None:
    token = "Zk3pQ9vR2xL7mN4bT8wY1cF6hJ0s"
    assert REDACTOR.redact(token[:MIN_SECRET_LENGTH]).text == "[SECRET]"
    assert REDACTOR.redact(token[: MIN_SECRET_LENGTH - 1]).text == token[: MIN_SECRET_LENGTH - 1]


# Properties.

FRAGMENTS = [text for text, _, _ in FOUND] + SURVIVES + list(PLACEHOLDERS.values())
FRAGMENTS += ["@", ".", ":", "=", "/", "-", "+", "1", "42", " ", "\n", "'", "#", "Bearer ", "x"]

SECRET_HINTS = (
    *("sk-", "gh", "glpat-", "xox", "akia", "asia", "abia", "acca", "aiza", "_live_", "_test_"),
    *("npm_", "hf_", "eyj", "bearer", "basic", "-----begin", "://", "hooks.slack.com"),
    *("pass", "secret", "key", "token", "credential"),
)


@given(st.text())
def test_redaction_never_raises_and_is_idempotent(text: str) -> None:
    once = REDACTOR.redact(text)
    assert REDACTOR.redact(once.text).text == once.text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join))
def test_redaction_of_glued_fragments_is_idempotent(text: str) -> None:
    once = REDACTOR.redact(text)
    again = REDACTOR.redact(once.text)
    assert again.text == once.text and again.total == 0


def _no_digit_or_at_sign(char: str) -> bool:
    """Whether a character shows no digit or ``@`` even plainly (full-width ``@``, ``²`` do)."""
    return not any(c.isdigit() or c == "@" for c in plain(char)[0])


@given(
    st.text(
        st.characters(exclude_categories=["Cs", "Nd"], exclude_characters="@").filter(
            _no_digit_or_at_sign
        )
    )
)
def test_text_without_digits_or_at_signs_only_loses_secrets(text: str) -> None:
    redaction = REDACTOR.redact(text)
    assert set(redaction.counts) <= {"secret"}
    shown = (text.lower(), plain(text)[0].lower())
    if not any(hint in view for view in shown for hint in SECRET_HINTS):
        assert redaction.text == text


# Cost: this runs on every turn.


def test_the_phone_matcher_runs_only_near_enough_digits(monkeypatch: pytest.MonkeyPatch) -> None:
    windows: list[str] = []
    matcher = phonenumbers.PhoneNumberMatcher

    def counting(text: str, *args: object, **kwargs: object) -> phonenumbers.PhoneNumberMatcher:
        windows.append(text)
        return matcher(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(phonenumbers, "PhoneNumberMatcher", counting)
    prose = "We went over the migration plan and how ranking weighs recency against relevance. "
    turn = (prose * 130)[:10_000]
    assert REDACTOR.redact(turn).text == turn and windows == []

    middle = " Call +44 20 7946 0957 or mail eve@example.com before 2024-05-03 (v1.2.3). "
    redaction = REDACTOR.redact(turn[:5000] + middle + turn[5000:])
    assert dict(redaction.counts) == {"phone": 1, "email": 1}
    assert all(len(window) < 40 for window in windows)
