"""Chunking: spans, structure boundaries, sizes, overlap, long sentences and determinism."""

import hashlib

import pytest
from fpdf import FPDF

from backend.rag.chunking import Chunk, chunk_sections, estimate_tokens, full_text
from backend.rag.loaders import Section, load_document

SENTENCES = [
    "The Zephyr-9 must be serviced every twelve months by a certified technician.",
    "Units that run more than sixteen hours a day need a service every six months.",
    "A standard service replaces both air filters and cleans the heat-exchanger fins.",
    "It also checks the refrigerant pressure and updates the controller firmware.",
    "Error code E4 means the air filter is clogged and both filters must be replaced.",
    "Error code E7 means the refrigerant pressure is low and a technician must be called.",
]


def prose(sentences: int, start: int = 0) -> str:
    """A paragraph of distinct numbered sentences (about 20 tokens each)."""
    return " ".join(f"{n}. {SENTENCES[n % len(SENTENCES)]}" for n in range(start, start + sentences))


def assert_spans_match(sections: list[Section], chunks: list[Chunk]) -> None:
    """Every chunk's text is its span of the document's full text."""
    text = full_text(sections)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text


def test_full_text_joins_section_texts_with_blank_lines():
    sections = [Section("One.", 1, None), Section("Two.", 2, None)]
    assert full_text(sections) == "One.\n\nTwo."


def test_estimate_tokens_is_a_quarter_of_the_whitespace_collapsed_characters_rounded_up():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("ab    \n\n  cd") == estimate_tokens("ab cd") == 2
    assert estimate_tokens("word " * 100) == 125


def test_chunk_text_is_exactly_its_span_of_full_text_and_hash_is_sha256():
    sections = [Section("  Intro.  ", None, None), Section(prose(30), None, "Body"), Section(prose(5), None, "End")]
    chunks = chunk_sections(sections, target_tokens=60, overlap_tokens=15)
    assert len(chunks) > 3
    assert_spans_match(sections, chunks)
    assert chunks[0].text == "Intro."
    for chunk in chunks:
        assert chunk.hash == hashlib.sha256(chunk.text.encode()).hexdigest()


def test_chunks_never_cross_a_pdf_page_even_when_both_pages_fit():
    sections = [Section("Page one first.", 1, None), Section("Page one second.", 1, None), Section("Two.", 2, None)]
    chunks = chunk_sections(sections, target_tokens=200)
    assert [(c.page, c.text) for c in chunks] == [(1, "Page one first.\n\nPage one second."), (2, "Two.")]


def test_chunks_never_cross_a_heading_even_when_both_sections_fit():
    sections = [Section("Warranty\n\nThree years.", None, "Warranty"), Section("Costs\n\n240 euros.", None, "Costs")]
    chunks = chunk_sections(sections, target_tokens=200)
    assert [(c.section, c.text) for c in chunks] == [
        ("Warranty", "Warranty\n\nThree years."),
        ("Costs", "Costs\n\n240 euros."),
    ]


def test_long_sections_stay_inside_their_page_and_heading():
    sections = [Section(prose(12), 1, "A"), Section(prose(12, 12), 1, "B"), Section(prose(12, 24), 2, "B")]
    chunks = chunk_sections(sections, target_tokens=50, overlap_tokens=10)
    bounds = []
    offset = 0
    for s in sections:
        bounds.append((offset, offset + len(s.text), s.page, s.heading))
        offset += len(s.text) + 2
    for chunk in chunks:
        owners = [(page, heading) for start, end, page, heading in bounds if start < chunk.end and chunk.start < end]
        assert owners == [(chunk.page, chunk.section)]
    assert {(c.page, c.section) for c in chunks} == {(1, "A"), (1, "B"), (2, "B")}
    assert all(not c.text[0].isspace() and not c.text[-1].isspace() for c in chunks)
    assert_spans_match(sections, chunks)


def test_every_word_of_the_document_lands_in_some_chunk():
    sections = [Section(prose(25), 1, None), Section("Short.\n\n" + prose(9, 40), 2, None), Section(" ", 3, None)]
    text = full_text(sections)
    covered = set()
    for chunk in chunk_sections(sections, target_tokens=40, overlap_tokens=8):
        covered.update(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_chunk_sizes_stay_within_target_and_above_half_of_it_except_each_last():
    sections = [Section("\n\n".join(prose(4, 4 * p) for p in range(10)), None, "Servicing")]
    chunks = chunk_sections(sections, target_tokens=100, overlap_tokens=20)
    sizes = [estimate_tokens(c.text) for c in chunks]
    assert len(chunks) >= 5
    assert max(sizes) <= 100
    assert min(sizes[:-1]) >= 50


def test_paragraphs_are_packed_whole_when_they_fit():
    paragraphs = [prose(2, 2 * p) for p in range(6)]  # about 40 tokens each
    sections = [Section("\n\n".join(paragraphs), None, None)]
    chunks = chunk_sections(sections, target_tokens=100, overlap_tokens=0)
    assert [c.text for c in chunks] == ["\n\n".join(paragraphs[i : i + 2]) for i in range(0, 6, 2)]


def test_consecutive_chunks_of_a_section_overlap_by_whole_tail_sentences():
    sections = [Section(prose(20), None, "Servicing")]
    chunks = chunk_sections(sections, target_tokens=80, overlap_tokens=30)
    text = full_text(sections)
    sentence_starts = {i for i in range(len(text)) if i == 0 or text[i - 2 : i] == ". " and text[i].isdigit()}
    assert len(chunks) >= 4
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert previous.start < current.start < previous.end < current.end
        shared = text[current.start : previous.end]
        assert 10 <= estimate_tokens(shared) <= 30
        assert current.start in sentence_starts


def test_overlap_falls_back_to_tail_words_when_the_last_sentence_is_too_long():
    long_sentence = "Filters " + " ".join(f"word{n}" for n in range(60)) + " end."
    sections = [Section(prose(3) + " " + long_sentence + " " + prose(3, 3), None, None)]
    chunks = chunk_sections(sections, target_tokens=60, overlap_tokens=12)
    assert_spans_match(sections, chunks)
    overlaps = [estimate_tokens(full_text(sections)[b.start : a.end]) for a, b in zip(chunks, chunks[1:], strict=False)]
    assert all(0 < n <= 12 for n in overlaps)


def test_overlap_uses_tail_words_when_whole_tail_sentences_give_less_than_half_of_it():
    long = "the filter housing of the unit is opened with the supplied key and the cover is lifted away"  # ~25 tokens
    sections = [Section(" ".join(f"Step {n}: {long}. Ok." for n in range(12)), None, None)]
    chunks = chunk_sections(sections, target_tokens=70, overlap_tokens=20)
    text = full_text(sections)
    overlaps = [estimate_tokens(text[b.start : a.end]) for a, b in zip(chunks, chunks[1:], strict=False)]
    assert len(overlaps) >= 4
    assert all(10 <= n <= 20 for n in overlaps)


def test_no_overlap_when_overlap_tokens_is_zero():
    sections = [Section(prose(20), None, None)]
    chunks = chunk_sections(sections, target_tokens=80, overlap_tokens=0)
    assert len(chunks) >= 4
    assert all(previous.end < current.start for previous, current in zip(chunks, chunks[1:], strict=False))


def test_chunks_of_different_sections_do_not_overlap():
    sections = [Section(prose(10), 1, None), Section(prose(10, 10), 2, None)]
    chunks = chunk_sections(sections, target_tokens=60, overlap_tokens=20)
    first_of_page_two = next(c for c in chunks if c.page == 2)
    last_of_page_one = [c for c in chunks if c.page == 1][-1]
    assert last_of_page_one.end < first_of_page_two.start
    assert first_of_page_two.text.startswith("10. ")


def test_sentence_longer_than_target_is_split_at_words():
    words = [f"w{n:03d}" for n in range(200)]
    sections = [Section(" ".join(words) + ".", None, None)]
    chunks = chunk_sections(sections, target_tokens=30, overlap_tokens=5)
    assert len(chunks) > 5
    assert max(estimate_tokens(c.text) for c in chunks) <= 30
    for chunk in chunks:
        assert all(token in words or token == "w199." for token in chunk.text.split())
    assert chunks[-1].text.endswith("w199.")


def test_word_longer_than_target_is_cut_into_pieces():
    sections = [Section("x" * 1000, None, None)]
    chunks = chunk_sections(sections, target_tokens=50, overlap_tokens=0)
    assert [len(c.text) for c in chunks] == [200] * 5
    assert_spans_match(sections, chunks)


def test_code_fence_with_blank_lines_is_kept_whole_in_one_chunk():
    code = "```python\n# setup\n\nimport ragline\n\nragline.start()\n```"  # 13 tokens, in three blank-line blocks
    sections = [Section(prose(2) + "\n\n" + code + "\n\n" + prose(2, 2), None, "Install")]  # 40 + 13 + 40 tokens
    chunks = chunk_sections(sections, target_tokens=50, overlap_tokens=0)
    with_code = [c for c in chunks if "```" in c.text]
    assert len(with_code) == 1 and code in with_code[0].text


def test_list_items_on_new_lines_are_sentence_boundaries():
    items = "\n".join(f"- Item {n} has no final full stop and keeps going with several words" for n in range(12))
    chunks = chunk_sections([Section(items, None, None)], target_tokens=40, overlap_tokens=0)
    assert len(chunks) > 1
    assert all(c.text.startswith("- Item") for c in chunks)


def test_empty_and_whitespace_sections_are_skipped():
    sections = [Section("", 1, None), Section(" \n\n\t", 1, None), Section("Real text.", 2, None), Section("", 3, None)]
    chunks = chunk_sections(sections)
    assert [(c.index, c.page, c.text) for c in chunks] == [(0, 2, "Real text.")]
    assert_spans_match(sections, chunks)
    assert chunk_sections([]) == []


def test_indexes_are_positions_so_neighbours_are_the_adjacent_chunks():
    sections = [Section(prose(15), 1, "A"), Section(prose(15, 15), 2, "B")]
    chunks = chunk_sections(sections, target_tokens=60, overlap_tokens=10)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert current.index == previous.index + 1 and current.end > previous.end


def test_output_is_deterministic():
    sections = [Section(prose(25), 1, None), Section("Notes\n\n" + prose(7, 30), None, "Notes")]
    assert chunk_sections(sections, 70, 15) == chunk_sections(list(sections), 70, 15)


@pytest.mark.parametrize(("target", "overlap"), [(0, 0), (50, -1), (50, 50), (50, 80)])
def test_invalid_sizes_raise_value_error(target, overlap):
    with pytest.raises(ValueError):
        chunk_sections([Section("Text.", None, None)], target_tokens=target, overlap_tokens=overlap)


def test_loaded_pdf_chunks_keep_page_numbers():
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(2):
        pdf.add_page()
        pdf.multi_cell(0, 6, prose(12, 12 * page), new_x="LMARGIN", new_y="NEXT")
    loaded = load_document("manual.pdf", bytes(pdf.output()))
    chunks = chunk_sections(loaded.sections, target_tokens=80, overlap_tokens=15)
    assert {c.page for c in chunks} == {1, 2}
    assert all(c.section is None for c in chunks)
    assert next(c for c in chunks if c.page == 2).text.startswith("12. ")
    assert_spans_match(loaded.sections, chunks)
