"""Expansion limits: generated bombs are refused with a 413 that names the limit, before they are parsed."""

import json
import subprocess
import sys
import textwrap

import pytest

from backend.rag.errors import DocumentError
from backend.rag.limits import UploadLimits
from backend.rag.loaders import load_document
from backend.tests.rag.bombs import docx_bomb, pdf_pages, pdf_stream_bomb

ORDINARY = b"".join(b"<w:p><w:r><w:t>paragraph %d of the report</w:t></w:r></w:p>" % i for i in range(30000))


def refused(name: str, data: bytes, limits: UploadLimits | None = None) -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        load_document(name, data, limits)
    assert caught.value.status == 413, caught.value.message
    return caught.value


def test_docx_expanding_past_the_total_cap_is_refused_from_the_zip_directory():
    bomb = docx_bomb(300)
    assert len(bomb) < 2_000_000  # small on the wire
    error = refused("bomb.docx", bomb)
    assert "RAG_UPLOAD_EXPANDED_MB" in error.message and "200 MB" in error.message


def test_docx_member_with_a_bomb_ratio_is_refused():
    error = refused("ratio.docx", docx_bomb(20), UploadLimits(expanded_mb=1000, xml_part_mb=1000))
    assert "compression ratio of word/document.xml" in error.message and "RAG_UPLOAD_RATIO" in error.message


def test_docx_with_an_xml_part_over_the_cap_is_refused_even_at_an_ordinary_ratio():
    error = refused("big.docx", docx_bomb(3, filler=ORDINARY), UploadLimits(xml_part_mb=2))
    assert "XML part word/document.xml" in error.message and "RAG_UPLOAD_XML_PART_MB" in error.message


def test_docx_under_every_cap_still_loads():
    loaded = load_document("fine.docx", docx_bomb(2, filler=ORDINARY))
    assert loaded.sections[0].text.startswith("paragraph 0 of the report")


def test_pdf_stream_inflating_past_the_cap_is_refused():
    bomb = pdf_stream_bomb(100)
    assert len(bomb) < 200_000
    error = refused("bomb.pdf", bomb)
    assert "RAG_UPLOAD_PDF_STREAM_MB" in error.message and "32 MB" in error.message
    assert load_document("small.pdf", pdf_stream_bomb(2)).sections[0].text == "Quarterly results"


def test_pdf_with_too_many_pages_is_refused_before_any_page_is_read():
    error = refused("long.pdf", pdf_pages(60), UploadLimits(pdf_pages=50))
    assert "page count is 60" in error.message and "RAG_UPLOAD_PDF_PAGES" in error.message
    assert load_document("ok.pdf", pdf_pages(50), UploadLimits(pdf_pages=50)).pages == 50


def test_pdf_text_over_the_cap_is_refused_part_way():
    error = refused("wordy.pdf", pdf_pages(200), UploadLimits(text_chars=1000))
    assert "RAG_UPLOAD_TEXT_CHARS" in error.message


@pytest.mark.parametrize("name", ["notes.txt", "notes.md"])
def test_text_over_the_cap_is_refused(name):
    error = refused(name, b"word " * 400, UploadLimits(text_chars=1000))
    assert "its extracted text is 2,000 characters, over the 1,000-character limit" in error.message  # not "is over
    # 2,000 characters, over the …" (tester)


def test_html_over_the_cap_is_refused_before_parsing():
    page = b"<html><body>" + b"<p>row</p>" * 120_000 + b"</body></html>"
    error = refused("page.html", page, UploadLimits(html_mb=1))
    assert "RAG_UPLOAD_HTML_MB" in error.message


def test_a_bomb_leaves_peak_memory_where_it_was():
    """In a fresh interpreter: peak RSS after refusing a 1 GB DOCX bomb and a 500 MB PDF stream bomb."""
    script = textwrap.dedent(
        """
        import json, resource
        from backend.rag.errors import DocumentError
        from backend.rag.loaders import load_document
        from backend.tests.rag.bombs import docx_bomb, pdf_stream_bomb
        bombs = [("bomb.docx", docx_bomb(1000)), ("bomb.pdf", pdf_stream_bomb(500))]
        load_document("warm.pdf", pdf_stream_bomb(1)); load_document("warm.txt", b"warm up")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        statuses = []
        for name, data in bombs:
            try:
                load_document(name, data)
            except DocumentError as exc:
                statuses.append(exc.status)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"statuses": statuses, "wire": [len(d) for _, d in bombs], "grew_kb": after - before}))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["statuses"] == [413, 413]
    assert max(report["wire"]) < 5_000_000
    # pypdf inflates up to the 32 MB stream cap (two buffers) before refusing; without caps this was gigabytes
    assert report["grew_kb"] < 128 * 1024, report
