"""IngestLeases: which server process is ingesting a document, so each upload is ingested once.

A replica takes a document's lease when it accepts the upload, renews all of its leases every RENEW_SECONDS while
it works, and drops each one when that document is ready or failed. Another replica may not take a lease that is
still live (an upload of the same document there is refused with a 409 until the first is done); a lease that ran
out belongs to a dead replica, and its document is marked interrupted by whichever replica notices first.
"""

import uuid
from datetime import UTC, datetime, timedelta

from backend.clock import now
from backend.store.database import Database

LEASE_SECONDS = 30.0
RENEW_SECONDS = 10.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS document_leases (
    doc_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    until TEXT NOT NULL
)
"""


def _later(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


class IngestLeases:
    """Leases on documents in the knowledge database (called from worker threads)."""

    def __init__(self, db: Database, owner: str | None = None) -> None:
        self.db = db
        self.owner = owner or uuid.uuid4().hex[:16]
        if db.dialect == "sqlite":
            with db.transaction() as conn:
                conn.execute(_SCHEMA)

    def take(self, doc_id: str) -> bool:
        """Take the document's lease; False when another live process holds it."""
        sql = (
            "INSERT INTO document_leases (doc_id, owner, until) VALUES (?, ?, ?) ON CONFLICT (doc_id) DO UPDATE "
            "SET owner = excluded.owner, until = excluded.until "
            "WHERE document_leases.until < ? OR document_leases.owner = excluded.owner"
        )
        with self.db.transaction() as conn:
            return conn.execute(sql, (doc_id, self.owner, _later(LEASE_SECONDS), now())).rowcount > 0

    def release(self, doc_id: str) -> None:
        """Drop this process's lease on the document."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM document_leases WHERE doc_id = ? AND owner = ?", (doc_id, self.owner))

    def renew(self) -> None:
        """Extend every lease this process holds."""
        with self.db.transaction() as conn:
            conn.execute("UPDATE document_leases SET until = ? WHERE owner = ?", (_later(LEASE_SECONDS), self.owner))

    def live(self) -> set[str]:
        """The documents whose lease some process still holds."""
        with self.db.connection() as conn:
            return {r[0] for r in conn.execute("SELECT doc_id FROM document_leases WHERE until >= ?", (now(),))}
