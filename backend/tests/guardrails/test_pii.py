"""PII detection: true positives per type, checksum-invalid near-misses, numbers that are not phones, redaction."""

import pytest

from backend.guardrails.pii import find_pii, iban_valid, known_pii, luhn_valid, pii_key, redact


def found(text: str) -> list[tuple[str, str]]:
    return [(m.type, m.text) for m in find_pii(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Write to jane.doe@northwind.example today", ("EMAIL", "jane.doe@northwind.example")),
        ("Call +44 20 7946 0958 after lunch", ("PHONE", "+44 20 7946 0958")),
        ("Desk: +41 (0)96 471 07 95", ("PHONE", "+41 (0)96 471 07 95")),
        ("US office (415) 555-0100 ext 23", ("PHONE", "(415) 555-0100 ext 23")),
        ("Ring 905-674-3793 tomorrow", ("PHONE", "905-674-3793")),
        ("Mobile 0490 75 40 81", ("PHONE", "0490 75 40 81")),
        ("You can reach me on 467 3395", ("PHONE", "467 3395")),
        ("Card 4111 1111 1111 1111 expires soon", ("CREDIT_CARD", "4111 1111 1111 1111")),
        ("Card 4111-1111-1111-1111", ("CREDIT_CARD", "4111-1111-1111-1111")),
        ("Amex 378282246310005 on file", ("CREDIT_CARD", "378282246310005")),
        ("IBAN GB82 WEST 1234 5698 7654 32 please", ("IBAN", "GB82 WEST 1234 5698 7654 32")),
        ("Pay DE89370400440532013000 now", ("IBAN", "DE89370400440532013000")),
        ("SSN 514-69-0360 on the form", ("US_SSN", "514-69-0360")),
        ("NI number AB 12 34 56 C", ("UK_NINO", "AB 12 34 56 C")),
        ("Server at 192.168.10.20 is down", ("IP_ADDRESS", "192.168.10.20")),
        ("Host 2001:db8::8a2e:370:7334 replied", ("IP_ADDRESS", "2001:db8::8a2e:370:7334")),
    ],
)
def test_find_pii_when_valid_value_then_found_with_exact_span(text: str, expected: tuple[str, str]) -> None:
    assert found(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "Card 4111 1111 1111 1112 was declined",  # fails Luhn
        "Number 1234567812345678 on the box",  # fails Luhn
        "IBAN GB82 WEST 1234 5698 7654 33",  # wrong mod-97 check digits
        "IBAN XX82WEST12345698765432",  # unknown country
        "SSN 000-12-3456 and 666-12-3456 and 912-34-5678",  # never-issued areas
        "NINO GB 12 34 56 A",  # GB prefix is not allocated
        "Hosts 256.1.1.1 and 10.0.0.300",  # octets out of range
        "Firmware version 1.2.3.4 and v2.10.1",  # versions, not IPs
        "Meet at 12:20:39 on 10:00",  # times, not IPv6
    ],
)
def test_find_pii_when_checksum_or_range_invalid_then_nothing(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "In 2023 we sold 1,500 units for 240 euros each.",
        "Between 2019 and 2024, or 2019-2024, or 1990 2000 2010.",
        "The meeting is on 2024-03-15, or 15.03.2024, or 3/15/2024.",
        "It costs $1 234 567 or 1 500 000 euros in total.",
        "The unit weighs 40 kg and needs 30 cm of space; ticket #12345678.",
        "Private cars get 0.30 euros per kilometre; hotels 140 euros.",
        "Billing address: 03262 2437 Main St",
        "My driver's license number is 6940579",
        "Call me on 2024-03-15 after 10:00",
        "Ring me back on 15.03.2024",
    ],
)
def test_find_pii_when_years_prices_dates_or_ids_then_no_phone(text: str) -> None:
    assert found(text) == []


def test_find_pii_when_weak_grouping_without_phone_context_then_not_a_phone() -> None:
    assert found("Order 467 3395 shipped") == []
    assert found("Call me on 467 3395") == [("PHONE", "467 3395")]


def test_find_pii_when_numbers_precede_or_follow_then_the_valid_part_is_found() -> None:
    assert found("ref 1234 4111 1111 1111 1111 ok") == [("CREDIT_CARD", "4111 1111 1111 1111")]
    assert found("card 4111 1111 1111 1111 431 times") == [("CREDIT_CARD", "4111 1111 1111 1111")]
    assert found("call +44 20 7946 0958, then 12 more") == [("PHONE", "+44 20 7946 0958")]


def test_find_pii_when_overlapping_candidates_then_ssn_beats_phone() -> None:
    assert found("call 514-69-0360") == [("US_SSN", "514-69-0360")]


def test_find_pii_when_type_filtered_then_only_that_type_and_unknown_type_rejected() -> None:
    text = "Mail a@b.co or call +44 20 7946 0958"
    assert found(text) == [("EMAIL", "a@b.co"), ("PHONE", "+44 20 7946 0958")]
    assert [m.type for m in find_pii(text, ["PHONE"])] == ["PHONE"]
    with pytest.raises(ValueError, match="unknown PII types"):
        find_pii(text, ["PASSPORT"])


def test_redact_replaces_each_span_with_its_placeholder() -> None:
    text, matches = redact("Mail jane@corp.example, card 4111111111111111, from 10.0.0.1.")
    assert text == "Mail [EMAIL], card [CREDIT_CARD], from [IP_ADDRESS]."
    assert [m.type for m in matches] == ["EMAIL", "CREDIT_CARD", "IP_ADDRESS"]


def test_redact_when_types_given_then_other_pii_stays() -> None:
    text, _ = redact("Mail jane@corp.example or call +44 20 7946 0958", ["PHONE"])
    assert text == "Mail jane@corp.example or call [PHONE]"


def test_checksum_helpers() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB82 WEST 1234 5698 7654 33")


def test_pii_key_ignores_spelling_so_known_values_can_be_allowed() -> None:
    keys = known_pii("Call +44 20 7946 0958")
    assert pii_key(find_pii("call +44-20-7946-0958")[0]) in keys
    assert pii_key(find_pii("call +44 20 7946 0959")[0]) not in keys
