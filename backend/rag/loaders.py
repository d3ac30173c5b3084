"""Turn uploaded PDF, DOCX, Markdown, HTML and text files into clean sections with page and heading labels."""

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath

import docx
from bs4 import BeautifulSoup, NavigableString, PageElement, Tag
from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction
from docx.document import Document as DocxDocument
from docx.table import Table
from pypdf import PdfReader
from pypdf.errors import DependencyError

from backend.rag.errors import DocumentError
from backend.rag.limits import UploadLimits, check_html, check_pages, check_text, check_zip, pdf_stream_limit

SUPPORTED_TYPES: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
}

_NOT_CONTROL_BYTES = bytes(range(32, 256)) + b"\t\n\r\f"
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f\ud800-\udfff]")  # and lone surrogates
_ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HTML_DROP = ("script", "style", "noscript", "template", "nav", "footer", "title")
_HTML_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_HTML_BLOCKS = {
    *("address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "fieldset", "figcaption", "figure"),
    *("form", "header", "hr", "li", "main", "ol", "p", "pre", "section", "table", "ul"),
}
_HTML_LINES = {"dd", "dt", "li"}
_HTML_SKIPPED_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction)


@dataclass(frozen=True)
class Section:
    """Clean text of one structural unit, with its 1-based PDF page or its nearest heading."""

    text: str
    page: int | None
    heading: str | None


@dataclass(frozen=True)
class LoadedDocument:
    """A parsed document: its type, its PDF page count and its sections in reading order."""

    type: str
    pages: int | None
    sections: list[Section]


def document_type(name: str) -> str:
    """The document type for a file name, by its lower-case suffix; DocumentError 415 if unsupported."""
    suffix = PurePath(name.replace("\\", "/")).suffix.lower()
    if suffix in SUPPORTED_TYPES:
        return SUPPORTED_TYPES[suffix]
    supported = ", ".join(SUPPORTED_TYPES)
    problem = f"{suffix} is not supported" if suffix else "a file without an extension is not supported"
    raise DocumentError(415, f"{name}: {problem}; supported: {supported}. Convert it to one of these and upload again.")


def load_document(name: str, data: bytes, limits: UploadLimits | None = None) -> LoadedDocument:
    """Parse a document's bytes into sections; DocumentError 413/415/422 for anything that cannot be ingested."""
    limits = limits or UploadLimits()
    kind = document_type(name)
    pages: int | None = None
    if kind == "pdf":
        pages, sections = _load_pdf(name, data, limits)
    elif kind == "docx":
        sections = _load_docx(name, data, limits)
    elif kind == "markdown":
        sections = _load_markdown(_decode_text(name, data, limits))
    elif kind == "html":
        check_html(name, len(data), limits)
        sections = _load_html(name, _decode(name, data))
    else:
        sections = [Section(p, None, None) for p in _paragraphs(_clean(_decode_text(name, data, limits)))]
    sections = [s for s in sections if s.text]
    check_text(name, sum(len(s.text) for s in sections), limits)
    if not sections:
        hint = "scanned PDFs need OCR, which Ragline does not do" if kind == "pdf" else "add some text and upload again"
        raise DocumentError(422, f"{name} contains no text; {hint}")
    return LoadedDocument(type=kind, pages=pages, sections=sections)


def _clean(text: str) -> str:
    """Normalise line ends, drop control characters and trailing spaces, and collapse runs of blank lines."""
    text = re.sub(r"\r\n?|[\f\v]", "\n", text)
    text = _CONTROL_CHARS.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _paragraphs(text: str) -> list[str]:
    """Non-empty blank-line-separated paragraphs of cleaned text."""
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _decode(name: str, data: bytes) -> str:
    """UTF-8 (with or without BOM), else Latin-1 if the bytes look like text; DocumentError 422 otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    controls = len(data.translate(None, _NOT_CONTROL_BYTES))
    if b"\x00" not in data and controls <= len(data) // 100:
        return data.decode("latin-1")
    raise DocumentError(422, f"{name} is not a text file (it is not valid UTF-8); save it as UTF-8 text and upload it")


def _decode_text(name: str, data: bytes, limits: UploadLimits) -> str:
    """Decoded text, refused before it is split when it is already over the text cap."""
    text = _decode(name, data)
    check_text(name, len(text), limits)
    return text


def _reason(exc: Exception) -> str:
    """The first line of a library exception's message, or its class name when it has none."""
    lines = str(exc).strip().splitlines()
    return lines[0].rstrip(" .") if lines else type(exc).__name__


def _load_pdf(name: str, data: bytes, limits: UploadLimits) -> tuple[int, list[Section]]:
    """Page count and per-page paragraphs of a PDF, decrypting with an empty password if needed."""
    texts: list[str] = []
    try:
        with pdf_stream_limit(name, limits):
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise DocumentError(
                    422,
                    f"{name} is password-protected; remove the password (save an unprotected copy) and upload again",
                )
            check_pages(name, len(reader.pages), limits)
            for page in reader.pages:
                texts.append(page.extract_text() or "")
                check_text(name, sum(map(len, texts)), limits)
    except DocumentError:
        raise
    except DependencyError as exc:  # AES encryption without the cryptography package
        reason = _reason(exc)
        raise DocumentError(
            422, f"{name} is encrypted in a way Ragline cannot open ({reason}); save an unencrypted copy and upload it"
        ) from exc
    except Exception as exc:  # pypdf raises many kinds of errors on damaged files
        raise DocumentError(
            422, f"{name} could not be read as a PDF: {_reason(exc)}; check the file is a complete PDF"
        ) from exc
    sections = [Section(p, number, None) for number, text in enumerate(texts, 1) for p in _paragraphs(_clean(text))]
    return len(texts), sections


def _load_docx(name: str, data: bytes, limits: UploadLimits) -> list[Section]:
    """Paragraphs and table rows of a DOCX, grouped under its Heading/Title-styled paragraphs."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            check_zip(name, archive, limits)
        blocks, chars = [], 0
        for block in _docx_blocks(docx.Document(io.BytesIO(data))):
            blocks.append(block)
            chars += len(block[0])
            check_text(name, chars, limits)
    except DocumentError:
        raise
    except Exception as exc:  # python-docx raises zip, XML and key errors on damaged files
        raise DocumentError(
            422, f"{name} could not be read as a DOCX: {_reason(exc)}; save it again from Word as .docx"
        ) from exc
    sections: list[Section] = []
    heading: str | None = None
    body: list[str] = []
    for text, is_heading in blocks:
        if is_heading:
            sections.append(Section(_clean("\n\n".join(body)), None, heading))
            heading, body = " ".join(text.split()), []
        body.append(text)
    sections.append(Section(_clean("\n\n".join(body)), None, heading))
    return sections


def _docx_blocks(document: DocxDocument) -> Iterator[tuple[str, bool]]:
    """Body paragraphs and tables (a line per row) in order, as (text, is_heading); merged cells appear once.

    Headings are found by style id, mapped once: python-docx's `paragraph.style` scans every style per call.
    """
    headings = {
        style.style_id
        for style in document.styles
        if (name := style.name or "").startswith("Heading") or name == "Title"
    }
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows: list[str] = []
            for row in item.rows:
                elements: list[object] = []  # row.cells repeats a merged cell once per grid column it spans
                texts: list[str] = []
                for cell in row.cells:
                    if not elements or cell._tc is not elements[-1]:
                        elements.append(cell._tc)
                        texts.append(" ".join(cell.text.split()))
                if any(texts):
                    rows.append(" | ".join(texts))
            if rows:
                yield "\n".join(rows), False
        elif text := item.text.strip():
            yield text, item._p.style in headings


def _load_markdown(text: str) -> list[Section]:
    """Sections split at ATX headings outside code fences; the heading title starts each section's text."""
    sections: list[Section] = []
    heading: str | None = None
    lines: list[str] = []
    fence: str | None = None
    for line in _clean(text).split("\n"):
        opener = _FENCE.match(line)
        if fence is not None:
            if opener and opener.group(1).startswith(fence) and not line.strip(fence[0] + " "):
                fence = None  # a closing fence: the same character, at least as long, nothing else on the line
        elif opener:
            fence = opener.group(1)
        elif match := _ATX_HEADING.match(line):
            sections.append(Section(_clean("\n".join(lines)), None, heading))
            heading = (match.group(2) or "").strip() or None
            lines = [heading or ""]
            continue
        lines.append(line)
    sections.append(Section(_clean("\n".join(lines)), None, heading))
    return sections


def _load_html(name: str, html: str) -> list[Section]:
    """Sections of visible HTML text started by h1-h6 (or the <title> when there is no h1)."""
    try:
        soup = BeautifulSoup(html, "html.parser")
    except Exception as exc:  # bs4 raises ParserRejectedMarkup on some malformed declarations
        reason = _reason(exc)
        raise DocumentError(422, f"{name} could not be read as HTML: {reason}; check that it is valid HTML") from exc
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if title_tag else ""
    for tag in soup.find_all(_HTML_DROP):
        tag.decompose()
    walker = _HtmlSections(heading=title if title and soup.find("h1") is None else None)
    walker.walk(soup)
    return walker.finish()


class _HtmlSections:
    """Collects visible text in document order, starting a new section at each heading."""

    def __init__(self, heading: str | None) -> None:
        self.sections: list[Section] = []
        self._start(heading)

    def walk(self, root: Tag) -> None:
        """Append the text under root, with line or paragraph breaks around block elements (no recursion)."""
        stack: list[PageElement | str] = list(reversed(root.contents))  # a plain str is a pending break
        while stack:
            node = stack.pop()
            if isinstance(node, NavigableString):
                if not isinstance(node, _HTML_SKIPPED_STRINGS):
                    in_pre = node.parent is not None and node.parent.name == "pre"
                    self._text(str(node) if in_pre else re.sub(r"\s+", " ", str(node)))
            elif isinstance(node, str):
                self._break(node)
            elif not isinstance(node, Tag):
                continue
            elif node.name in _HTML_HEADINGS:
                self.finish()
                self._start(" ".join(node.get_text(" ").split()) or None)
            elif node.name == "br":
                self._break("\n")
            elif node.name == "tr":
                cells = [" ".join(c.get_text(" ").split()) for c in node.find_all(["td", "th"], recursive=False)]
                self._break("\n")
                self._text(" | ".join(cells))
                self._break("\n")
            elif node.name in _HTML_BLOCKS:
                separator = "\n" if node.name in _HTML_LINES else "\n\n"
                self._break(separator)
                stack.append(separator)
                stack.extend(reversed(node.contents))
            else:
                stack.extend(reversed(node.contents))

    def finish(self) -> list[Section]:
        """Close the current section and return all sections so far."""
        self.sections.append(Section(_clean("".join(self.parts)), None, self.heading))
        self.parts = []
        return self.sections

    def _start(self, heading: str | None) -> None:
        """Begin a section under heading, with the heading as its first line."""
        self.heading = heading
        self.parts = [heading, "\n\n"] if heading else []

    def _text(self, text: str) -> None:
        """Append inline text, dropping spaces at the start of a line."""
        if not self.parts or self.parts[-1].endswith("\n"):
            text = text.lstrip(" ")
        if text:
            self.parts.append(text)

    def _break(self, separator: str) -> None:
        """End the current line (separator "\\n") or paragraph ("\\n\\n")."""
        if not self.parts:
            return
        if not self.parts[-1].strip("\n"):  # adjacent breaks merge into the larger one
            self.parts[-1] = max(self.parts[-1], separator, key=len)
        else:
            self.parts[-1] = self.parts[-1].rstrip(" ")
            self.parts.append(separator)
