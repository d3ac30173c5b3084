"""Collections: every document belongs to one, and who may read or write a collection is decided here only.

A personal collection per user (made on first use) and collections an admin makes. Every signed-in user reads a
team collection; admins write it, and users too when it is marked `users_write`. A group collection is read by the
members of the groups it is shared with (and admins), and written by admins and the members of the groups it is
shared with for writing. Nobody else reads a personal collection, admins included. `readable_documents` is the one
function that turns this rule into the set of document ids a reader may see; search, mentions, the probe, the
documents routes and citations all use it.

The records live beside the document registry (knowledge.sqlite, or Postgres): `documents.collection` holds a document's
collection id, "" for one filed in none (made with RAG_AUTH=off or by the CLI, adopted by the first admin's team
collection when accounts are on). Groups and their members live with the accounts (backend/accounts).
"""

import asyncio
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from backend.clock import now
from backend.rag.index import KnowledgeIndex
from backend.store.database import Conn

log = logging.getLogger(__name__)
Kind = Literal["personal", "team", "group"]
Access = Literal["read", "write"]
TEAM = "team"  # the name of the team collection documents from before accounts move into
PERSONAL = "Personal"  # the name of each user's own collection
_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('personal', 'team', 'group')),
    owner TEXT NOT NULL,
    users_write INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS collections_personal ON collections(owner) WHERE kind = 'personal';
CREATE UNIQUE INDEX IF NOT EXISTS collections_team_name ON collections(name COLLATE NOCASE) WHERE kind != 'personal';
CREATE TABLE IF NOT EXISTS collection_groups (
    collection_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    access TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (collection_id, group_id)
);
"""
_COLUMNS = "id, name, kind, owner, users_write, created_at"  # on Postgres: migration 0003_knowledge
_SHARE = (
    "INSERT INTO collection_groups (collection_id, group_id, access) VALUES (?, ?, ?) "
    "ON CONFLICT (collection_id, group_id) DO UPDATE SET access = excluded.access"
)
# unfiled documents move unless one of the team collection's has their name, whatever its case (SQLite's UPDATE OR
# IGNORE, portably)
_ADOPT = (
    "UPDATE documents SET collection = ? WHERE collection = '' AND NOT EXISTS "
    "(SELECT 1 FROM documents o WHERE o.collection = ? AND {same_name})"
)


class NameTaken(Exception):
    """A team or group collection with this name exists already."""


class DocumentNameTaken(Exception):
    """The collection a document would move to holds one of the same name."""


@dataclass(frozen=True)
class Reader:
    """Who asks, as far as collections care: an account id, whether it is an admin, and its groups' ids."""

    user_id: str
    is_admin: bool = False
    groups: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CollectionRecord:
    """A collection of documents."""

    id: str
    name: str
    kind: Kind
    owner: str  # the user id of the personal collection's person, or of the admin who made a team collection
    users_write: bool
    created_at: str
    groups: tuple[tuple[str, Access], ...] = ()  # a group collection's (group id, access) shares


def _shared(reader: Reader, collection: CollectionRecord) -> set[Access]:
    return {access for group, access in collection.groups if group in reader.groups}


def may_read(reader: Reader, collection: CollectionRecord) -> bool:
    """The read rule: a team collection is everyone's; a group one its groups' (and admins'); a personal one its
    owner's only."""
    if collection.kind == "group":
        return reader.is_admin or bool(_shared(reader, collection))
    return collection.kind == "team" or collection.owner == reader.user_id


def may_write(reader: Reader, collection: CollectionRecord) -> bool:
    """The write rule: one's personal collection; a team collection for admins, or users when it says so; a group
    collection for admins and the groups it is shared with for writing."""
    if collection.kind == "personal":
        return collection.owner == reader.user_id
    if collection.kind == "group":
        return reader.is_admin or "write" in _shared(reader, collection)
    return reader.is_admin or collection.users_write


class CollectionStore(Protocol):
    """What the server needs from collection storage (beside the registry, on SQLite or Postgres)."""

    async def setup(self) -> None:
        """Create or upgrade the storage."""

    async def collection(self, collection_id: str) -> CollectionRecord | None:
        """One collection by id."""

    async def personal(self, user_id: str) -> CollectionRecord:
        """The user's personal collection, made on first use."""

    async def create(self, name: str, kind: Kind, owner: str, users_write: bool = False) -> CollectionRecord:
        """A new team or group collection (NameTaken when one has the name)."""

    async def share(self, collection_id: str, group_id: str, access: Access | None) -> None:
        """Share a group collection with a group for reading or writing, or stop sharing it (None)."""

    async def change(self, collection_id: str, name: str, users_write: bool) -> bool:
        """Rename a team or group collection, or change whether users write a team one (NameTaken when another has
        the name); False when there is no such team or group collection."""

    async def delete(self, collection_id: str) -> int | None:
        """Remove an empty team or group collection with its shares: None when done, else how many documents it
        still holds (it is then left alone); 0 when there is no such collection."""

    async def unshare_group(self, group_id: str) -> None:
        """Stop sharing every collection with a group (the group is being removed)."""

    async def move(self, doc_id: str, source: str, target: str) -> bool:
        """File a document of collection `source` in collection `target` (DocumentNameTaken when that one holds a
        document of the same name); False, with nothing changed, when the document is no longer in `source` or the
        target was removed meanwhile."""

    async def visible(self, reader: Reader) -> list[CollectionRecord]:
        """The collections the reader may read, personal first, then by name."""

    async def readable_documents(self, reader: Reader) -> frozenset[str]:
        """Ids of the documents the reader may read: the one rule every search, list and citation filters by."""

    async def adopt_unfiled(self, admin_id: str) -> int:
        """Documents filed in no collection move to the team collection (made for the admin when missing)."""

    async def drop_personal(self, user_id: str) -> list[str]:
        """Remove the user's personal collection; the ids of its documents, now readable by nobody, to delete."""


def _record(row: Any, shares: dict[str, list[tuple[str, Access]]]) -> CollectionRecord:
    """A record from a row of _COLUMNS (read by position: a dict's values or a cursor's tuple)."""
    values = list(row.values()) if isinstance(row, dict) else row
    return CollectionRecord(*values[:4], bool(values[4]), values[5], tuple(shares.get(values[0], [])))


class RegistryCollections:
    """Collections in the registry's database (knowledge.sqlite or Postgres), next to the documents they hold."""

    def __init__(self, index: KnowledgeIndex) -> None:
        self.index = index

    async def setup(self) -> None:
        """Create the SQLite tables (idempotent); Postgres has them from its migrations."""
        await asyncio.to_thread(self._setup)

    def _setup(self) -> None:
        if self.index.db.dialect != "sqlite":
            return
        with self.index.transaction() as c:
            for statement in filter(str.strip, _SQLITE_SCHEMA.split(";")):
                c.execute(statement)

    def _select(self, where: str, args: tuple) -> list[CollectionRecord]:
        """Collections matching a WHERE clause, with their group shares: personal first, then team, then group."""
        order = "CASE kind WHEN 'personal' THEN 0 WHEN 'team' THEN 1 ELSE 2 END, lower(name), id"
        rows = self.index.rows(f"SELECT {_COLUMNS} FROM collections WHERE {where} ORDER BY {order}", args)
        shares: dict[str, list[tuple[str, Access]]] = {}
        for row in self.index.rows("SELECT collection_id, group_id, access FROM collection_groups ORDER BY group_id"):
            shares.setdefault(row["collection_id"], []).append((row["group_id"], row["access"]))
        return [_record(r, shares) for r in rows]

    async def collection(self, collection_id: str) -> CollectionRecord | None:
        """One collection by id."""
        found = await asyncio.to_thread(self._select, "id = ?", (collection_id,))
        return found[0] if found else None

    async def personal(self, user_id: str) -> CollectionRecord:
        """The user's personal collection, made on first use."""
        return await asyncio.to_thread(self._personal, user_id)

    def _personal(self, user_id: str) -> CollectionRecord:
        with self.index.transaction() as c:
            c.execute(
                f"INSERT INTO collections ({_COLUMNS}) VALUES (?, '{PERSONAL}', 'personal', ?, 0, ?) "
                "ON CONFLICT DO NOTHING",
                (uuid.uuid4().hex[:16], user_id, now()),
            )
            row = c.execute(
                f"SELECT {_COLUMNS} FROM collections WHERE kind = 'personal' AND owner = ?", (user_id,)
            ).fetchone()
        return _record(row, {})

    async def create(self, name: str, kind: Kind, owner: str, users_write: bool = False) -> CollectionRecord:
        """A new team or group collection (NameTaken when one has the name)."""
        record = CollectionRecord(uuid.uuid4().hex[:16], name, kind, owner, users_write and kind == "team", now())
        await asyncio.to_thread(self._insert, record)
        return record

    async def share(self, collection_id: str, group_id: str, access: Access | None) -> None:
        """Share a group collection with a group for reading or writing, or stop sharing it (None)."""
        if access is None:
            sql, args = (
                "DELETE FROM collection_groups WHERE collection_id = ? AND group_id = ?",
                (collection_id, group_id),
            )
        else:
            sql = _SHARE
            args = (collection_id, group_id, access)
        await asyncio.to_thread(self._write, sql, args)

    async def change(self, collection_id: str, name: str, users_write: bool) -> bool:
        """Rename a team or group collection, or change whether users write a team one (NameTaken when another has
        the name); False when there is no such team or group collection."""
        return await asyncio.to_thread(self._change, collection_id, name, users_write)

    def _change(self, collection_id: str, name: str, users_write: bool) -> bool:
        try:
            with self.index.transaction() as c:
                self._name_free(c, name, collection_id)
                sql = "UPDATE collections SET name = ?, users_write = ? WHERE id = ? AND kind != 'personal'"
                return c.execute(sql, (name, int(users_write), collection_id)).rowcount > 0
        except self.index.db.integrity_error as exc:
            raise NameTaken(name) from exc

    def _name_free(self, c: Conn, name: str, collection_id: str) -> None:
        """NameTaken when another team or group collection has the name, whatever its case (SQLite's unique index
        folds ASCII letters only; Postgres' would refuse it anyway)."""
        taken = f"SELECT 1 FROM collections WHERE kind != 'personal' AND id != ? AND {self.index.same_name('name')}"
        if c.execute(taken, (collection_id, name)).fetchone():
            raise NameTaken(name)

    async def delete(self, collection_id: str) -> int | None:
        """Remove an empty team or group collection with its shares: None when done, else how many documents it
        still holds (it is then left alone); 0 when there is no such collection."""
        return await asyncio.to_thread(self._delete, collection_id)

    def _delete(self, collection_id: str) -> int | None:
        with self.index.transaction() as c:
            # the row first (locked on Postgres): an upload or a move filing into it holds it until its document is
            # in, so the count below, a statement of its own, sees that document; one that comes later finds no row
            lock = f"SELECT 1 FROM collections WHERE id = ? AND kind != 'personal'{self.index.locking('UPDATE')}"
            if not c.execute(lock, (collection_id,)).fetchone():
                return 0
            held = c.execute("SELECT COUNT(*) FROM documents WHERE collection = ?", (collection_id,)).fetchone()[0]
            if held:
                return held
            c.execute("DELETE FROM collections WHERE id = ?", (collection_id,))
            c.execute("DELETE FROM collection_groups WHERE collection_id = ?", (collection_id,))
        return None

    async def unshare_group(self, group_id: str) -> None:
        """Stop sharing every collection with a group (the group is being removed)."""
        await asyncio.to_thread(self._write, "DELETE FROM collection_groups WHERE group_id = ?", (group_id,))

    async def move(self, doc_id: str, source: str, target: str) -> bool:
        """File a document of collection `source` in collection `target` (DocumentNameTaken when that one holds a
        document of the same name); False, with nothing changed, when the document is no longer in `source` or the
        target was removed meanwhile."""
        try:
            return await asyncio.to_thread(self._move, doc_id, source, target)
        except self.index.db.integrity_error as exc:
            raise DocumentNameTaken(doc_id) from exc

    def _move(self, doc_id: str, source: str, target: str) -> bool:
        with self.index.transaction() as c:
            exists = f"SELECT 1 FROM collections WHERE id = ?{self.index.locking('KEY SHARE')}"
            if not c.execute(exists, (target,)).fetchone():
                return False
            moving = c.execute(
                "SELECT name FROM documents WHERE id = ? AND collection = ?", (doc_id, source)
            ).fetchone()
            if moving is None:
                return False
            # a name the target holds whatever its case (SQLite's unique index folds ASCII letters only)
            named = f"SELECT 1 FROM documents WHERE collection = ? AND id != ? AND {self.index.same_name('name')}"
            if c.execute(named, (target, doc_id, moving[0])).fetchone():
                raise DocumentNameTaken(doc_id)
            sql = "UPDATE documents SET collection = ? WHERE id = ? AND collection = ?"
            return c.execute(sql, (target, doc_id, source)).rowcount > 0

    def _write(self, sql: str, args: tuple) -> int:
        """One statement in a transaction; the rows it touched."""
        with self.index.transaction() as c:
            return c.execute(sql, args).rowcount

    def _insert(self, r: CollectionRecord) -> None:
        try:
            with self.index.transaction() as c:
                self._name_free(c, r.name, r.id)
                c.execute(
                    f"INSERT INTO collections ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                    (r.id, r.name, r.kind, r.owner, int(r.users_write), r.created_at),
                )
        except self.index.db.integrity_error as exc:
            raise NameTaken(r.name) from exc

    async def visible(self, reader: Reader) -> list[CollectionRecord]:
        """The collections the reader may read, personal first, then by name."""
        found = await asyncio.to_thread(self._select, "kind != 'personal' OR owner = ?", (reader.user_id,))
        return [r for r in found if may_read(reader, r)]

    async def readable_documents(self, reader: Reader) -> frozenset[str]:
        """Ids of the documents in the collections `may_read` lets the reader read."""
        ids = [c.id for c in await self.visible(reader)]
        if not ids:
            return frozenset()
        sql = f"SELECT id FROM documents WHERE collection IN ({','.join('?' * len(ids))})"
        return frozenset(r["id"] for r in await asyncio.to_thread(self.index.rows, sql, tuple(ids)))

    async def adopt_unfiled(self, admin_id: str) -> int:
        """Documents filed in no collection move to the team collection (made for the admin when missing)."""
        return await asyncio.to_thread(self._adopt, admin_id)

    async def drop_personal(self, user_id: str) -> list[str]:
        """Remove the user's personal collection; the ids of its documents, now readable by nobody, to delete."""
        return await asyncio.to_thread(self._drop_personal, user_id)

    def unfiled_home(self) -> str:
        """The team collection unfiled documents moved into (TEAM), where the CLI files what it ingests with accounts
        on (a changed file replaces the copy there); "" while there is none yet (setup moves them)."""
        self._setup()  # the CLI may come before any server made the tables
        rows = self.index.rows(
            f"SELECT id FROM collections WHERE kind = 'team' AND {self.index.same_name('name')}", (TEAM,)
        )
        return rows[0]["id"] if rows else ""

    def _team_for_unfiled(self, c: Conn, admin_id: str) -> str:
        """The team collection named TEAM, made for the admin when missing. When an admin gave that name to a group
        collection, the unfiled documents go to "team 2" (or the next free number) instead: into the group's, only
        its members would read them, and start-up failed on it (a probe)."""
        for n in range(1, 1000):
            name = TEAM if n == 1 else f"{TEAM} {n}"
            taken = f"SELECT id, kind FROM collections WHERE kind != 'personal' AND {self.index.same_name('name')}"
            row = c.execute(taken, (name,)).fetchone()
            if row is not None and row[1] == "team":
                return row[0]
            if row is None:
                team_id = uuid.uuid4().hex[:16]
                c.execute(
                    f"INSERT INTO collections ({_COLUMNS}) VALUES (?, ?, 'team', ?, 0, ?)",
                    (team_id, name, admin_id, now()),
                )
                if n > 1:
                    log.warning(
                        "a group collection is named %r: unfiled documents go to the team collection %r", TEAM, name
                    )
                return team_id
        raise RuntimeError(f"no free name for the team collection of unfiled documents ({TEAM!r} to {name!r} taken)")

    def _drop_personal(self, user_id: str) -> list[str]:
        with self.index.transaction() as c:
            row = c.execute("SELECT id FROM collections WHERE kind = 'personal' AND owner = ?", (user_id,)).fetchone()
            if row is None:
                return []
            c.execute("DELETE FROM collections WHERE id = ?", (row[0],))
            c.execute("DELETE FROM collection_groups WHERE collection_id = ?", (row[0],))
            return [r[0] for r in c.execute("SELECT id FROM documents WHERE collection = ?", (row[0],))]

    def _adopt(self, admin_id: str) -> int:
        with self.index.transaction() as c:
            if not c.execute("SELECT 1 FROM documents WHERE collection = '' LIMIT 1").fetchone():
                return 0
            team_id = self._team_for_unfiled(c, admin_id)
            adopt = _ADOPT.format(same_name=self.index.same_name("o.name", "documents.name"))
            moved = c.execute(adopt, (team_id, team_id))
            left = c.execute("SELECT COUNT(*) FROM documents WHERE collection = ''").fetchone()[0]
        if left:
            log.warning("%d unfiled document(s) share a name with one in %r and stay unfiled", left, TEAM)
        return moved.rowcount
