"""Ingestion leases and kept originals, on SQLite and on Postgres."""

from backend.rag import leases as leases_module
from backend.rag.files import DatabaseFiles, DiskFiles, document_files
from backend.rag.leases import IngestLeases


async def test_a_live_lease_keeps_a_document_to_one_process_until_released_or_run_out(database, monkeypatch):
    first, second = IngestLeases(database, "first"), IngestLeases(database, "second")
    assert await database.call(lambda: first.take("doc"))
    assert await database.call(lambda: first.take("doc"))  # its own: taken again (a re-upload there)
    assert not await database.call(lambda: second.take("doc"))
    assert await database.call(first.live) == {"doc"}
    await database.call(lambda: first.release("doc"))
    assert await database.call(lambda: second.take("doc"))
    monkeypatch.setattr(leases_module, "LEASE_SECONDS", -1.0)  # the holder stops renewing: its lease runs out
    await database.call(second.renew)
    assert await database.call(second.live) == set()
    assert await database.call(lambda: first.take("doc"))  # a dead holder's document may be taken over


async def test_originals_are_kept_replaced_and_deleted(database, tmp_path):
    files = document_files(database, tmp_path / "documents")
    assert isinstance(files, DatabaseFiles if database.dialect == "postgres" else DiskFiles)
    await database.call(lambda: files.put("doc", b"%PDF-1.4 first"))
    await database.call(lambda: files.put("doc", b"%PDF-1.4 second"))
    assert await database.call(lambda: files.get("doc")) == b"%PDF-1.4 second"
    assert (await database.call(lambda: files.path("doc")) is None) == (database.dialect == "postgres")
    await database.call(lambda: files.delete("doc"))
    assert await database.call(lambda: files.get("doc")) is None
