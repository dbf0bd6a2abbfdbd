"""PII redaction (pure): typed placeholders for what identifies a person or opens an account.

``Settings.redact`` picks the rules (all by default); each replaces what it finds with its
placeholder. What each deliberately leaves alone, and why:

``email`` → ``[EMAIL]``
    ``name@domain.tld``: dots, plus-tags and apostrophes in the name, subdomains, letters of any
    script, punycode TLDs. Not ``@mentions``, ``pkg@1.2.3`` (a version), ``name@localhost`` (no
    TLD), ``git@github.com:org/repo`` (an SSH remote names a host, not a person) or
    ``q@k.transpose(…)``; but a matrix product like ``x@self.weight`` reads as an address.
``phone`` → ``[PHONE]``
    what Google's ``phonenumbers`` finds as a *valid* number: international (``+44 20 7946 0958``)
    anywhere, national formats of ``Settings.redact_phone_regions``. Not dates, times, versions,
    prices, decimals, ISBNs, ZIP codes, dotted quads, card numbers, IBANs, runs of more than 17
    digits (tables, dumps), digits in a word, a path, a URL or an id (``/``, ``#``, ``=``, ``-``
    before them); a national number right after a label such as ``order``, ``invoice``,
    ``ticket``, ``ref``, ``id`` is read as that, and a ten-digit one starting with 1 as a Unix
    timestamp. Nor is a run of small numbers (``4 15 55 52 67 1``: lottery numbers, scores): a
    national number written in groups of one or two digits is one only in pairs, after a trunk
    ``0`` (``06 12 34 56 78``) or valid in a region that has none (Danish ``32 12 34 56``). Any
    other bare national number of the right shape is a phone number, whatever it counts
    (``4155552671 cents``).
``secret`` → ``[SECRET]``
    tokens with known prefixes: OpenAI/Anthropic ``sk-`` (with a digit, so ``sk-learn-…`` names
    survive), GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``, GitLab
    ``glpat-``, Slack ``xox?-`` and webhook paths, AWS ``AKIA``/``ASIA`` key ids (and, when one is
    present, any 40-character secret-key-shaped word), Google ``AIza``, Stripe ``sk_``/``rk_``/
    ``pk_`` ``live_``/``test_``, npm ``npm_``, Hugging Face ``hf_``, JWTs, ``Bearer`` and Basic
    credentials, PEM private-key blocks; the password in a URL (``https://user:[SECRET]@host``);
    the value of ``password=``, ``api_key:``, ``"token": "…"``, ``aws_secret_access_key =``… but
    not references (``$VAR``, ``os.environ[…]``, ``self.token``, ``api_key=api_key``, ``None``,
    ``***``); and random-looking words: at least :data:`MIN_SECRET_LENGTH` characters of the base64
    or url-safe alphabet with upper case, lower case and digits, at least :data:`ENTROPY_BITS` bits
    of Shannon entropy per character and a mean run of letters or digits of at most
    :data:`MAX_MEAN_RUN`. Entropy alone cannot tell ``AbstractSingletonProxyFactoryBean2``
    (4.1 bits) from a random 24-character key (4.25); runs can (5.7 against 1.9): words make long
    runs, random text switches case or class every other character. Not redacted: hex strings
    (git commit ids, SHA-256 digests — engineering chat is full of them — and so hex-only keys
    unless assigned to a secret-named key), UUIDs, identifiers, file paths and URL paths made of
    words, words with a hex or wordy segment of 8+ characters (model names, blob URLs). A long
    base64 blob *is* redacted: it cannot be told from a key. Passwords in prose (``my password
    is …``) are not found.
``card`` → ``[CARD]``
    13 to 19 digits (single spaces or dashes between groups) that start like a card of that
    length (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro, Mir) and pass the
    Luhn check. A Luhn-valid order number with a card's prefix and length is redacted too.
``iban`` → ``[IBAN]``
    upper-case country code, 2 check digits and the national part (single spaces allowed) of
    exactly that country's length, whose mod-97 check holds; lower-case IBANs are not recognised.
``ip`` → ``[IP]``
    IPv4 and IPv6 addresses that ``ipaddress`` accepts. Not loopback or unspecified addresses
    (``127.0.0.1``, ``::1``, ``0.0.0.0``, ``::``), nor reserved IPv4 ones (netmasks like
    ``255.255.255.0``): they name no one. Not a dotted number of more than four parts
    (``1.2.3.4.5``), after a letter (``v1.2.3.4``) or a label (``version 1.2.3.4``); a bare
    four-part version number reads as an address. IPv6 needs a digit, a group of 3+ hex digits,
    and 3 groups or a hex letter, so slices (``a[1::2]``), ``::`` and ``std::vector`` survive.

Every rule also runs on the plain view of the text (:func:`plain`: what a reader or a model sees
of it — NFKC without invisible characters, as :func:`~memvault.security.text.fold` makes it, with
hyphens written ``-``), so PII hidden by a zero-width space, a soft hyphen, full-width letters or
digits, no-break spaces between groups or non-breaking hyphens is found too; what it finds is
replaced in the text as given (the invisible characters inside it go with it), and text without
anything to redact is returned unchanged, byte for byte.

Overlapping matches are resolved once: secret, card, iban, email, ip, phone in that order, then
the longest. Placeholders are never matched again, nor is anything touching one, and redaction
runs again over its own result until that finds nothing, so redacting redacted text changes
nothing. Names, postal addresses and national ids (SSN…) are not detected.
"""

from __future__ import annotations

import bisect
import ipaddress
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..patterns import lazy
from .text import fold

if TYPE_CHECKING:
    from ..config import Settings

RULES = ("email", "phone", "secret", "card", "iban", "ip")
"""Every rule, in the order the docs list them."""
PLACEHOLDERS: Mapping[str, str] = MappingProxyType({rule: f"[{rule.upper()}]" for rule in RULES})
DEFAULT_PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "CA", "AU", "IN")
MIN_SECRET_LENGTH = 24
"""Shortest word the random-looking test considers."""
ENTROPY_BITS = 3.5
"""Least Shannon entropy, in bits per character, of a random-looking word. Random base62 words of
24 characters have 3.5 to 4.6 (median 4.25), of 40 characters 4.1 to 5.2 (median 4.8); repeated
patterns (``a1B2a1B2…``: 2.0) less."""
MAX_MEAN_RUN = 2.8
"""Longest mean run (``Abc``, ``ABC``, ``123``) of a random-looking word. Random base62 words have
a median of 1.9 (99th percentile 3.0 at 24 characters, 2.7 at 40); identifiers and paths 3 (rarely:
``CPyBytesWriter_WriteF32BE``) to 6."""

Span = tuple[int, int]
Found = tuple[int, int, str]
_PRIORITY = {"": -1, "secret": 0, "card": 1, "iban": 2, "email": 3, "ip": 4, "phone": 5}
_MAX_ROUNDS = 4
_PLACEHOLDER = lazy(r"\[(?:EMAIL|PHONE|SECRET|CARD|IBAN|IP)\]")
_HYPHENS = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2212", "-"))


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted text, and how many spans each rule replaced (only rules that did)."""

    text: str
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Spans replaced, over all rules."""
        return sum(self.counts.values())


class Redactor:
    """Applies the chosen rules to text; cheap to build, safe to share between threads."""

    def __init__(
        self,
        rules: Iterable[str] = RULES,
        phone_regions: Iterable[str] = DEFAULT_PHONE_REGIONS,
    ) -> None:
        self.rules = tuple(dict.fromkeys(name.lower() for name in _names(rules)))
        unknown = [rule for rule in self.rules if rule not in RULES]
        if unknown:
            raise ConfigError(
                f"unknown redaction rules: {', '.join(unknown)}; valid rules: {', '.join(RULES)}"
            )
        self.phone_regions = tuple(dict.fromkeys(name.upper() for name in _names(phone_regions)))
        import phonenumbers  # ~30 ms: paid by the first redaction's settings, not on import

        unknown = [
            code for code in self.phone_regions if code not in phonenumbers.SUPPORTED_REGIONS
        ]
        if unknown:
            raise ConfigError(
                f"unknown phone regions: {', '.join(unknown)}; valid regions (ISO 3166 codes): "
                + ", ".join(sorted(phonenumbers.SUPPORTED_REGIONS))
            )

    @classmethod
    def from_settings(cls, settings: Settings) -> Redactor:
        """The redactor ``settings.redact`` and ``settings.redact_phone_regions`` describe."""
        return cls(settings.redact, settings.redact_phone_regions)

    def redact(self, text: str) -> Redaction:
        """``text`` with every match of the chosen rules, in it or in its plain view (PII hidden
        by invisible or compatibility characters), replaced by its placeholder.

        Runs again over its own result until that finds nothing (a replacement can uncover a
        match its neighbour hid; at most four rounds), so redacting redacted text changes
        nothing."""
        counts: Counter[str] = Counter()
        for _ in range(_MAX_ROUNDS if self.rules else 0):
            kept = self._spans(text)
            replaced = Counter(rule for _, _, rule in kept if rule)
            if not replaced:
                break
            text = _rewrite(text, kept)
            counts += replaced
        return Redaction(text, dict(counts))

    def finds(self, text: str) -> bool:
        """Whether a rule finds something in ``text`` (or in its plain view) to replace — as
        :meth:`redact` would, faster: in ASCII text (its own plain view), only the rules whose
        necessary characters it holds (:data:`_NEEDS`) run."""
        if not text.isascii():
            return any(rule for _, _, rule in self._spans(text))
        undated = _ISO_DATE.sub(" ", text) if "-" in text else text
        rules = [rule for rule in self.rules if _NEEDS[rule].search(undated)]
        return bool(rules) and any(rule for _, _, rule in self._found(text, rules))

    def _spans(self, text: str) -> list[Found]:
        """What to replace, by start: what the rules find in ``text`` and in its plain view
        (mapped back onto ``text``)."""
        found = self._found(text)
        view, origin = plain(text)
        if view != text:
            found += [(origin[s], origin[e - 1] + 1, rule) for s, e, rule in self._found(view)]
        return _resolve(found)

    def _found(self, text: str, rules: Iterable[str] | None = None) -> list[Found]:
        """Every match of the rules, and the placeholders already there (rule ``""``: they stay
        as they are). Nothing that touches a placeholder is taken: what a placeholder's first
        characters hid stays hidden."""
        found = [(m.start(), m.end(), "") for m in _PLACEHOLDER.finditer(text)]
        edges = {start for start, _, _ in found} | {end for _, end, _ in found}
        for rule in self.rules if rules is None else rules:
            found += [
                (start, end, rule)
                for start, end in self._find(rule, text)
                if start not in edges and end not in edges
            ]
        return found

    def _find(self, rule: str, text: str) -> Iterator[Span]:
        if rule == "phone":
            return _phones(text, self.phone_regions)
        return _FINDERS[rule](text)


def plain(text: str) -> tuple[str, Sequence[int]]:
    """The plain view of ``text`` the rules also run on, and for each of its characters the index
    in ``text`` it came from: :func:`~memvault.security.text.fold` with hyphens made ``-``."""
    view, origin = fold(text)
    return view.translate(_HYPHENS), origin


def _names(names: Iterable[str]) -> list[str]:
    """Names from an iterable or a comma-separated string, stripped, without empty ones."""
    items = names.split(",") if isinstance(names, str) else names
    return [name.strip() for name in items if name.strip()]


def _resolve(found: list[Found]) -> list[Found]:
    """The spans that survive overlaps, by start: highest priority first, then the longest."""
    kept: list[Found] = []
    starts: list[int] = []
    for start, end, rule in sorted(found, key=lambda f: (_PRIORITY[f[2]], f[0] - f[1], f[0])):
        i = bisect.bisect_left(starts, start)
        if (i and kept[i - 1][1] > start) or (i < len(kept) and kept[i][0] < end):
            continue
        kept.insert(i, (start, end, rule))
        starts.insert(i, start)
    return kept


def _rewrite(text: str, kept: list[Found]) -> str:
    parts: list[str] = []
    last = 0
    for start, end, rule in kept:
        parts += [text[last:start], PLACEHOLDERS[rule] if rule else text[start:end]]
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _overlaps(span: Span, others: Iterable[Span]) -> bool:
    return any(start < span[1] and span[0] < end for start, end in others)


# -- email ----------------------------------------------------------------------------------------

_EMAIL = lazy(
    r"(?<![\w.%+-])\w[\w%+-]*(?:[.'][\w%+-]+)*"  # name: dots and apostrophes only inside
    r"@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+"  # subdomains and domain, IDN letters allowed
    r"(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{1,59})"  # TLD: letters, or punycode
    r"(?![\w-]|\.[^\W_]|:[\w~/.-]|\()"  # not a longer name, an SSH remote, a call
)


def _emails(text: str) -> Iterator[Span]:
    if "@" in text:
        yield from (m.span() for m in _EMAIL.finditer(text))


# -- phone ----------------------------------------------------------------------------------------

_DIGIT_GROUPS = lazy(r"\d(?:[ \t\u00a0().\-\u2010-\u2015\u2212/]{0,3}\d)*")
_LIST_SEPARATORS = lazy(r"\s*/\s*|\s{2,}|\s[-\u2013\u2014]\s|\s(?=[(\uff08])")
_PLUS = "+\uff0b"
_MIN_PHONE_DIGITS = 7
_MAX_PHONE_DIGITS = 17  # 15 of E.164 and a 00 prefix
_MARGIN = 4  # characters of context the matcher sees around a group (dates, times, currency)
_ID_LABEL = lazy(
    r"(?i)(?:\b(?:order|invoice|ticket|case|ref|reference|tracking|isbn(?:-?1[03])?|sku|serial"
    r"|account|acct|id|uid|pid|zip|postcode|postal code)\b[\s.:#-]*"
    r"(?:no\b|nr\b|num\b|number\b|#|id\b|code\b)?|#)[\s.:#-]*$"
)
_LABEL_REACH = 24
_CACHED_WINDOW = 64
_DIGITS = lazy(r"\d+")
_TIMESTAMP = lazy(r"1\d{9}")  # compared with the digits only: 1 234 567 890 too
_NOT_A_NUMBER = lazy(  # dotted quad, ISO date, decimal, ZIP+4
    r"\d{1,3}(?:\.\d{1,3}){3}|\d{4}-\d\d-\d\d|\d+[.,]\d+|\d{5}-\d{4}"
)
_SPACES = " \t\u00a0()\uff08"
_JOINED_BEFORE = "/#=_&?.@-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_JOINED_AFTER = "/_@-"


def _phones(text: str, regions: tuple[str, ...]) -> Iterator[Span]:
    """Valid numbers of ``regions`` (international ones whatever the region), looked for only in
    groups of digits that could hold one: the matcher is the expensive part."""
    groups = [span for m in _DIGIT_GROUPS.finditer(text) for span in _candidates(text, m)]
    if not groups:
        return
    taken = [*_cards(text), *_ibans(text, verify=False)]
    seen: set[Span] = set()
    for group_start, group_end in groups:
        low = max(0, group_start - _MARGIN)
        window = text[low : group_end + _MARGIN]
        international = any(c in _PLUS for c in text[max(0, group_start - 2) : group_start])
        for start, end in _numbers_in(
            window, (regions[:1] or ("ZZ",)) if international else regions
        ):
            span = (low + start, low + end)
            if span not in seen and _is_phone(text, span, taken, regions):
                seen.add(span)
                yield span


def _candidates(text: str, group: re.Match[str]) -> Iterator[Span]:
    """The parts of a group of digits that could hold a number: the group, or if it is too long
    for one, its parts between list separators (``/``, ``-`` between spaces, wide gaps, a space
    before ``(``)."""
    start, end = group.span()
    cuts = [start]
    if _digit_count(group.group()) > _MAX_PHONE_DIGITS:
        for cut in _LIST_SEPARATORS.finditer(text, start, end):
            cuts += [cut.start(), cut.end()]
    cuts.append(end)
    for part_start, part_end in zip(cuts[::2], cuts[1::2], strict=True):
        if _may_hold_phone(text, part_start, part_end):
            yield part_start, part_end


def _may_hold_phone(text: str, start: int, end: int) -> bool:
    """Digits enough for a number and not too many, not a dotted quad, date, decimal or ZIP+4
    code, and — for a part without spaces, which a number would fill — standing apart."""
    part = text[start:end]
    if not _MIN_PHONE_DIGITS <= _digit_count(part) <= _MAX_PHONE_DIGITS:
        return False
    if _NOT_A_NUMBER.fullmatch(part):
        return False
    return any(c in _SPACES for c in part) or _apart(text, start, end)


def _digit_count(text: str) -> int:
    return sum(c.isdigit() for c in text)


def _numbers_in(window: str, regions: tuple[str, ...]) -> tuple[Span, ...]:
    """Where the matcher finds valid numbers in ``window``; short windows are cached (turns
    repeat numbers, and a second pass over redacted text repeats every group)."""
    if len(window) <= _CACHED_WINDOW:
        return _cached_numbers_in(window, regions)
    return _match_numbers(window, regions)


@lru_cache(maxsize=4096)
def _cached_numbers_in(window: str, regions: tuple[str, ...]) -> tuple[Span, ...]:
    return _match_numbers(window, regions)


def forget_windows() -> None:
    """Drop the cached windows (they are pieces of turns' text): an erasure happened."""
    _cached_numbers_in.cache_clear()


def _match_numbers(window: str, regions: tuple[str, ...]) -> tuple[Span, ...]:
    import phonenumbers

    return tuple(
        sorted(
            {
                (match.start, match.end)
                for region in regions
                for match in phonenumbers.PhoneNumberMatcher(
                    window, region, phonenumbers.Leniency.VALID
                )
            }
        )
    )


def _apart(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands apart: not in a word, a path, a URL, an id or an email."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (
        before.isalnum() or before in _JOINED_BEFORE or after.isalnum() or after in _JOINED_AFTER
    )


def _is_phone(text: str, span: Span, taken: list[Span], regions: tuple[str, ...]) -> bool:
    start, end = span
    raw = text[start:end]
    if not _apart(text, start, end) or _overlaps(span, taken) or _NOT_A_NUMBER.fullmatch(raw):
        return False
    if raw[0] in _PLUS:
        return True
    digits = "".join(c for c in raw if c.isdigit())
    label = _ID_LABEL.search(text, max(0, start - _LABEL_REACH), start)
    return not (_TIMESTAMP.fullmatch(digits) or label or _small_numbers(raw, regions))


def _small_numbers(raw: str, regions: tuple[str, ...]) -> bool:
    """Whether a national number is a run of small numbers (``4 15 55 52 67 1``): groups of one
    or two digits, unless dialled with ``00``, or in pairs after a trunk ``0`` (``06 12 34 56
    78``) or valid in a region without a trunk prefix (Danish ``32 12 34 56``)."""
    groups = _DIGITS.findall(raw)
    if max(map(len, groups)) > 2:
        return False
    digits = "".join(groups)
    if min(map(len, groups)) < 2:
        return not digits.startswith("00")
    return not (digits[0] == "0" or any(_valid_without_trunk(digits, r) for r in regions))


def _valid_without_trunk(digits: str, region: str) -> bool:
    import phonenumbers

    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.national_prefix:
        return False
    try:
        return phonenumbers.is_valid_number(phonenumbers.parse(digits, region))
    except phonenumbers.NumberParseException:
        return False


# -- secret ---------------------------------------------------------------------------------------

_TOKEN = lazy(
    r"""(?<![\w-])(?:
      sk-(?:ant-(?:api|admin)\d\d-|proj-|svcacct-|admin-)?(?=[\w-]*\d)[A-Za-z0-9_-]{20,}
    | gh[pousr]_[A-Za-z0-9]{30,} | github_pat_[A-Za-z0-9_]{30,} | glpat-[A-Za-z0-9_-]{20,}
    | xox[abeoprs]-[A-Za-z0-9-]{10,}
    | (?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])
    | AIza[A-Za-z0-9_-]{35}
    | (?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}
    | npm_[A-Za-z0-9]{36} | hf_[A-Za-z0-9]{34}
    | eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}
    )""",
    re.X,
)
_AWS_KEY_ID = lazy(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_KEY = lazy(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
_PEM = lazy(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----[\s\S]*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z)"
)
_CREDENTIALS = (  # (what the lower-cased text must hold for the pattern to run, the pattern)
    ("bearer", lazy(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)")),
    ("basic", lazy(r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/]{8,}=*)")),
    ("://", lazy(r"://[^\s:/@]*:([^\s/@]+)@")),
    ("hooks.slack.com", lazy(r"hooks\.slack\.com/services/([A-Za-z0-9/]{20,})")),
)
_SECRET_KEYS = ("pass", "secret", "key", "token", "credential")
_ASSIGNED = lazy(
    r"""(?ix)
      (?P<key>password|passwd|passphrase|secret[_-]?key|secret|api[_-]?key|access[_-]?key
      |private[_-]?key|token|credentials?)(?![\w-])
      ["']?\s*(?:=>|:=|[:=])\s*
      (?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<bare>[^\s"'`,;()<>\[\]{}]{3,}))
    """
)
_KEY_START = lazy(r"[\w.-]*$")
_NOT_A_VALUE = lazy(
    r"(?i)(?:none|null|nil|true|false|undefined|empty|required|optional|redacted|hidden|invalid"
    r"|incorrect|expired|missing|unset|\*+|x+|\.+|…)$|[$%{<]|os\.environ|process\.env|getenv"
)
_IDENTIFIER_PATH = lazy(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_WORD = lazy(r"(?<![\w+/-])[A-Za-z0-9_+/-]{24,}={0,2}(?![\w+/=@-])")
_PATH_PART = lazy(r"[a-z_-]{3,}|[A-Z][a-z_-]{2,}")  # a word of a path, not a key's end
_SEGMENT = lazy(r"[A-Za-z0-9]+")
_RUN = lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_HEX = lazy(r"[0-9a-fA-F]+")
_WORDY_RUN = 4  # a segment of 8+ characters with longer runs than this is made of words


def _secrets(text: str) -> Iterator[Span]:
    lower = text.lower()
    yield from (m.span() for m in _TOKEN.finditer(text))
    if "-----begin" in lower:
        yield from (m.span() for m in _PEM.finditer(text))
    for needle, pattern in _CREDENTIALS:
        if needle in lower:
            yield from (m.span(1) for m in pattern.finditer(text))
    if any(key in lower for key in _SECRET_KEYS):
        yield from _assigned(text)
    yield from _random_words(text)
    if ("AKIA" in text or "ASIA" in text) and _AWS_KEY_ID.search(text):
        yield from (m.span() for m in _AWS_SECRET_KEY.finditer(text))


def _assigned(text: str) -> Iterator[Span]:
    for m in _ASSIGNED.finditer(text):
        group = "dq" if m["dq"] else "sq" if m["sq"] else "bare"
        value = m[group]
        if _NOT_A_VALUE.match(value) or _names_itself(_key(text, m), value, group == "bare"):
            continue
        yield m.span(group)


def _key(text: str, assignment: re.Match[str]) -> str:
    """The whole key of an assignment (``aws_secret_access_key``), not only its secret word."""
    start = assignment.start()
    before = _KEY_START.search(text, max(0, start - 64), start)
    prefix = before.group() if before else ""
    return prefix + assignment["key"]


def _names_itself(key: str, value: str, bare: bool) -> bool:
    """``api_key=api_key``, ``password=self.password``: code passing a variable on."""
    same = value.lower().replace("-", "_") == key.lower().replace("-", "_")
    return bare and (same or _IDENTIFIER_PATH.fullmatch(value) is not None)


def _random_words(text: str) -> Iterator[Span]:
    for m in _WORD.finditer(text):
        start, end = _without_path_words(m.group(), m.start())
        if end - start >= MIN_SECRET_LENGTH and random_looking(text[start:end]):
            yield start, end


def _without_path_words(word: str, start: int) -> Span:
    """The span of ``word`` without leading and trailing ``/`` parts that are plain words
    (``com/``, ``/edit``): what is left of a URL path or file path around a token."""
    parts = word.split("/")
    end = start + len(word)
    while len(parts) > 1 and _PATH_PART.fullmatch(parts[0]):
        start += len(parts.pop(0)) + 1
    while len(parts) > 1 and _PATH_PART.fullmatch(parts[-1]):
        end -= len(parts.pop()) + 1
    return start, end


def random_looking(word: str) -> bool:
    """Whether ``word`` looks like a key rather than a name: upper case, lower case and digits,
    entropy ≥ :data:`ENTROPY_BITS`, mean run ≤ :data:`MAX_MEAN_RUN`, and no segment of 8+
    characters that is hex or made of words."""
    segments = _SEGMENT.findall(word)
    if any(len(s) >= 8 and (_HEX.fullmatch(s) or mean_run(s) > _WORDY_RUN) for s in segments):
        return False
    core = "".join(segments)
    classes = (str.isupper, str.islower, str.isdigit)
    return (
        all(any(test(c) for c in core) for test in classes)
        and entropy(core) >= ENTROPY_BITS
        and mean_run(core) <= MAX_MEAN_RUN
    )


def entropy(word: str) -> float:
    """Shannon entropy of ``word``, in bits per character."""
    size = len(word)
    return -sum(n / size * math.log2(n / size) for n in Counter(word).values()) if size else 0.0


def mean_run(word: str) -> float:
    """Mean length of the runs ``word`` is made of: a capitalised or lower-case word, an
    upper-case word, a number."""
    runs = _RUN.findall(word)
    return sum(map(len, runs)) / len(runs) if runs else 0.0


# -- card -----------------------------------------------------------------------------------------

_CARD = lazy(r"(?<![\w-])(?<!\d[.,])\d(?:[ -]?\d){12,18}(?![\w-]|[.,]\d)")
_CARD_BRANDS = (  # (IIN prefix, lengths)
    (lazy(r"4"), (13, 16, 19)),  # Visa
    (lazy(r"5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720"), (16,)),  # Mastercard
    (lazy(r"3[47]"), (15,)),  # Amex
    (lazy(r"6011|64[4-9]|65"), (16, 17, 18, 19)),  # Discover
    (lazy(r"35(?:2[89]|[3-8]\d)"), (16, 17, 18, 19)),  # JCB
    (lazy(r"30[0-59]|3[689]"), (14, 15, 16, 17, 18, 19)),  # Diners
    (lazy(r"62"), (16, 17, 18, 19)),  # UnionPay
    (lazy(r"5018|5020|5038|5893|6304|6759|676[1-3]"), tuple(range(12, 20))),  # Maestro
    (lazy(r"220[0-4]"), (16, 17, 18, 19)),  # Mir
)


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if _card_shaped(digits) and luhn(digits):
            yield m.span()


def _card_shaped(digits: str) -> bool:
    return any(iin.match(digits) and len(digits) in sizes for iin, sizes in _CARD_BRANDS)


def luhn(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


# -- iban -----------------------------------------------------------------------------------------

_IBAN_TABLE = (
    "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DK18 DO28"
    " EE20 EG29 ES24 FI18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IQ23 IS26"
    " IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MK19 MR27 MT31 MU30"
    " NL18 NO15 PK24 PL28 PS29 PT25 QA29 RO24 RS22 SA24 SC31 SE24 SI19 SK24 SM27 ST25 SV28 TL23"
    " TN24 TR26 UA29 VA22 VG24 XK20"
)
IBAN_LENGTHS: Mapping[str, int] = MappingProxyType(
    {entry[:2]: int(entry[2:]) for entry in _IBAN_TABLE.split()}
)
"""IBAN length per country: SEPA (EU, EEA, GB, CH, MC, SM, AD, VA, AL, ME, MD, MK, RS) and the
rest of the IBAN registry's common members."""
_IBAN_START = lazy(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?= ?[A-Z0-9])")


def _ibans(text: str, verify: bool = True) -> Iterator[Span]:
    """IBANs of the right length for their country; with ``verify``, whose mod-97 check holds."""
    for m in _IBAN_START.finditer(text):
        length = IBAN_LENGTHS.get(m.group()[:2])
        end = _iban_end(text, m.start(), length) if length else None
        if end is not None and (not verify or iban_valid(text[m.start() : end].replace(" ", ""))):
            yield m.start(), end


def _iban_end(text: str, start: int, length: int) -> int | None:
    """Where ``length`` letters and digits from ``start`` end (single spaces between allowed),
    if nothing alphanumeric follows right after."""
    i, taken = start, 0
    while taken < length and i < len(text):
        char = text[i]
        if char == " " and taken and text[i - 1] != " ":
            i += 1
            continue
        if not ("A" <= char <= "Z" or "0" <= char <= "9"):
            return None
        taken, i = taken + 1, i + 1
    if taken < length or (i < len(text) and text[i].isalnum()):
        return None
    return i


def iban_valid(iban: str) -> bool:
    """Whether a compact IBAN (``GB82WEST12345698765432``) passes the mod-97 check."""
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in moved)) % 97 == 1


# -- ip -------------------------------------------------------------------------------------------

_IPV4 = lazy(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)")
_IPV6 = lazy(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?![\w:])"
)
_VERSION_LABEL = lazy(r"(?i)\b(?:version|ver|release|build|v)\.?:?\s*$")
_HEX_GROUP = lazy(r"[0-9A-Fa-f]{3,4}")


def _ips(text: str) -> Iterator[Span]:
    for m in _IPV4.finditer(text):
        address = _address(m.group())
        version = _VERSION_LABEL.search(text, max(0, m.start() - 16), m.start())
        if address and not (version or address.is_reserved) and _names_a_host(address):
            yield m.span()
    if ":" in text:
        for m in _IPV6.finditer(text):
            address = _address(m.group())
            if address and _names_a_host(address) and _written_like_ipv6(m.group()):
                yield m.span()


def _names_a_host(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return not (address.is_loopback or address.is_unspecified)


def _address(candidate: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        return None


def _written_like_ipv6(candidate: str) -> bool:
    groups = [g for g in re.split(r"[:.]", candidate) if g]
    return (
        any(c.isdigit() for c in candidate)
        and any(_HEX_GROUP.fullmatch(g) for g in groups)
        and (len(groups) >= 3 or any(c.isalpha() for c in candidate))
    )


_NEEDS = {
    "email": lazy(r"@"),
    "phone": lazy(r"\d(?:\D{0,3}\d){6}"),
    "card": lazy(r"\d(?:\D{0,3}\d){12}"),
    "iban": lazy(r"[A-Z]{2}\d\d"),
    "ip": lazy(r"\d\.\d|:"),
    "secret": lazy(
        r"[A-Za-z0-9_+/=.~-]{12,}"
        r"|(?i:pass|secret|key|token|credential|bearer|authorization|://|-----begin)"
    ),
}
"""What each rule needs in an ASCII text to find anything there (an address's ``@``, seven
digits close together, thirteen, an IBAN's country and check digits, an address's dot or
colon, a token's run of characters or a secret's name), once its ISO dates — which no rule
finds — are taken out: :meth:`Redactor.finds` runs no rule on a text without it."""
_ISO_DATE = lazy(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])")
_FINDERS = {"email": _emails, "secret": _secrets, "card": _cards, "iban": _ibans, "ip": _ips}
