"""Loaders: each format from a real file made in the test, and every kind of bad input as a DocumentError."""

import io
import random
import zipfile
from pathlib import Path

import docx
import pytest
from fpdf import FPDF
from fpdf.enums import EncryptionMethod

from backend.rag.loaders import SUPPORTED_TYPES, DocumentError, LoadedDocument, Section, document_type, load_document

SAMPLE_DOCS = Path(__file__).resolve().parents[3] / "data" / "documents"


def make_pdf(pages: list[list[str]], password: str | None = None) -> bytes:
    """A text PDF with one list of paragraphs per page (an empty list makes a page without text)."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for paragraphs in pages:
        pdf.add_page()
        for paragraph in paragraphs:
            pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
    if password is not None:
        pdf.set_encryption(owner_password="owner", user_password=password, encryption_method=EncryptionMethod.RC4)
    return bytes(pdf.output())


def save_docx(document: docx.document.Document) -> bytes:
    """The document's .docx bytes."""
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def error_of(name: str, data: bytes) -> DocumentError:
    """The DocumentError that loading these bytes must raise."""
    with pytest.raises(DocumentError) as caught:
        load_document(name, data)
    return caught.value


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.pdf", "pdf"),
        ("B.PDF", "pdf"),
        ("c.docx", "docx"),
        ("d.md", "markdown"),
        ("e.Markdown", "markdown"),
        ("f.html", "html"),
        ("g.HTM", "html"),
        ("notes.v2.txt", "text"),
    ],
)
def test_document_type_maps_suffixes_case_insensitively(name, kind):
    assert document_type(name) == kind


@pytest.mark.parametrize("name", ["slides.pptx", "archive.tar.gz", "Makefile", "old.doc"])
def test_document_type_when_suffix_unsupported_then_415_listing_supported_types(name):
    with pytest.raises(DocumentError) as caught:
        document_type(name)
    assert caught.value.status == 415
    assert "not supported" in caught.value.message and name in caught.value.message
    assert all(suffix in caught.value.message for suffix in SUPPORTED_TYPES)
    assert str(caught.value) == caught.value.message and isinstance(caught.value, ValueError)


def test_load_document_when_suffix_unsupported_then_415():
    assert error_of("data.xyz", b"hello").status == 415


def test_pdf_sections_carry_one_based_page_numbers_and_page_count():
    data = make_pdf([["Alpha page one. Booking rules apply."], ["Bravo page two."], ["Charlie page three."]])
    loaded = load_document("policy.pdf", data)
    assert loaded.type == "pdf" and loaded.pages == 3
    assert [s.page for s in loaded.sections] == [1, 2, 3]
    assert [s.heading for s in loaded.sections] == [None, None, None]
    assert "Alpha page one" in loaded.sections[0].text
    assert loaded.sections[1].text == "Bravo page two."
    assert "Charlie" in loaded.sections[2].text


def test_pdf_page_without_text_is_skipped_but_counted():
    loaded = load_document("gap.pdf", make_pdf([["First page."], [], ["Third page."]]))
    assert loaded.pages == 3
    assert [(s.page, s.text) for s in loaded.sections] == [(1, "First page."), (3, "Third page.")]


def test_pdf_page_text_with_blank_lines_becomes_one_section_per_paragraph():
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.cell(text="Para one.\n\nPara two.")  # cell() keeps the newlines inside the PDF string, as some producers do
    loaded = load_document("paras.pdf", bytes(pdf.output()))
    assert loaded.sections == [Section("Para one.", 1, None), Section("Para two.", 1, None)]


def test_pdf_encrypted_with_empty_user_password_is_read():
    loaded = load_document("locked.pdf", make_pdf([["Readable without a password."]], password=""))
    assert loaded.sections[0].text == "Readable without a password."


def test_pdf_with_user_password_then_422_password_protected():
    err = error_of("secret.pdf", make_pdf([["Hidden."]], password="hunter2"))
    assert err.status == 422 and "password" in err.message and "secret.pdf" in err.message


@pytest.mark.parametrize("data", [b"this is not a pdf at all", b"%PDF-1.7\n%garbage\n", b""])
def test_pdf_when_bytes_are_corrupt_then_422_could_not_be_read(data):
    err = error_of("broken.pdf", data)
    assert err.status == 422
    assert "broken.pdf could not be read as a PDF: " in err.message


def test_pdf_when_no_page_has_text_then_422_no_text_needs_ocr():
    err = error_of("scan.pdf", make_pdf([[], []]))
    assert err.status == 422
    assert "scan.pdf contains no text" in err.message and "OCR" in err.message


def test_damaged_pdf_and_docx_bytes_raise_only_document_error():
    rng = random.Random(7)
    pdf = make_pdf([["Some text on a page."], ["More text."]])
    document = docx.Document()
    document.add_paragraph("Body.")
    samples = {"f.pdf": pdf, "f.docx": save_docx(document)}
    for name, good in samples.items():
        for _ in range(40):
            data = bytearray(good[: rng.randrange(len(good))] if rng.random() < 0.5 else good)
            for _ in range(rng.randrange(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            try:
                result = load_document(name, bytes(data))
            except DocumentError as err:
                assert err.status == 422
            else:
                assert isinstance(result, LoadedDocument) and result.sections


def test_docx_groups_paragraphs_under_headings_and_keeps_table_rows():
    document = docx.Document()
    document.add_paragraph("Preamble before any heading.")
    document.add_heading("Warranty", level=1)
    document.add_paragraph("Three years on parts.")
    document.add_paragraph("Five with a full service log.")
    document.add_heading("Costs", level=2)
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Price in euros"
    table.cell(0, 1).merge(table.cell(0, 2))
    table.cell(1, 0).text, table.cell(1, 1).text, table.cell(1, 2).text = "Service", "240", "per unit"
    document.add_paragraph("After the table.")
    loaded = load_document("manual.docx", save_docx(document))
    assert loaded.type == "docx" and loaded.pages is None
    assert loaded.sections == [
        Section("Preamble before any heading.", None, None),
        Section("Warranty\n\nThree years on parts.\n\nFive with a full service log.", None, "Warranty"),
        Section("Costs\n\nItem | Price in euros\nService | 240 | per unit\n\nAfter the table.", None, "Costs"),
    ]


def test_docx_title_style_starts_a_section():
    document = docx.Document()
    document.add_heading("Handbook", level=0)
    document.add_paragraph("Intro.")
    assert load_document("h.docx", save_docx(document)).sections == [Section("Handbook\n\nIntro.", None, "Handbook")]


def test_docx_when_not_a_zip_then_422_could_not_be_read():
    err = error_of("report.docx", b"plain bytes, not a zip")
    assert err.status == 422 and "report.docx could not be read as a DOCX: " in err.message


def test_docx_when_zip_is_not_a_word_document_then_422():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    assert error_of("fake.docx", buffer.getvalue()).status == 422


def test_docx_without_text_then_422_no_text():
    document = docx.Document()
    document.add_paragraph("   ")
    err = error_of("empty.docx", save_docx(document))
    assert err.status == 422 and "contains no text" in err.message


def test_markdown_splits_at_atx_headings_with_heading_as_first_line():
    text = "Intro line.\n\n# Zephyr-9 Manual\n\nOverview.\n\n## Warranty ##\n\nThree years.\n\nFive with log.\n"
    loaded = load_document("m.md", text.encode())
    assert loaded.type == "markdown"
    assert loaded.sections == [
        Section("Intro line.", None, None),
        Section("Zephyr-9 Manual\n\nOverview.", None, "Zephyr-9 Manual"),
        Section("Warranty\n\nThree years.\n\nFive with log.", None, "Warranty"),
    ]


def test_markdown_hash_inside_code_fence_is_not_a_heading():
    text = (
        "# Setup\n\nRun this:\n\n```bash\n# install first\n\npip install ragline\n```\n\n"
        "~~~~\n## still code\n~~~\n~~~~\n\n#not-a-heading either\n\n## Next\n\nDone."
    )
    sections = load_document("s.md", text.encode()).sections
    assert [s.heading for s in sections] == ["Setup", "Next"]
    assert "```bash\n# install first\n\npip install ragline\n```" in sections[0].text
    assert "~~~~\n## still code\n~~~\n~~~~" in sections[0].text
    assert "#not-a-heading either" in sections[0].text


def test_html_drops_script_style_nav_and_footer_and_uses_headings():
    html = """<html><head><title>Ignored Title</title><style>p { color: red }</style></head><body>
    <nav><a href="/">Home</a> <a href="/menu">MenuLink</a></nav>
    <h1>Office Guide</h1><p>Open from   07:00<br>to 20:00.</p>
    <script>var leaked = "SECRET";</script>
    <h2>Parking</h2>Forty <b>spaces</b>.<ul><li>Six chargers</li><li>Bike rack</li></ul>
    <table><tr><th>Day</th><th>Hours</th></tr><tr><td>Mon</td><td>7-20</td></tr></table>
    <footer>FooterText</footer></body></html>"""
    loaded = load_document("guide.html", html.encode())
    assert loaded.type == "html"
    assert loaded.sections == [
        Section("Office Guide\n\nOpen from 07:00\nto 20:00.", None, "Office Guide"),
        Section("Parking\n\nForty spaces.\n\nSix chargers\nBike rack\n\nDay | Hours\nMon | 7-20", None, "Parking"),
    ]
    everything = " ".join(s.text for s in loaded.sections)
    for dropped in ("SECRET", "MenuLink", "FooterText", "color: red", "Ignored Title"):
        assert dropped not in everything


def test_html_without_h1_uses_title_as_first_heading():
    html = "<html><head><title>Visitor Badges</title></head><body><p>Wear it.</p><h3>Lost badges</h3><p>Tell us.</p>"
    assert load_document("v.htm", html.encode()).sections == [
        Section("Visitor Badges\n\nWear it.", None, "Visitor Badges"),
        Section("Lost badges\n\nTell us.", None, "Lost badges"),
    ]


def test_html_nested_thousands_deep_is_read_without_recursion_error():
    html = "<div>" * 5000 + "Deep text." + "</div>" * 5000
    assert load_document("deep.html", html.encode()).sections == [Section("Deep text.", None, None)]


def test_html_rejected_by_the_parser_then_422():
    err = error_of("odd.html", b"<p>fine</p><![ broken declaration")
    assert err.status == 422 and "odd.html could not be read as HTML: " in err.message and "\n" not in err.message


def test_text_splits_paragraphs_on_blank_lines_without_headings():
    loaded = load_document("notes.txt", "\ufeffFirst line\r\nsame para.\r\n\r\n\r\n  \r\nSecond para.\r\n".encode())
    assert loaded.type == "text" and loaded.pages is None
    assert loaded.sections == [Section("First line\nsame para.", None, None), Section("Second para.", None, None)]


def test_text_that_is_not_utf8_but_looks_like_text_is_read_as_latin1():
    assert (
        load_document("old.txt", "Caf\u00e9 cr\u00e8me.".encode("latin-1")).sections[0].text == "Caf\u00e9 cr\u00e8me."
    )


@pytest.mark.parametrize("data", [bytes(range(256)) * 4, "utf-16 text".encode("utf-16"), b"\x89PNG\r\n\x1a\n\xff\x00"])
def test_text_when_bytes_are_binary_then_422_not_utf8(data):
    err = error_of("blob.txt", data)
    assert err.status == 422 and "UTF-8" in err.message and "blob.txt" in err.message


@pytest.mark.parametrize("name", ["blank.txt", "blank.md", "blank.html"])
def test_text_formats_when_only_whitespace_then_422_no_text(name):
    err = error_of(name, b" \n\n\t \r\n" if not name.endswith("html") else b"<html><body> <p> </p></body></html>")
    assert err.status == 422 and f"{name} contains no text" in err.message


def test_shipped_samples_of_every_type_load_with_expected_structure():
    loaded = {path.name: load_document(path.name, path.read_bytes()) for path in sorted(SAMPLE_DOCS.iterdir())}
    assert {doc.type for doc in loaded.values()} == {"pdf", "docx", "markdown", "html"}
    assert loaded["travel-policy.pdf"].pages == 3
    assert loaded["zephyr-9-quick-start.pdf"].pages == 2
    assert {s.page for s in loaded["zephyr-9-quick-start.pdf"].sections} == {1, 2}
    assert "Who does what" in [s.heading for s in loaded["onboarding-checklist.docx"].sections]
    assert [s.heading for s in loaded["office-guide.html"].sections] == [
        "Office Guide",
        "Opening hours",
        "Parking",
        "Visitor badges",
    ]
