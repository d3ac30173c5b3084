from backend.contract.text import named_documents
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


SAMPLES = ["employee-handbook.md", "it-security-policy.md", "office-guide.html", "travel-policy.pdf", "faq.md",
           "zephyr-9-quick-start.pdf", "zephyr-9-service-manual.md"]  # fmt: skip


def test_documents_named_in_plain_words_by_whole_name_or_an_end_no_other_name_shares():
    assert named_documents("Do the handbook and the travel policy cover remote work?", SAMPLES) == [
        "employee-handbook.md",
        "travel-policy.pdf",
    ]
    assert named_documents("Compare the IT security policy with the FAQ", SAMPLES) == [
        "it-security-policy.md",
        "faq.md",
    ]
    assert named_documents("what does the policy say?", SAMPLES) == []  # two policies: no name
    assert named_documents("How do I do a manual reset?", SAMPLES) == []  # one word of a name, not after "the"
    assert named_documents("the quick start guide or the service manual?", SAMPLES) == [
        "zephyr-9-quick-start.pdf",
        "zephyr-9-service-manual.md",
    ]  # "guide" ends office-guide's name but follows "start", not a determiner
    assert named_documents("It must be encrypted; HR approves it.", ["hr.md", "it.md"]) == []  # one word: after "the"
    assert named_documents("What does the HR file say?", ["hr.md", "it.md"]) == ["hr.md"]


def test_a_name_is_matched_whatever_its_case_accents_or_composition():
    """Letters outside a-z were dropped from the compared form ("Résumé" was "r sum"), and an exact mention typed
    decomposed (macOS) missed a composed name."""
    names = ["Résumé équipe.md", "Été.txt", "東京 規則.pdf", "notes.md"]
    assert resolve_one("Re\u0301sume\u0301 e\u0301quipe.md", names) == ["Résumé équipe.md"]
    assert resolve_one("ÉTÉ.TXT", names) == ["Été.txt"]
    assert resolve_one("resume-equipe", names) == ["Résumé équipe.md"]  # no accents typed
    assert resolve_one("東京", names) == ["東京 規則.pdf"]  # before, every non-Latin name's key was empty
    assert named_documents("What does the résumé équipe say?", names) == ["Résumé équipe.md"]
