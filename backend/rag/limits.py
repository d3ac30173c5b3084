"""How far an upload may expand once parsed: zip members, XML parts, PDF pages and streams, HTML and text.

A document small on the wire can expand a thousandfold (a DOCX whose XML inflates to gigabytes, a PDF whose
streams do). Each check here runs before the expensive step it guards and raises DocumentError 413 naming the
limit and its setting, so a bomb is refused in about a second and the server's memory stays where it was.
"""

import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from backend.rag.errors import DocumentError

MB = 1_000_000


@dataclass(frozen=True)
class UploadLimits:
    """The caps; each field is a setting (RAG_UPLOAD_…) documented in the README."""

    expanded_mb: float = 200.0  # total uncompressed size of a zip-based document (DOCX)
    ratio: float = 100.0  # uncompressed ÷ compressed size of one zip member above `ratio_floor_mb`
    xml_part_mb: float = 16.0  # one uncompressed XML part of a DOCX (parsed into memory whole)
    pdf_pages: int = 2000
    pdf_stream_mb: float = 32.0  # one decompressed PDF stream
    html_mb: float = 10.0  # decoded HTML handed to the parser
    text_chars: int = 5_000_000  # extracted text of any document
    ratio_floor_mb: float = 1.0  # members smaller than this are not ratio-checked (tiny XML compresses well)


def too_large(name: str, what: str, found: str, limit: str, setting: str) -> DocumentError:
    """A 413 that names the limit, what was found and the setting that raises it."""
    return DocumentError(
        413, f"{name}: {what} is {found}, over the {limit} limit ({setting}); split the document or raise the limit"
    )


def check_zip(name: str, archive: zipfile.ZipFile, limits: UploadLimits) -> None:
    """Refuse a zip whose declared sizes pass the caps; zipfile reads no more than a member declares."""
    total = 0
    for info in archive.infolist():
        total += info.file_size
        if total > limits.expanded_mb * MB:
            raise too_large(
                name, "its uncompressed size", f"over {total / MB:.0f} MB", f"{limits.expanded_mb:g} MB",
                "RAG_UPLOAD_EXPANDED_MB",
            )  # fmt: skip
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > limits.ratio_floor_mb * MB and ratio > limits.ratio:
            raise too_large(
                name, f"the compression ratio of {info.filename}", f"{ratio:.0f}:1", f"{limits.ratio:g}:1",
                "RAG_UPLOAD_RATIO",
            )  # fmt: skip
        if info.filename.endswith((".xml", ".rels")) and info.file_size > limits.xml_part_mb * MB:
            raise too_large(
                name, f"the XML part {info.filename}", f"{info.file_size / MB:.1f} MB", f"{limits.xml_part_mb:g} MB",
                "RAG_UPLOAD_XML_PART_MB",
            )  # fmt: skip


def check_text(name: str, chars: int, limits: UploadLimits) -> None:
    """Refuse extracted text longer than the cap (it would take hours to embed and swamp search)."""
    if chars > limits.text_chars:
        raise too_large(
            name, "its extracted text", f"{chars:,} characters", f"{limits.text_chars:,}-character",
            "RAG_UPLOAD_TEXT_CHARS",
        )  # fmt: skip


def check_html(name: str, size: int, limits: UploadLimits) -> None:
    """Refuse HTML larger than the cap before it is parsed into a tree (about ten times its size in memory)."""
    if size > limits.html_mb * MB:
        raise too_large(name, "its HTML", f"{size / MB:.1f} MB", f"{limits.html_mb:g} MB", "RAG_UPLOAD_HTML_MB")


def check_pages(name: str, pages: int, limits: UploadLimits) -> None:
    """Refuse a PDF with more pages than the cap, before any page is read."""
    if pages > limits.pdf_pages:
        raise too_large(name, "its page count", f"{pages:,}", f"{limits.pdf_pages:,}-page", "RAG_UPLOAD_PDF_PAGES")


@contextmanager
def pdf_stream_limit(name: str, limits: UploadLimits) -> Iterator[None]:
    """Cap every decompressed PDF stream (pypdf's own limits, set per call) and turn its refusal into a 413."""
    from pypdf import apply_configuration  # noqa: PLC0415 - settings import this module; pypdf only when parsing
    from pypdf.errors import LimitReachedError  # noqa: PLC0415

    cap = int(limits.pdf_stream_mb * MB)
    caps = {
        field: cap
        for field in (
            "maximum_declared_stream_length", "array_based_stream_maximum_output_length", "lzw_maximum_output_length",
            "run_length_maximum_output_length", "zlib_maximum_output_length", "brotli_maximum_output_length",
        )
    }  # fmt: skip
    try:
        with apply_configuration(**caps):
            yield
    except LimitReachedError as exc:
        raise DocumentError(
            413,
            f"{name}: a compressed stream inflates past the {limits.pdf_stream_mb:g} MB limit "
            "(RAG_UPLOAD_PDF_STREAM_MB); split the document or raise the limit",
        ) from exc
