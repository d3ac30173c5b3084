"""Where the originals of uploaded documents are kept: files in RAG_DATA_DIR/documents, or rows in Postgres.

With RAG_DATABASE_URL every replica must read every original (a cited PDF page opens from whichever replica
answers), so they are stored in the database (`document_files`); on SQLite they stay files beside the index.
"""

from pathlib import Path

from backend.store.database import Database


class DiskFiles:
    """Originals as files named by document id, each replaced in one rename."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, doc_id: str) -> Path | None:
        """The file of a document's original, when there is one."""
        path = self.folder / doc_id
        return path if path.is_file() else None

    def put(self, doc_id: str, data: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = (self.folder / doc_id).with_suffix(".partial")
        partial.write_bytes(data)
        partial.replace(self.folder / doc_id)

    def get(self, doc_id: str) -> bytes | None:
        path = self.path(doc_id)
        return path.read_bytes() if path else None

    def delete(self, doc_id: str) -> None:
        (self.folder / doc_id).unlink(missing_ok=True)


class DatabaseFiles:
    """Originals as rows of the shared database, so that every replica serves them."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def path(self, doc_id: str) -> Path | None:
        return None  # never a local file

    def put(self, doc_id: str, data: bytes) -> None:
        sql = (
            "INSERT INTO document_files (doc_id, data) VALUES (?, ?) "
            "ON CONFLICT (doc_id) DO UPDATE SET data = excluded.data"
        )
        with self.db.transaction() as conn:
            conn.execute(sql, (doc_id, data))

    def get(self, doc_id: str) -> bytes | None:
        with self.db.connection() as conn:
            row = conn.execute("SELECT data FROM document_files WHERE doc_id = ?", (doc_id,)).fetchone()
        return bytes(row[0]) if row else None

    def delete(self, doc_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM document_files WHERE doc_id = ?", (doc_id,))


DocumentFiles = DiskFiles | DatabaseFiles


def document_files(db: Database, folder: Path) -> DocumentFiles:
    """The originals' store for the knowledge database's engine."""
    return DatabaseFiles(db) if db.dialect == "postgres" else DiskFiles(folder)
