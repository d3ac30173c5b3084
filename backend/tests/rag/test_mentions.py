from backend.rag.mentions import resolve, resolve_one

NAMES = ["Policy.pdf", "Annual Report 2024.docx", "employee-handbook.md", "it-security-policy.md", "faq.md"]


def test_resolve_exact_and_case_insensitive_and_extension_optional():
    assert resolve_one("policy.PDF", NAMES) == ["Policy.pdf"]
    assert resolve_one("Annual Report 2024", NAMES) == ["Annual Report 2024.docx"]
    assert resolve_one("employee-handbook", NAMES) == ["employee-handbook.md"]


def test_resolve_fuzzy_when_unambiguous():
    assert resolve_one("handbook", NAMES) == ["employee-handbook.md"]
    assert resolve_one("employe handbok", NAMES) == ["employee-handbook.md"]


def test_resolve_reports_ambiguous_candidates_and_unknown_names():
    result = resolve(["polic", "nothing-like-it", "faq"], NAMES)
    assert result.documents == ["faq.md"]
    assert set(result.ambiguous["polic"]) == {"Policy.pdf", "it-security-policy.md"}
    assert result.unknown == ["nothing-like-it"]
    assert result.notes() == [
        '"@polic" matches several documents: Policy.pdf, it-security-policy.md',
        'No document matches "@nothing-like-it"',
    ]


def test_resolve_paths_are_just_unknown_names():
    result = resolve(["../../etc/passwd", "/etc/passwd"], NAMES)
    assert result.documents == [] and result.unknown == ["../../etc/passwd", "/etc/passwd"]
