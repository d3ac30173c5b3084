"""Generated decompression bombs: small on the wire, huge once parsed (DOCX, PDF) — streamed, never held whole."""

import io
import zipfile
import zlib

import docx

CHUNK = 1 << 20


def docx_bomb(expanded_mb: int, *, filler: bytes | None = None) -> bytes:
    """A valid DOCX whose word/document.xml inflates to about `expanded_mb` MB of paragraphs.

    The default filler is one repeated paragraph (compresses about 1000:1, a classic bomb); pass a less
    repetitive `filler` (a whole paragraph of XML) for a large but ordinary-ratio part.
    """
    template = io.BytesIO()
    docx.Document().save(template)
    paragraph = filler or b"<w:p><w:r><w:t>" + b"a" * 64 + b"</w:t></w:r></w:p>"
    out = io.BytesIO()
    with zipfile.ZipFile(template) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for info in source.infolist():
            data = source.read(info)
            if info.filename != "word/document.xml":
                bomb.writestr(info, data)
                continue
            head, tail = data.split(b"<w:body>", 1)
            block = paragraph * max(1, CHUNK // len(paragraph))
            info = zipfile.ZipInfo("word/document.xml")
            info.compress_type = zipfile.ZIP_DEFLATED
            with bomb.open(info, "w", force_zip64=True) as part:
                part.write(head + b"<w:body>")
                for _ in range(expanded_mb):
                    part.write(block)
                part.write(tail)
    return out.getvalue()


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF file of numbered objects (1-based) with a correct cross-reference table; object 1 is the catalog."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def _page(contents: int, font: int) -> bytes:
    """A US-letter page object drawing content stream `contents` with Helvetica as /F1 (object `font`)."""
    resources = b"<< /Font << /F1 %d 0 R >> >>" % font
    return b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources %s >>" % (
        contents,
        resources,
    )


def pdf_stream_bomb(expanded_mb: int) -> bytes:
    """A one-page PDF whose content stream inflates to about `expanded_mb` MB (a line of text, then spaces)."""
    squash = zlib.compressobj(9)
    text = b"BT /F1 12 Tf 72 712 Td (Quarterly results) Tj ET\n"
    stream = squash.compress(text) + b"".join(squash.compress(b" " * CHUNK) for _ in range(expanded_mb))
    stream += squash.flush()
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(contents=4, font=5),
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
            font,
        ]
    )


def pdf_pages(count: int) -> bytes:
    """A PDF of `count` pages that all share one small text content stream."""
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(count))
    page = _page(contents=3, font=4)
    text = b"BT /F1 12 Tf 72 712 Td (A page of text) Tj ET"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
            b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            *[page] * count,
        ]
    )
