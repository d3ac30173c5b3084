"""SqlAccountStore on SQLite and on Postgres: the same answers from both engines; the Postgres schema's migration."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import pytest
from alembic import command

from backend.accounts.sql import INSERT_USER, SqlAccountStore
from backend.accounts.store import (
    ApiKey,
    EmailTaken,
    Group,
    GroupTaken,
    Invitation,
    InvitationInvalid,
    LastAdmin,
    NotFirstUser,
    Profile,
    User,
)
from backend.store import migrate
from backend.store.database import Database
from backend.store.postgres import PostgresDatabase

AT = "2030-01-01T00:00:00.000+00:00"


def user(n: int, email: str = "", role: str = "user") -> User:
    return User(f"u{n}", email or f"user{n}@x.org", f"User {n}", role, AT)  # type: ignore[arg-type]


@asynccontextmanager
async def starting_together(db: Database, jobs: int) -> AsyncIterator[None]:
    """Postgres: keep writers off the users table until `jobs` statements wait for it, so they all go on together.

    Readers pass (SHARE mode): without a lock of their own two first-user setups would both see no users, then both
    wait here to insert.
    """
    if not isinstance(db, PostgresDatabase):
        yield  # SQLite runs one job at a time: nothing to line up
        return
    # waiting for the users table, or for a row of it another job locked
    waiting = (
        "SELECT COUNT(*) FROM pg_locks WHERE NOT granted "
        "AND (relation = 'users'::regclass OR locktype = 'transactionid')"
    )
    async with await psycopg.AsyncConnection.connect(db.url) as conn, conn.transaction():
        await conn.execute("LOCK TABLE users IN SHARE MODE")
        yield
        for _ in range(200):
            async with await psycopg.AsyncConnection.connect(db.url, autocommit=True) as probe:
                row = await (await probe.execute(waiting)).fetchone()
            if row and row[0] >= jobs:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail(f"{jobs} jobs never waited for the users table")


async def test_two_first_user_setups_at_once_make_one_admin(account_store, account_db):
    async with starting_together(account_db, 2):
        both = asyncio.gather(
            account_store.create_user(user(1, role="admin"), "hash", only_if_first=True),
            account_store.create_user(user(2, role="admin"), "hash", only_if_first=True),
            return_exceptions=True,
        )
    results = await both
    made, refused = [r for r in results if isinstance(r, User)], [r for r in results if isinstance(r, NotFirstUser)]
    assert (len(made), len(refused)) == (1, 1), results
    assert await account_store.count_users() == 1


async def test_an_account_is_found_by_its_email_whatever_the_case(account_store):
    await account_store.create_user(user(1, "Ann@Team.org"), "hash")
    found = await account_store.user_by_email("ann@TEAM.ORG")
    assert found is not None and found[0].id == "u1" and found[1] == "hash"
    with pytest.raises(EmailTaken):
        await account_store.create_user(user(2, "ANN@team.org"), "hash")
    assert await account_store.user_by_email("bob@team.org") is None


async def test_two_accounts_an_older_version_kept_apart_are_each_found_by_their_own_spelling(account_store, account_db):
    """Before e-mails were composed and folded, "Åsa@" typed on macOS (A and a ring above) and on Windows made two
    accounts; the lookup, which now folds both to one, returned whichever came first to both of them."""
    for n, email in ((1, "A\u030asa@team.org"), (2, "\u00c5sa@team.org")):
        row = (f"u{n}", email, f"User {n}", "user", f"2030-01-0{n}T00:00:00.000+00:00", f"hash{n}")
        await account_db.write(lambda c, row=row: c.execute(INSERT_USER, row))
    for n, email in ((1, "A\u030asa@team.org"), (2, "\u00c5sa@team.org")):
        found = await account_store.user_by_email(email)
        assert found is not None and (found[0].id, found[1]) == (f"u{n}", f"hash{n}"), (email, found)
    found = await account_store.user_by_email("\u00e5sa@team.org")  # neither spelling: the older account
    assert found is not None and found[0].id == "u1"


async def test_two_admins_deleting_each_other_at_once_leave_one(account_store, account_db):
    await account_store.create_user(user(1, role="admin"), "hash")
    await account_store.create_user(user(2, role="admin"), "hash")
    await account_store.create_user(user(3), "hash")
    async with starting_together(account_db, 2):  # Postgres: both have read the admins before either deletes
        both = asyncio.gather(account_store.delete_user("u1"), account_store.delete_user("u2"), return_exceptions=True)
    results = await both
    assert sorted(type(r).__name__ for r in results) == ["LastAdmin", "bool"], results
    (left,) = [u for u in await account_store.users() if u.role == "admin"]
    with pytest.raises(LastAdmin):
        await account_store.delete_user(left.id)
    assert await account_store.delete_user("u3")  # a user goes whatever the admins


async def test_two_accounts_for_one_email_made_at_once_make_one(account_store, account_db):
    async with starting_together(account_db, 2):  # Postgres: both have checked the e-mail before either inserts
        both = asyncio.gather(
            account_store.create_user(user(1, "A\u030asa@team.org"), "hash"),
            account_store.create_user(user(2, "Åsa@team.org"), "hash"),
            return_exceptions=True,
        )
    results = await both
    assert sorted(type(r).__name__ for r in results) == ["EmailTaken", "User"], results
    assert await account_store.count_users() == 1


async def test_a_group_name_is_taken_whatever_its_case_and_groups_list_by_name(account_store):
    await account_store.create_group(Group("g1", "beta", AT))
    await account_store.create_group(Group("g2", "Alpha", AT))
    with pytest.raises(GroupTaken):
        await account_store.create_group(Group("g3", "ALPHA", AT))
    assert [g.name for g in await account_store.groups()] == ["Alpha", "beta"]


async def test_adding_a_member_twice_keeps_one_membership_and_unknown_ids_are_refused(account_store):
    await account_store.create_user(user(1), "hash")
    await account_store.create_group(Group("g1", "team", AT))
    assert await account_store.set_member("g1", "u1", True)
    assert await account_store.set_member("g1", "u1", True)
    assert not await account_store.set_member("g1", "nobody", True)
    assert not await account_store.set_member("nogroup", "u1", True)
    assert [g.members for g in await account_store.groups()] == [("u1",)]
    assert await account_store.user_groups("u1") == {"g1"}
    assert await account_store.set_member("g1", "u1", False)
    assert await account_store.user_groups("u1") == frozenset()


async def test_an_invitation_for_an_email_takes_it_in_any_case_and_no_other(account_store):
    invitation = Invitation("i1", "Ann@Team.org", "user", "admin", AT, "2031-01-01")
    await account_store.create_invitation(invitation, "token-hash")
    with pytest.raises(InvitationInvalid):
        await account_store.accept_invitation("token-hash", user(1, "bob@team.org"), "hash", AT)
    await account_store.accept_invitation("token-hash", user(2, "ann@team.ORG"), "hash", AT)
    assert (await account_store.invitations())[0].used_at == AT
    assert await account_store.invitation("token-hash", AT) is None


async def test_an_invitation_for_an_email_takes_it_whatever_its_unicode_case_or_composition(account_store):
    await account_store.create_invitation(Invitation("i1", "Örjan@team.org", "user", "admin", AT, "2031-01-01"), "t1")
    await account_store.accept_invitation("t1", user(1, "o\u0308rjan@team.org"), "hash", AT)
    await account_store.create_invitation(Invitation("i2", None, "user", "admin", AT, "2031-01-01"), "t2")
    with pytest.raises(EmailTaken):
        await account_store.accept_invitation("t2", user(2, "ÖRJAN@team.org"), "hash", AT)
    assert await account_store.invitation("t2", AT) is not None


async def test_an_invitation_for_a_taken_email_stays_unused(account_store):
    await account_store.create_user(user(1, "ann@team.org"), "hash")
    await account_store.create_invitation(Invitation("i1", None, "user", "admin", AT, "2031-01-01"), "token-hash")
    with pytest.raises(EmailTaken):
        await account_store.accept_invitation("token-hash", user(2, "ANN@team.org"), "hash", AT)
    assert await account_store.invitation("token-hash", AT) is not None


async def test_a_read_only_key_reads_back_read_only_and_acts_as_its_user(account_store):
    await account_store.create_user(user(1), "hash")
    await account_store.create_key(ApiKey("k1", "u1", "reader", "rk_", AT, None, None, True, None), "h1")
    await account_store.create_key(ApiKey("k2", "u1", "writer", "rk_", AT, None, None, False, "2031-01-01"), "h2")
    assert {k.id: k.read_only for k in await account_store.keys("u1")} == {"k1": True, "k2": False}
    assert await account_store.key_user("h1", AT) == (user(1), True)
    assert await account_store.key_user("h2", AT) == (user(1), False)
    assert await account_store.key_user("h2", "2031-01-02") is None  # expired


async def test_lists_made_in_the_same_millisecond_keep_the_order_they_were_made_in(account_store):
    made = [3, 7, 1, 9, 5, 2]  # neither the ids' order nor its reverse
    for n in made:
        await account_store.create_user(user(n, role="admin"), "hash")
        await account_store.create_key(ApiKey(f"k{n}", "u3", "key", "rk_", AT, None, None), f"h{n}")
        await account_store.create_invitation(Invitation(f"i{n}", None, "user", "u3", AT, AT), f"t{n}")
    assert [u.id for u in await account_store.users()] == [f"u{n}" for n in made]  # oldest first
    assert await account_store.first_admin() == user(3, role="admin")
    assert [k.id for k in await account_store.keys("u3")] == [f"k{n}" for n in reversed(made)]  # newest first
    assert [i.id for i in await account_store.invitations()] == [f"i{n}" for n in reversed(made)]


async def test_a_profile_is_replaced_and_deleting_the_user_deletes_everything_of_theirs(account_store, account_db):
    await account_store.create_user(user(1), "hash")
    assert await account_store.profile("u1") == Profile()
    await account_store.set_profile("u1", Profile("engineer", "search", "fr"))
    await account_store.set_profile("u1", Profile("lead", "", "de"))
    assert await account_store.profile("u1") == Profile("lead", "", "de")
    await account_store.create_session("s" * 64, "u1", AT, "2031-01-01")
    await account_store.create_group(Group("g1", "team", AT))
    await account_store.set_member("g1", "u1", True)
    assert await account_store.delete_user("u1")
    for table in ("profiles", "sessions", "group_members", "users"):
        assert await account_db.read(lambda c, t=table: c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) == 0


async def test_setup_on_a_postgres_database_never_migrated_names_the_missing_tables(postgres_url):
    async with PostgresDatabase.open(postgres_url, pool_size=2) as db:
        with pytest.raises(RuntimeError, match="api_keys, group_members, groups, invitations, profiles, sessions"):
            await SqlAccountStore(db).setup()


def test_the_accounts_migration_downgrades_to_the_previous_revision_and_back(postgres_url):
    tables = "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
    migrate.upgrade(postgres_url)
    config = migrate.alembic_config()
    with migrate._engine(postgres_url).begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0001_conversations_runs")
    with psycopg.connect(postgres_url) as conn:
        assert not {"users", "sessions", "api_keys", "groups"} & {r[0] for r in conn.execute(tables)}
    assert migrate.upgrade(postgres_url) == ("0001_conversations_runs", migrate.head_revision())
