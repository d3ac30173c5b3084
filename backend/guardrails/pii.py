"""Structured PII detection and redaction: regular expressions plus checksums, no models.

Types: EMAIL, PHONE, CREDIT_CARD (Luhn), IBAN (mod-97), US_SSN (area/group/serial rules),
UK_NINO (prefix rules), IP_ADDRESS (IPv4 octet ranges, IPv6 via ``ipaddress``).
A phone number in a strong format (``+``/``00`` prefix, area code in brackets, North American
3-3-4, national trunk ``0`` with 10+ digits) is found anywhere; a weaker digit grouping
(``467 3395``) only next to a phone word ("call", "mobile", "fax", ...). Dates, years, prices
and version strings are rejected.
"""

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

EMAIL = "EMAIL"
PHONE = "PHONE"
CREDIT_CARD = "CREDIT_CARD"
IBAN = "IBAN"
US_SSN = "US_SSN"
UK_NINO = "UK_NINO"
IP_ADDRESS = "IP_ADDRESS"
PII_TYPES: tuple[str, ...] = (EMAIL, IBAN, CREDIT_CARD, US_SSN, UK_NINO, IP_ADDRESS, PHONE)  # overlap priority


@dataclass(frozen=True)
class PiiMatch:
    """One detected PII span: text == source[start:end]."""

    type: str
    start: int
    end: int
    text: str


_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,24}(?![\w@-])"
)
_CARD = re.compile(  # a zero-width match at every possible start, so a bad candidate cannot hide a good one
    r"(?<![\w+-])(?=(?P<c>\d{12,19}"
    r"|\d{4}(?P<s>[ -])\d{4}(?P=s)\d{4}(?P=s)\d{4}(?P<tail>(?P=s)\d{1,3})?"
    r"|\d{4}(?P<t>[ -])\d{6}(?P=t)\d{4,5})(?![\d]|-\d))"
)
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}"
    r"(?:[A-Za-z0-9]{11,30}|(?: [A-Za-z0-9]{4}){2,7}(?: [A-Za-z0-9]{1,3})?)(?![A-Za-z0-9])"
)
_SSN = re.compile(r"(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d]|-\d)")
_SSN_BARE = re.compile(r"(?<![\d-])\d{9}(?![\d]|-\d)")
_SSN_CONTEXT = re.compile(r"\b(ssn|social security)\b", re.IGNORECASE)
_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])"
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\w|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")
_VERSION_BEFORE = re.compile(r"\b(version|ver|release|build|firmware|v)\.?\s*$", re.IGNORECASE)

_PHONE = re.compile(  # zero-width at every possible start, like _CARD; possessive digit runs keep it linear
    r"(?<![\w+@/.-])(?<!\d,)(?=(?P<p>(?:\+|00)?(?:\(\d++\)|\d++)(?:[ .-]?\(0\))?(?:[ .-]?(?:\(\d++\)|\d++)){0,6}"
    r"(?:\s?(?:x|ext\.?|extension)\s?\d{1,5})?)(?![\w@]|[.,-]\d))"
)
_PHONE_EXT = re.compile(r"\s?(?:x|ext\.?|extension)\s?\d{1,5}$")
_NANP = re.compile(r"^(?:\+?1[ .-]?)?\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}$")
_DATE_INSIDE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\b\d{1,2}[-./]\d{1,2}[-./](?:19|20)\d{2}\b")
_YEARS_ONLY = re.compile(r"^(?:(?:19|20)\d{2}[ .-]?)+$")
_PHONE_WORDS_BEFORE = re.compile(
    r"\b(phone|telephone|tel|mobile|cell|cellphone|fax|call|calling|called|ring|dial|sms|text me|whatsapp|contact|"
    r"reach|reached|answering|messages?|voicemail|hotline|desk|landline|phone number|my number)\b"
    r"[^\d\n]{0,30}$",
    re.IGNORECASE,
)
_PHONE_WORDS_AFTER = re.compile(r"^[\s-]{0,3}(office|mobile|cell|fax|home|work|desk|phone)\b", re.IGNORECASE)
_MONEY_BEFORE = re.compile(r"([$€£¥]|\b(eur|usd|gbp|chf|sek))\s*$", re.IGNORECASE)
_UNIT_AFTER = re.compile(
    r"^\s*([$€£%]|(euros?|dollars?|pounds|eur|usd|gbp|km|kg|kilometres?|metres?|miles)\b)", re.IGNORECASE
)
_IBAN_LENGTHS = dict(
    (code, int(n))
    for code, n in re.findall(
        r"([A-Z]{2})(\d\d)",
        "AD24AE23AL28AT20AZ28BA20BE16BG22BH22BR29BY28CH21CR22CY28CZ24DE22DK18DO28EE20EG29ES24FI18FO18FR27GB22GE22"
        "GI23GL18GR27GT28HR21HU28IE22IL23IQ23IS26IT27JO30KW30KZ20LB28LC32LI21LT20LU20LV21MC27MD24ME22MK19MR27MT31"
        "MU30NL18NO15PK24PL28PS29PT25QA29RO24RS22SA24SC31SE24SI19SK24SM27ST25SV28TL23TN24TR26UA29VA22VG24XK20",
    )
)


def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn (mod-10) check."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """True when the IBAN has a known country, that country's length and a valid mod-97 check."""
    compact = candidate.replace(" ", "").upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """True for an SSN the SSA could issue: area not 000/666/9xx, group not 00, serial not 0000."""
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _emails(text: str) -> Iterator[PiiMatch]:
    for m in _EMAIL.finditer(text):
        yield PiiMatch(EMAIL, m.start(), m.end(), m.group())


def _cards(text: str) -> Iterator[PiiMatch]:
    for m in _CARD.finditer(text):
        start, end = m.start("c"), m.end("c")
        ends = [end, m.start("tail")] if m.group("tail") else [end]  # "4111 1111 1111 1111 431": the 431 is not card
        for stop in ends:
            digits = re.sub(r"\D", "", text[start:stop])
            if len(set(digits)) == 1 or not luhn_valid(digits):
                continue
            if len(digits) == 12 and not re.match(r"5[06-9]|6", digits):  # 12 digits: Maestro ranges only
                continue
            yield PiiMatch(CREDIT_CARD, start, stop, text[start:stop])
            break


def _ibans(text: str) -> Iterator[PiiMatch]:
    for m in _IBAN.finditer(text):
        if iban_valid(m.group()):
            yield PiiMatch(IBAN, m.start(), m.end(), m.group())


def _ssns(text: str) -> Iterator[PiiMatch]:
    for m in _SSN.finditer(text):
        if ssn_valid(m.group(1), m.group(3), m.group(4)):
            yield PiiMatch(US_SSN, m.start(), m.end(), m.group())
    for m in _SSN_BARE.finditer(text):
        digits = m.group()
        if _SSN_CONTEXT.search(text[max(0, m.start() - 30) : m.start()]) and ssn_valid(
            digits[:3], digits[3:5], digits[5:]
        ):
            yield PiiMatch(US_SSN, m.start(), m.end(), digits)


def _ninos(text: str) -> Iterator[PiiMatch]:
    for m in _NINO.finditer(text):
        yield PiiMatch(UK_NINO, m.start(), m.end(), m.group())


def _ips(text: str) -> Iterator[PiiMatch]:
    for m in _IPV4.finditer(text):
        if not _VERSION_BEFORE.search(text[max(0, m.start() - 12) : m.start()]):
            yield PiiMatch(IP_ADDRESS, m.start(), m.end(), m.group())
    for m in _IPV6.finditer(text):
        groups = [g for g in m.group().split(":") if g]
        if len(groups) < 2 or max(map(len, groups)) < 3 or not any(ch.isdigit() for ch in m.group()):
            continue
        try:
            ipaddress.IPv6Address(m.group())
        except ValueError:
            continue
        yield PiiMatch(IP_ADDRESS, m.start(), m.end(), m.group())


def _phones(text: str) -> Iterator[PiiMatch]:
    for m in _PHONE.finditer(text):
        start = m.start("p")
        before = text[max(0, start - 40) : start]
        if _MONEY_BEFORE.search(before):
            continue
        word_before = bool(_PHONE_WORDS_BEFORE.search(before))
        for end in _phone_ends(m.group("p"), start):  # longest first: "+44 20 7946 0958 123 times" keeps the phone
            if _is_phone(text[start:end], word_before, text[end : end + 12]):
                yield PiiMatch(PHONE, start, end, text[start:end])
                break


def _phone_ends(candidate: str, start: int) -> list[int]:
    """End offsets to try for a phone candidate: its end, then before each trailing space-separated group."""
    ends = [start + len(candidate)]
    digits = 0
    shorter = []
    for i, ch in enumerate(candidate):
        if ch == " " and candidate[i - 1].isdigit() and 7 <= digits <= 15:
            shorter.append(start + i)
        digits += ch.isdigit()
    return ends + shorter[::-1]


def _is_phone(candidate: str, word_before: bool, after: str) -> bool:
    """Decide whether a digit grouping is a phone number, from its shape and its neighbours (cheap tests first)."""
    core = _PHONE_EXT.sub("", candidate)
    digits = sum(ch.isdigit() for ch in core)
    if not 7 <= digits <= 15:
        return False
    international = bool(re.match(r"\+|00[1-9]", core))
    strong = core[0] == "(" or (core[0] == "0" and digits >= 10) or bool(_NANP.match(core))
    if not (international or (strong and not core.isdigit()) or word_before or _PHONE_WORDS_AFTER.match(after)):
        return False
    if _DATE_INSIDE.search(core) or _YEARS_ONLY.match(core) or _UNIT_AFTER.match(after):
        return False
    return digits >= 8 or not international


_DETECTORS: dict[str, Callable[[str], Iterator[PiiMatch]]] = {
    EMAIL: _emails,
    IBAN: _ibans,
    CREDIT_CARD: _cards,
    US_SSN: _ssns,
    UK_NINO: _ninos,
    IP_ADDRESS: _ips,
    PHONE: _phones,
}


def find_pii(text: str, types: Iterable[str] | None = None) -> list[PiiMatch]:
    """Non-overlapping PII matches in text order; on overlap the earlier type in PII_TYPES wins."""
    wanted = set(PII_TYPES if types is None else types)
    unknown = wanted - set(PII_TYPES)
    if unknown:
        raise ValueError(f"unknown PII types: {sorted(unknown)}")
    taken: list[PiiMatch] = []
    for kind in PII_TYPES:  # all types compete for a span, so an allowed SSN is never re-read as a phone
        for match in _DETECTORS[kind](text):
            if all(match.end <= t.start or match.start >= t.end for t in taken):
                taken.append(match)
    return sorted((m for m in taken if m.type in wanted), key=lambda m: m.start)


def placeholder(kind: str) -> str:
    """The redaction placeholder of a PII type, e.g. "[EMAIL]"."""
    return f"[{kind}]"


def apply_redactions(text: str, matches: Iterable[PiiMatch]) -> str:
    """Text with every given (non-overlapping) match replaced by its placeholder."""
    out: list[str] = []
    cursor = 0
    for m in sorted(matches, key=lambda m: m.start):
        out.append(text[cursor : m.start])
        out.append(placeholder(m.type))
        cursor = m.end
    out.append(text[cursor:])
    return "".join(out)


def redact(text: str, types: Iterable[str] | None = None) -> tuple[str, list[PiiMatch]]:
    """Text with PII of the given types (default: all) replaced by "[TYPE]" placeholders, and the matches."""
    matches = find_pii(text, types)
    return apply_redactions(text, matches), matches


def pii_key(match: PiiMatch) -> str:
    """A spelling-independent key for a match: lower case, digits and letters only."""
    return f"{match.type}:{re.sub(r'[^0-9a-z@.:]', '', match.text.lower())}"


def known_pii(*texts: str) -> set[str]:
    """Keys of every PII match in the given texts (e.g. the question and the sources), for allow-listing."""
    return {pii_key(m) for text in texts for m in find_pii(text)}
