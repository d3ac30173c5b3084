"""StreamRedactor: PII split across tokens is never emitted; the stream equals redact(full text)."""

import random

import pytest

from backend.guardrails.pii import find_pii, known_pii, redact
from backend.guardrails.stream import MAX_HOLD, MarkerStripper, StreamRedactor

ANSWER = (
    "Contact jane.doe@northwind.example or call +41 (0)96 471 07 95 today. Card 4111 1111 1111 1111, "
    "IBAN GB82 WEST 1234 5698 7654 32 and SSN 514-69-0360. Host 192.168.10.20 is fine. Mobile: 723 813 266\n"
    "Fax: 345-899-3560x4587 end. US office (415) 555-0100 or call 555 1234 extension 42 please."
)


def stream(text: str, sizes: list[int], redactor: StreamRedactor | None = None) -> tuple[list[str], str]:
    """Feed text in pieces of the given sizes; return the emitted pieces and their concatenation."""
    redactor = redactor or StreamRedactor()
    out: list[str] = []
    cursor = 0
    for size in sizes:
        out.append(redactor.feed(text[cursor : cursor + size]))
        cursor += size
    out.append(redactor.feed(text[cursor:]))
    out.append(redactor.flush())
    return out, "".join(out)


def assert_never_leaks(pieces: list[str], text: str) -> None:
    secrets = [m.text for m in find_pii(text)]
    assert secrets, "the test text must contain PII"
    emitted = ""
    for piece in pieces:
        emitted += piece
        assert not any(secret in emitted for secret in secrets)


def test_email_split_across_many_tokens_is_never_emitted() -> None:
    text = "Write to jane.doe@northwind.example or reply here."
    pieces, out = stream(text, [1] * len(text))
    assert_never_leaks(pieces, text)
    assert out == "Write to [EMAIL] or reply here."


def test_card_split_across_tokens_is_never_emitted() -> None:
    text = "Your card 4111 1111 1111 1111 was charged."
    redactor = StreamRedactor()
    first = redactor.feed("Your card 4111 ")
    assert "4111" not in first
    pieces = [first] + [redactor.feed(t) for t in ["1111 ", "11", "11 1", "111 ", "was ", "charged."]]
    pieces.append(redactor.flush())
    assert_never_leaks(pieces, text)
    assert "".join(pieces) == redact(text)[0]


@pytest.mark.parametrize("seed", range(25))
def test_random_token_splits_equal_redact_of_full_text(seed: int) -> None:
    rng = random.Random(seed)
    sizes = [rng.randint(1, 7) for _ in range(len(ANSWER))]
    pieces, out = stream(ANSWER, sizes)
    assert_never_leaks(pieces, ANSWER)
    assert out == redact(ANSWER)[0]


@pytest.mark.parametrize("item", ["4111 1111 1111 1111", "call 555 1234", "GB82 WEST 1234 5698 7654 32"])
def test_forced_cuts_in_long_runs_without_word_boundaries_never_split_pii(item: str) -> None:
    rng = random.Random(7)
    numbers = " ".join(str(rng.randint(100, 999)) for _ in range(64))  # 3-digit groups: no PII, no barrier
    for shift in range(0, 130, 3):  # slide the PII across a whole period of the forced cut points
        text = f"{numbers}{' 5' * shift} {item} {numbers[:120]}"
        pieces, out = stream(text, [2] * (len(text) // 2))
        assert_never_leaks(pieces, text)
        assert out == redact(text)[0]
        assert len(pieces[-1]) <= MAX_HOLD  # the held tail stays bounded: text was emitted along the way


def test_allowed_values_pass_and_types_filter() -> None:
    text = "Mail security@northwind.example or jane@evil.example, card 4111111111111111."
    allowed = known_pii("Report to security@northwind.example")
    _, out = stream(text, [2] * len(text), StreamRedactor(types=["EMAIL"], allowed=allowed))
    assert out == "Mail security@northwind.example or [EMAIL], card 4111111111111111."


def test_flush_emits_held_tail() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("call 555") == "call "
    assert redactor.flush() == "555"


def test_a_first_word_goes_out_with_the_next_token() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("Hotels") == ""  # may still grow into an address ("Hotels@…")
    assert redactor.feed(" are") == "Hotels "
    assert redactor.feed(" paid") == "are "


def test_a_common_opening_word_goes_out_at_once() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("The") == "The"  # no generation step spent waiting for the next token
    assert redactor.feed(" hotel") == ""
    assert redactor.feed(" limit") == " hotel "
    assert redactor.feed(" is") + redactor.flush() == "limit is"


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (["The", ".team", "@north", "wind.example", " today."], "The[EMAIL] today."),
        (["I", "@x", ".example", " wrote."], "I[EMAIL] wrote."),
        (["A", "B", " 12", " 34", " 56", " C", " is", " yours."], "A[UK_NINO] is yours."),
    ],
)
def test_an_opening_word_that_grows_into_pii_lets_out_only_that_word(tokens: list[str], expected: str) -> None:
    redactor = StreamRedactor()
    pieces = [redactor.feed(t) for t in tokens] + [redactor.flush()]
    assert pieces[0] == tokens[0]
    assert "".join(pieces) == expected
    text = "".join(tokens)
    rest_of_secret = [m.text[len(tokens[0]) :] for m in find_pii(text)]
    assert rest_of_secret and not any(rest in "".join(pieces) for rest in rest_of_secret)


def test_a_first_word_ending_in_a_comma_goes_out_with_its_comma() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("Taxis") == ""
    assert redactor.feed(",") == "Taxis,"  # no pattern contains a comma: nothing after it can join "Taxis"
    assert redactor.feed(" trains") == ""
    assert redactor.feed(" and") == " trains "


def test_a_comma_does_not_release_a_word_that_may_be_part_of_an_address() -> None:
    redactor = StreamRedactor()
    pieces = [redactor.feed(t) for t in ["Mail", " jane", ".doe", "@x", ".example", ",", " now"]]
    pieces.append(redactor.flush())
    assert "".join(pieces) == "Mail [EMAIL], now"
    assert_never_leaks(pieces, "Mail jane.doe@x.example, now")


def test_two_capitals_may_open_a_nino_and_are_held() -> None:
    text = "Is AB 12 34 56 C yours? No CE here."
    redactor = StreamRedactor()
    pieces = [redactor.feed(t) for t in ["Is", " AB", " 12", " 34", " 56"]]
    assert "".join(pieces) == "Is "  # "AB" could open an insurance number: nothing after "Is " goes out yet
    pieces += [redactor.feed(t) for t in [" C", " yours?", " No", " CE here."]] + [redactor.flush()]
    assert_never_leaks(pieces, text)
    assert "".join(pieces) == redact(text)[0] == "Is [UK_NINO] yours? No CE here."


SHORT_WORDS = (
    "So do it by mail to al@x.example or by the IBAN DE89 3704 0044 0532 0130 00 in a day. Is AB 12 34 56 C ok? "
    "We ask the AB at 415 555 0100 or the 4111 1111 1111 1111 card on it. No,al@y.example! Yes;call 415 555 0199? "
    "Hi,4111 1111 1111 1111, and GB,AB 12 34 56 C."
)


@pytest.mark.parametrize("seed", range(25))
def test_short_words_before_pii_never_let_it_out(seed: int) -> None:
    rng = random.Random(seed)
    pieces, out = stream(SHORT_WORDS, [rng.randint(1, 5) for _ in range(len(SHORT_WORDS))])
    assert_never_leaks(pieces, SHORT_WORDS)
    assert out == redact(SHORT_WORDS)[0]


def test_a_first_token_that_starts_a_word_the_reader_has_seen_goes_out_at_once() -> None:
    seen = "How long must passwords be? Passwords must be at least 14 characters. Ask Jane in IT."
    redactor = StreamRedactor(seen_text=seen)
    assert redactor.feed("Pass") == "Pass"  # the start of "Passwords", already in the question
    assert redactor.feed("words") + redactor.feed(" must") == "words "
    assert StreamRedactor(seen_text=seen).feed("Zeph") == ""  # not in front of the reader: held as before
    grows = StreamRedactor(seen_text=seen)
    pieces = [grows.feed(t) for t in ["Jane", ".doe", "@north", "wind.example", " wrote."]] + [grows.flush()]
    assert pieces[0] == "Jane" and "".join(pieces) == "Jane[EMAIL] wrote."


def test_a_first_number_the_reader_has_seen_goes_out_digit_by_digit_at_once() -> None:
    seen = "How many parking spaces are there? There are 40 spaces, 4 of them for visitors."
    redactor = StreamRedactor(seen_text=seen)
    assert redactor.feed("4") == "4"  # the start of "40", in the sources: no waiting for the number to end
    pieces = ["4"] + [redactor.feed(t) for t in ["0", " spaces", " are", " reserved."]] + [redactor.flush()]
    assert "".join(pieces) == "40 spaces are reserved."
    assert StreamRedactor(seen_text=seen).feed("7") == ""  # no number of the sources starts with 7: held


def test_a_first_number_that_grows_into_a_phone_number_lets_out_only_its_first_token() -> None:
    seen = "Which office? The San Francisco office (415 desks) opens at 8."
    tokens = ["4", "1", "5", " ", "5", "5", "5", " ", "0", "1", "0", "0", " is", " the", " desk."]
    redactor = StreamRedactor(seen_text=seen)
    pieces = [redactor.feed(t) for t in tokens] + [redactor.flush()]
    text = "".join(tokens)
    assert pieces[0] == "4"
    assert "".join(pieces) == "4[PHONE] is the desk." and [m.type for m in find_pii(text)] == ["PHONE"]
    assert "15 555 0100" not in "".join(pieces)


def test_a_first_token_of_many_digits_is_held_even_when_a_longer_number_of_the_sources_starts_with_it() -> None:
    seen = "Invoice 41555501009 is due on 3 May."
    redactor = StreamRedactor(seen_text=seen)
    pieces = [redactor.feed(t) for t in ["4155550100", " mobile", "."]] + [redactor.flush()]
    assert pieces[0] == ""  # ten digits: held, though the invoice number starts with them
    assert "".join(pieces) == "[PHONE] mobile." and "4155550100" not in "".join(pieces)


@pytest.mark.parametrize("text", ["Her number is 467 3395 - mobile.", "Call 723 813 266 \u2013 office hours only."])
def test_a_number_is_held_past_a_lone_dash_until_the_word_that_makes_it_a_phone(text: str) -> None:
    pieces, out = stream(text, [1] * len(text))
    assert_never_leaks(pieces, text)
    assert out == redact(text)[0]


def stripped(pieces: list[str]) -> str:
    stripper = MarkerStripper()
    return "".join(stripper.feed(p) for p in pieces) + stripper.flush()


def test_marker_stripper_drops_markers_with_their_space_and_holds_only_what_may_become_one():
    stripper = MarkerStripper()
    assert stripper.feed("Hello [") == "Hello" and stripper.feed("S1") == "" and stripper.feed("]!") == "!"
    assert stripped(["see [S1, ", "S2] and", " [S3][S4]."]) == "see and."
    assert stripped(["a [", "note] here"]) == "a [note] here"  # not a marker: let out as soon as it cannot be one
    assert stripped(["ends with [S"]) == "ends with [S"  # held, then flushed: it never became a marker
