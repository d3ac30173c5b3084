"""Accounts on SQLite and on Postgres: hashed passwords and tokens, first-user setup, sign-in limits, keys, deletion."""

import pytest

from backend.accounts.limiter import LoginLimiter
from backend.accounts.service import TooManyAttempts
from backend.accounts.store import EmailTaken, NotFirstUser
from backend.accounts.tokens import digest


async def test_first_user_setup_happens_once(accounts):
    admin = await accounts.create_user("a@x.org", "Ann", "password-1", "admin", only_if_first=True)
    with pytest.raises(NotFirstUser):
        await accounts.create_user("b@x.org", "Bob", "password-2", "admin", only_if_first=True)
    assert [u.id for u in await accounts.store.users()] == [admin.id]
    assert await accounts.store.first_admin() == admin


async def test_an_email_is_taken_whatever_its_case(accounts):
    await accounts.create_user("a@x.org", "Ann", "password-1", "user")
    with pytest.raises(EmailTaken):
        await accounts.create_user("A@X.ORG", "Ann again", "password-2", "user")


async def test_an_email_is_one_account_whatever_its_unicode_case_or_composition(accounts, account_db):
    asa = await accounts.create_user("A\u030asa@team.org", "Åsa", "correct horse", "user")
    assert asa.email == "Åsa@team.org"  # stored composed, the case as given
    for other in ("åsa@team.org", "ÅSA@TEAM.ORG", "a\u030asa@team.org"):
        with pytest.raises(EmailTaken):
            await accounts.create_user(other, "Åsa again", "password-2", "user")
    assert await account_db.read(lambda c: c.execute("SELECT email FROM users").fetchall()) == [("Åsa@team.org",)]
    for typed in ("åsa@team.org", "ÅSA@TEAM.ORG", "A\u030aSA@team.org"):
        signed = await accounts.sign_in(typed, "correct horse", "10.0.0.1")
        assert signed is not None and signed.user.id == asa.id, typed


async def test_an_email_stored_decomposed_before_is_still_found_and_taken(accounts, account_db):
    sql = "INSERT INTO users (id, email, display_name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)"
    await account_db.write(lambda c: c.execute(sql, ("old", "O\u0308rjan@team.org", "Ö", "user", "h", "2030")))
    found = await accounts.store.user_by_email("örjan@team.org")
    assert found is not None and found[0].id == "old"
    with pytest.raises(EmailTaken):
        await accounts.create_user("ÖRJAN@team.org", "Örjan", "password-2", "user")


async def test_the_password_is_stored_as_an_argon2_hash_only(accounts, account_db):
    await accounts.create_user("a@x.org", "Ann", "correct horse", "user")
    stored = await account_db.read(lambda c: c.execute("SELECT password_hash FROM users").fetchone()[0])
    assert stored.startswith("$argon2id$") and "correct horse" not in stored


async def test_sign_in_with_the_right_password_opens_a_session_stored_as_a_hash(accounts, account_db):
    ann = await accounts.create_user("a@x.org", "Ann", "correct horse", "user")
    signed = await accounts.sign_in("A@x.org", "correct horse", "10.0.0.1")
    assert signed is not None and signed.user == ann
    assert await accounts.session_user(signed.token) == ann
    stored = await account_db.read(lambda c: [tuple(r) for r in c.execute("SELECT token_hash FROM sessions")])
    assert stored == [(digest(signed.token),)]


async def test_wrong_password_and_unknown_email_both_give_none(accounts):
    await accounts.create_user("a@x.org", "Ann", "correct horse", "user")
    assert await accounts.sign_in("a@x.org", "wrong", "10.0.0.1") is None
    assert await accounts.sign_in("nobody@x.org", "correct horse", "10.0.0.1") is None


async def test_after_too_many_failures_even_the_right_password_waits_but_other_addresses_do_not(accounts):
    await accounts.create_user("a@x.org", "Ann", "correct horse", "user")
    for _ in range(3):
        assert await accounts.sign_in("a@x.org", "wrong", "10.0.0.1") is None
    with pytest.raises(TooManyAttempts) as refused:
        await accounts.sign_in("a@x.org", "correct horse", "10.0.0.1")
    assert 0 < refused.value.seconds <= 60
    assert await accounts.sign_in("a@x.org", "correct horse", "10.0.0.2") is not None


def test_the_limiter_forgets_failures_older_than_its_window():
    clock = [0.0]
    limiter = LoginLimiter(2, 10, clock=lambda: clock[0])
    limiter.failed("ip", "a@x.org")
    limiter.failed("ip", "A@x.org")
    assert limiter.wait_seconds("ip", "a@x.org") == 10
    clock[0] = 10.5
    assert limiter.wait_seconds("ip", "a@x.org") == 0


def test_the_limiter_counts_an_email_whatever_its_unicode_case_or_composition():
    limiter = LoginLimiter(2, 10, clock=lambda: 0.0)
    limiter.failed("ip", "Åsa@team.org")
    limiter.failed("ip", "a\u030asa@team.org")
    assert limiter.wait_seconds("ip", "ÅSA@team.org") == 10


async def test_an_expired_or_ended_session_finds_no_user(accounts, account_db):
    await accounts.create_user("a@x.org", "Ann", "correct horse", "user")
    first = await accounts.sign_in("a@x.org", "correct horse", "ip")
    second = await accounts.sign_in("a@x.org", "correct horse", "ip")
    assert first and second
    expire = "UPDATE sessions SET expires_at = '2000-01-01' WHERE token_hash = ?"
    await account_db.write(lambda c: c.execute(expire, (digest(first.token),)))
    await accounts.sign_out(second.token)
    assert await accounts.session_user(first.token) is None
    assert await accounts.session_user(second.token) is None
    assert await accounts.session_user("forged") is None


async def test_a_key_acts_as_its_user_until_revoked_and_records_its_use(accounts):
    ann = await accounts.create_user("a@x.org", "Ann", "correct horse", "user")
    bob = await accounts.create_user("b@x.org", "Bob", "correct horse", "user")
    key, secret = await accounts.new_key(ann, "laptop")
    assert secret.startswith(key.prefix) and len(secret) > 40
    assert await accounts.key_user(secret) == ann
    assert (await accounts.store.keys(ann.id))[0].last_used_at is not None
    assert not await accounts.store.revoke_key(bob.id, key.id, "2030-01-01")  # not Bob's key
    assert await accounts.store.revoke_key(ann.id, key.id, "2030-01-01")
    assert await accounts.key_user(secret) is None


async def test_deleting_a_user_ends_their_sessions_and_keys(accounts):
    ann = await accounts.create_user("a@x.org", "Ann", "correct horse", "user")
    signed = await accounts.sign_in("a@x.org", "correct horse", "ip")
    _, secret = await accounts.new_key(ann, "laptop")
    assert signed and await accounts.store.delete_user(ann.id)
    assert await accounts.session_user(signed.token) is None
    assert await accounts.key_user(secret) is None
    assert await accounts.store.keys(ann.id) == []
    assert not await accounts.store.delete_user(ann.id)
