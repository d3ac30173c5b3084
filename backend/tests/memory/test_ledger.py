from backend.contract.citations import cited_ids
from backend.memory.ledger import as_sources, assign_ids, drop_unknown_citations, entries, source_key
from backend.tests.fakes import source

A = source("x", "Policy.pdf", "Notice is two months.")
B = source("y", "faq.md", "Parking is free.")


def test_assign_ids_gives_new_sources_next_ids_and_known_sources_their_old_ids():
    first = assign_ids({}, [A, B])
    assert [s["id"] for s in first] == ["S1", "S2"]
    ledger = entries(first)
    again = assign_ids(ledger, [B, source("z", "new.md", "New text."), A])
    assert [s["id"] for s in again] == ["S2", "S3", "S1"]
    assert ledger == entries(first)  # assigning never changes the ledger


def test_same_chunk_with_other_text_is_another_source():
    changed = source("x", "Policy.pdf", "Notice is three months.")
    assert source_key(changed) != source_key(A)
    assert [s["id"] for s in assign_ids(entries(assign_ids({}, [A])), [changed])] == ["S2"]


def test_as_sources_skips_unknown_ids_and_drops_the_key():
    ledger = entries(assign_ids({}, [A, B]))
    got = as_sources(ledger, ["S2", "S9"])
    assert [s["document"] for s in got] == ["faq.md"] and "key" not in got[0]


def test_citations_parsed_in_order_and_unknown_ones_removed():
    assert cited_ids("a [S2] b [S1] c [S2]") == ["S2", "S1"]
    assert drop_unknown_citations("Yes [S1][S7] .", {"S1"}) == ("Yes [S1].", ["S7"])
    assert drop_unknown_citations("Yes [S1].", {"S1"}) == ("Yes [S1].", [])
