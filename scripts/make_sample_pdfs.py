#!/usr/bin/env python3
"""Dev-only: regenerate the sample PDF and DOCX files in data/documents from the text below.

    .venv/bin/python scripts/make_sample_pdfs.py [--out data/documents]

Needs fpdf2 and python-docx (dev tools, not runtime dependencies). The output is byte-for-byte deterministic
(fixed creation dates, fixed zip timestamps), so re-running it leaves git clean unless the text changed. The
content is written for Ragline and agrees with the Markdown samples (Northwind Climate Systems, the Zephyr-9).
"""

import argparse
import io
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import docx
from fpdf import FPDF

FIXED_DATE = datetime(2024, 1, 15, 9, 0, tzinfo=UTC)
ZIP_DATE = (2024, 1, 15, 9, 0, 0)
AUTHOR = "Northwind Climate Systems"

# One list of (heading or None, paragraphs) per page; the document title goes above the first page.
TRAVEL_POLICY = [
    [
        (
            "Purpose",
            [
                "This policy sets out how employees of Northwind Climate Systems book, approve and claim business "
                "travel. It complements the Expenses section of the Employee Handbook.",
            ],
        ),
        (
            "Booking rules",
            [
                "All business trips are booked through the company travel portal. Flights must be booked at least "
                "14 days before departure unless the trip is urgent and the line manager confirms this in writing.",
                "Train travel is preferred for journeys under 500 kilometres. Flights shorter than 6 hours are "
                "booked in economy class; longer flights may be booked in premium economy.",
                "Hire cars are booked only when no public transport reaches the destination within a reasonable "
                "time. Private cars used for business trips are reimbursed at 0.30 euros per kilometre.",
            ],
        ),
    ],
    [
        (
            "Per-diem amounts",
            [
                "Meals while travelling are reimbursed up to 45 euros per day. For a travel day shorter than "
                "8 hours the limit is 20 euros. Alcoholic drinks are not reimbursed.",
                "Hotels are reimbursed up to 140 euros per night, breakfast included. In capital cities the "
                "limit is 190 euros per night. The travel portal only shows hotels within these limits.",
                "Taxis are reimbursed when public transport is not available, late at night, or when carrying "
                "heavy equipment such as Zephyr-9 service tools.",
            ],
        ),
    ],
    [
        (
            "Approval steps",
            [
                "1. Request the trip in the travel portal with its purpose, dates and estimated cost.",
                "2. Your line manager approves or rejects the request within 3 working days.",
                "3. Trips abroad and trips estimated above 1,500 euros also need approval from the finance team.",
                "4. Book only after approval; the portal blocks bookings that have not been approved.",
            ],
        ),
        (
            "Expense claims",
            [
                "Travel expenses are reimbursed when submitted within 30 days of the end of the trip, with receipts. "
                "Claims are paid with the next monthly salary after the line manager has approved them.",
            ],
        ),
    ],
]

QUICK_START = [
    [
        (
            None,
            [
                "The Zephyr-9 is a compact heat-pump ventilation unit by Northwind Climate Systems for offices of up "
                "to 400 square metres. This guide covers installation and the first start. Servicing, costs and "
                "warranty are described in the Zephyr-9 Service Manual.",
            ],
        ),
        (
            "Installation steps",
            [
                "1. Choose an inside wall that can carry 40 kilograms, with at least 30 centimetres of free space "
                "around the air intakes and the fan grille.",
                "2. Fix the mounting bracket with the four supplied screws and check that they are tight.",
                "3. Hang the unit on the bracket and connect the condensate hose to a drain.",
                "4. Have a certified Northwind installer make the electrical connection and fill the refrigerant "
                "circuit. Installations by uncertified installers are not covered by the warranty.",
                "5. Write the installation date in the service log. The 3-year warranty starts on this date.",
            ],
        ),
    ],
    [
        (
            "First start",
            [
                "Switch the unit on at the isolator. The controller runs a self-test that takes about two minutes; "
                "the fan starts when the test has passed.",
                "Press MODE to choose between ventilation, heating and cooling. The selected mode is kept after a "
                "power cut.",
                "If the controller shows E4, the air filter is clogged: replace both filters and reset the controller "
                "by holding the MODE button for five seconds.",
            ],
        ),
        (
            "Safety notes",
            [
                "Error code E7 means the refrigerant pressure is low. Switch the unit off and call a certified "
                "technician; do not attempt to refill the refrigerant yourself.",
                "Never block the air intakes: damage caused by blocked air intakes is not covered by the warranty.",
                "Switch the unit off at the isolator before opening the filter cover.",
            ],
        ),
    ],
]

ONBOARDING_TITLE = "Onboarding Checklist"
ONBOARDING_INTRO = (
    "New employees at Northwind Climate Systems work through this checklist with their line manager. "
    "Tick each item off in the onboarding tracker."
)
ONBOARDING_SECTIONS = [
    (
        "First day",
        [
            "Collect your laptop from the IT helpdesk and sign the equipment form.",
            "Set up the company password manager and create a password of at least 14 characters.",
            "Turn on multi-factor authentication for email, the VPN and the source-code repositories.",
        ],
    ),
    (
        "First week",
        [
            "Read the Employee Handbook and the IT Security Policy.",
            "Meet your onboarding buddy and agree on a weekly check-in.",
            "Book any travel through the company travel portal after your line manager has approved it.",
        ],
    ),
    (
        "Probation",
        [
            "The probation period lasts 6 months. Your review meeting with your line manager takes place after "
            "3 months. Remote work of up to three days per week is possible once probation is complete.",
        ],
    ),
]
ONBOARDING_TABLE = [
    ("Task", "Owner", "When"),
    ("Laptop and accounts", "IT helpdesk", "Day 1"),
    ("Security training", "Employee", "Week 1"),
    ("Probation review", "Line manager", "Month 3"),
]


def make_pdf(title: str, pages: list[list[tuple[str | None, list[str]]]]) -> bytes:
    """A text PDF with the title and one list of (heading, paragraphs) per page, in the core Helvetica font."""
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(title)
    pdf.set_author(AUTHOR)
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(auto=True, margin=20)
    for number, blocks in enumerate(pages):
        pdf.add_page()
        if number == 0:
            pdf.set_font("Helvetica", style="B", size=18)
            pdf.multi_cell(0, 9, title, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
        for heading, paragraphs in blocks:
            if heading is not None:
                pdf.set_font("Helvetica", style="B", size=13)
                pdf.multi_cell(0, 7, heading, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
            pdf.set_font("Helvetica", size=11)
            for paragraph in paragraphs:
                pdf.multi_cell(0, 5.5, paragraph, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(3)
            pdf.ln(2)
    if pdf.pages_count != len(pages):
        raise SystemExit(f"{title}: text overflowed onto {pdf.pages_count} pages instead of {len(pages)}")
    return bytes(pdf.output())


def make_docx() -> bytes:
    """The onboarding checklist as a DOCX with a title, headings, bullet items and a table."""
    document = docx.Document()
    props = document.core_properties
    props.title, props.author, props.last_modified_by = ONBOARDING_TITLE, AUTHOR, AUTHOR
    props.created = props.modified = FIXED_DATE.replace(tzinfo=None)
    props.revision = 1
    document.add_heading(ONBOARDING_TITLE, level=0)
    document.add_paragraph(ONBOARDING_INTRO)
    for heading, items in ONBOARDING_SECTIONS:
        document.add_heading(heading, level=1)
        for item in items:
            document.add_paragraph(item, style="List Bullet" if len(items) > 1 else None)
    document.add_heading("Who does what", level=1)
    table = document.add_table(rows=0, cols=3)
    table.style = "Table Grid"
    for row in ONBOARDING_TABLE:
        cells = table.add_row().cells
        for cell, text in zip(cells, row, strict=True):
            cell.text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return _fixed_zip_dates(buffer.getvalue())


def _fixed_zip_dates(data: bytes) -> bytes:
    """The same zip with every entry stamped ZIP_DATE (python-docx stamps entries with the current time)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(zipfile.ZipInfo(info.filename, ZIP_DATE), source.read(info), zipfile.ZIP_DEFLATED)
    return out.getvalue()


def main() -> None:
    """Write the sample PDFs and DOCX into the output folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "documents")
    args = parser.parse_args()
    files = {
        "travel-policy.pdf": make_pdf("Travel Policy", TRAVEL_POLICY),
        "zephyr-9-quick-start.pdf": make_pdf("Zephyr-9 Quick Start", QUICK_START),
        "onboarding-checklist.docx": make_docx(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (args.out / name).write_bytes(data)
        print(f"{args.out / name}: {len(data):,} bytes")


if __name__ == "__main__":
    main()
