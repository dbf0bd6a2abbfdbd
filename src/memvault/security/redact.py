"""PII redaction (pure): typed placeholders for what identifies or exposes a person.

Rules and placeholders (``Settings.redact`` picks them; all by default):

``email`` → ``[EMAIL]``
    ``name@domain.tld`` (dots, plus-tags, subdomains, letters of any script). Not
    ``pkg@1.2.3`` (a version), not ``@mentions``.
``phone`` → ``[PHONE]``
    what Google's ``phonenumbers`` library finds as a *valid* number: international
    (``+44 20 7946 0958``) anywhere, national formats of ``Settings.redact_phone_regions``. Dates,
    times, versions, prices, order and ISBN numbers are not valid numbers and survive.
``secret`` → ``[SECRET]``
    API keys and tokens with known prefixes (OpenAI/Anthropic ``sk-``, GitHub ``ghp_``…,
    ``github_pat_``, Slack ``xox?-``, AWS ``AKIA``/``ASIA``, Google ``AIza``, Stripe
    ``sk_live_``…, JWTs, ``Bearer`` tokens, PEM private keys), the value of ``password=``,
    ``api_key:``, ``token=``… assignments, and high-entropy words (≥ 24 characters of
    letters, digits and ``-_+/=``, with upper, lower and digits, Shannon entropy ≥ 4 bits per
    character). Not UUIDs and not hex strings (git commit ids): they identify things, not
    people, and engineering chat is full of them.
``card`` → ``[CARD]``
    13 to 19 digits (spaces or dashes between groups) that pass the Luhn check and start like a
    card (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay).
``iban`` → ``[IBAN]``
    a country code, 2 check digits and the national part (spaces allowed) of that country's
    length, whose mod-97 check holds.
``ip`` → ``[IP]``
    IPv4 and IPv6 addresses (checked by ``ipaddress``), except loopback and unspecified ones
    (``127.0.0.1``, ``::1``, ``0.0.0.0``), which name no one; not part of a longer dotted number
    (``1.2.3.4.5``).

Redaction is idempotent (placeholders never match again) and never raises on text.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import phonenumbers

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import Settings

RULES = ("email", "phone", "secret", "card", "iban", "ip")
PLACEHOLDERS = {rule: f"[{rule.upper()}]" for rule in RULES}
DEFAULT_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "CA", "AU", "IN")
ENTROPY_BITS = 4.0
Span = tuple[int, int, str]

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W\d_]{2,}(?![\w-])")
_SECRET_PREFIXES = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|AIza[A-Za-z0-9_-]{35}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r")"
)
_BEARER = re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{16,}")
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)
_ASSIGNED = re.compile(
    r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|token|auth[_-]?token|"
    r"client[_-]?secret)\b[\"']?\s*[:=]\s*[\"']?(?P<value>[^\s\"',;]{4,})"
)
_WORD = re.compile(r"(?<![\w+/=-])[A-Za-z0-9_+/=-]{24,}(?![\w+/=-])")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_CARD = re.compile(r"(?<![\d.-])\d(?:[ -]?\d){12,18}(?![\d.-]|,\d)")
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|6011|65|64[4-9]|35|30[0-5]|36|38|62)")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_IBAN_LENGTHS = {
    "AD": 24,
    "AT": 20,
    "BE": 16,
    "BG": 22,
    "CH": 21,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "EE": 20,
    "ES": 24,
    "FI": 18,
    "FR": 27,
    "GB": 22,
    "GI": 23,
    "GR": 27,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IS": 26,
    "IT": 27,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "MC": 27,
    "MT": 31,
    "NL": 18,
    "NO": 15,
    "PL": 28,
    "PT": 25,
    "RO": 24,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "TR": 26,
    "AE": 23,
    "SA": 24,
    "IL": 23,
    "BR": 29,
}
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]*\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
_PLACEHOLDER = re.compile(r"\[(?:EMAIL|PHONE|SECRET|CARD|IBAN|IP)\]")


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted text, and how many spans each rule replaced."""

    text: str
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


class Redactor:
    """Applies the chosen rules to text."""

    def __init__(
        self, rules: Iterable[str] = RULES, phone_regions: Iterable[str] = DEFAULT_REGIONS
    ):
        self.rules = tuple(dict.fromkeys(r.strip().lower() for r in rules if r.strip()))
        unknown = [r for r in self.rules if r not in RULES]
        if unknown:
            raise ConfigError(f"unknown redaction rules {unknown}; known: {', '.join(RULES)}")
        self.regions = tuple(r.strip().upper() for r in phone_regions if r.strip())
        known = phonenumbers.SUPPORTED_REGIONS
        if any(region not in known for region in self.regions):
            raise ConfigError(f"unknown phone regions in {self.regions}; use ISO codes like GB")

    @classmethod
    def from_settings(cls, settings: Settings) -> Redactor:
        return cls(settings.redact.split(","), settings.redact_phone_regions.split(","))

    def redact(self, text: str) -> Redaction:
        if not self.rules or not text:
            return Redaction(text)
        spans = sorted(self._spans(text), key=lambda s: (s[0], -(s[1] - s[0])))
        kept: list[Span] = []
        for span in spans:
            if kept and span[0] < kept[-1][1]:
                continue  # overlaps an earlier (or longer) span
            kept.append(span)
        out, last = [], 0
        for start, end, rule in kept:
            out += [text[last:start], PLACEHOLDERS[rule]]
            last = end
        out.append(text[last:])
        return Redaction("".join(out), dict(Counter(rule for _, _, rule in kept)))

    def _spans(self, text: str) -> Iterator[Span]:
        protected = [(m.start(), m.end()) for m in _PLACEHOLDER.finditer(text)]
        finders = {
            "secret": _secrets,
            "email": _emails,
            "card": _cards,
            "iban": _ibans,
            "ip": _ips,
            "phone": self._phones,
        }
        for rule in self.rules:
            for start, end in finders[rule](text):
                if not any(a < end and start < b for a, b in protected):
                    yield start, end, rule

    def _phones(self, text: str) -> Iterator[tuple[int, int]]:
        if sum(ch.isdigit() for ch in text) < 7:
            return
        seen: set[tuple[int, int]] = set()
        for region in self.regions:
            matcher = phonenumbers.PhoneNumberMatcher(text, region, phonenumbers.Leniency.VALID)
            for match in matcher:
                span = (match.start, match.end)
                if span not in seen and not _inside_word(text, *span):
                    seen.add(span)
                    yield span


def _inside_word(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return before.isalnum() or after.isalnum() or before in "/#-" or after in "/"


def _emails(text: str) -> Iterator[tuple[int, int]]:
    if "@" in text:
        yield from ((m.start(), m.end()) for m in _EMAIL.finditer(text))


def _secrets(text: str) -> Iterator[tuple[int, int]]:
    for pattern in (_SECRET_PREFIXES, _BEARER, _PEM):
        yield from ((m.start(), m.end()) for m in pattern.finditer(text))
    yield from ((m.start("value"), m.end("value")) for m in _ASSIGNED.finditer(text))
    for m in _WORD.finditer(text):
        if _random_looking(m.group()):
            yield m.start(), m.end()


def _random_looking(word: str) -> bool:
    if _UUID.match(word) or _HEX.match(word):
        return False
    classes = (
        any(c.isupper() for c in word),
        any(c.islower() for c in word),
        any(c.isdigit() for c in word),
    )
    return all(classes) and entropy(word) >= ENTROPY_BITS


def entropy(word: str) -> float:
    """Shannon entropy of a word, in bits per character."""
    counts = Counter(word)
    return -sum(n / len(word) * math.log2(n / len(word)) for n in counts.values())


def _cards(text: str) -> Iterator[tuple[int, int]]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and luhn(digits):
            yield m.start(), m.end()


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _ibans(text: str) -> Iterator[tuple[int, int]]:
    for m in _IBAN.finditer(text):
        compact = m.group().replace(" ", "")
        for length in {_IBAN_LENGTHS.get(compact[:2], 0)} - {0}:
            candidate = compact[:length]
            if len(candidate) == length and iban_valid(candidate):
                end, taken = m.start(), 0
                while taken < length:
                    taken += text[end] != " "
                    end += 1
                yield m.start(), end


def iban_valid(iban: str) -> bool:
    moved = iban[4:] + iban[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


def _ips(text: str) -> Iterator[tuple[int, int]]:
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            try:
                address = ipaddress.ip_address(m.group())
            except ValueError:
                continue
            if not (address.is_loopback or address.is_unspecified):
                yield m.start(), m.end()
