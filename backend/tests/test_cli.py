"""The command line: a bad RAG_* setting is reported by name, without a traceback."""

import asyncio

import httpx
import pytest
from asgi_lifespan import LifespanManager

from backend import cli
from backend.cli import main
from backend.main import create_app
from backend.rag.store import chroma_folder_held
from backend.settings import get_settings
from backend.tests.api.auth_helpers import PASSWORD, client_of, sign_in
from backend.tests.conftest import fake_settings


@pytest.fixture(autouse=True)
def fresh_settings(no_model_env):
    """Each test reads its own RAG_* environment (get_settings caches), none of the caller's."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_invalid_settings_name_each_variable_and_exit_without_a_traceback(monkeypatch):
    monkeypatch.setenv("RAG_PROMPT_STYLE", "fancy")
    monkeypatch.setenv("RAG_RELEVANCE_FLOOR", "5")
    with pytest.raises(SystemExit) as exit_:
        main(["serve"])
    message = str(exit_.value.code)
    assert message.startswith("error: invalid settings")
    assert "RAG_PROMPT_STYLE: Input should be 'plain', 'example' or 'quote' (got 'fancy')" in message
    assert "RAG_RELEVANCE_FLOOR: Input should be less than or equal to 1 (got '5')" in message


@pytest.mark.parametrize(
    ("contents", "problem"),
    [
        (None, "no such file"),
        (b"PK\x03\x04 a zip, not a model", "not a GGUF model file"),
    ],
)
def test_a_gguf_path_that_is_missing_or_not_gguf_is_refused_naming_the_variable(
    monkeypatch, tmp_path, contents, problem
):
    path = tmp_path / "model.gguf"
    if contents is not None:
        path.write_bytes(contents)
    monkeypatch.setenv("RAG_EMBEDDED_MODEL_PATH", str(path))
    with pytest.raises(SystemExit) as exit_:
        main(["prepare"])
    message = str(exit_.value.code)
    assert message.startswith("error: invalid settings\n")
    assert f"RAG_EMBEDDED_MODEL_PATH: {problem}" in message and str(path) in message
    assert "Traceback" not in message


def test_the_openai_backend_without_a_chat_model_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("RAG_LLM_BACKEND", "openai")
    with pytest.raises(SystemExit) as exit_:
        main(["serve"])
    assert "RAG_OPENAI_CHAT_MODEL: required with RAG_LLM_BACKEND=openai" in str(exit_.value.code)


def test_a_rule_across_settings_is_reported_in_its_own_words(monkeypatch):
    monkeypatch.setenv("RAG_CHUNK_OVERLAP_TOKENS", "300")
    with pytest.raises(SystemExit) as exit_:
        main(["serve"])
    rule = "RAG_CHUNK_OVERLAP_TOKENS must be smaller than RAG_CHUNK_TARGET_TOKENS"
    assert str(exit_.value.code).splitlines()[1] == rule


def test_prepare_with_a_gguf_path_names_the_file_and_fetches_no_bundled_model(monkeypatch, tmp_path, capsys):
    path = tmp_path / "my-model.gguf"
    path.write_bytes(b"GGUF" + bytes(1000))
    monkeypatch.setenv("RAG_EMBEDDED_MODEL_PATH", str(path))
    monkeypatch.setattr(cli, "ensure_model", lambda *a: pytest.fail("the bundled model was fetched"))
    main(["prepare"])
    assert f"chat model: {path}" in capsys.readouterr().out


def test_prepare_on_an_openai_server_with_its_embedding_model_fetches_nothing(monkeypatch, capsys):
    for name, value in {"LLM_BACKEND": "openai", "OPENAI_CHAT_MODEL": "qwen", "OPENAI_EMBED_MODEL": "bge"}.items():
        monkeypatch.setenv(f"RAG_{name}", value)
    monkeypatch.setattr(cli, "ensure_model", lambda *a: pytest.fail("a bundled model was fetched"))
    monkeypatch.setattr(cli, "ensure_onnx_files", lambda *a: pytest.fail("the offline MiniLM was fetched"))
    main(["prepare"])
    assert capsys.readouterr().out == "chat model: qwen on http://127.0.0.1:8080/v1 (not fetched: the server runs it)\n"


def test_serve_with_auth_off_on_a_non_loopback_host_is_refused_before_listening(monkeypatch):
    served: list[str] = []
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: served.append(k["host"]))
    monkeypatch.setenv("RAG_HOST", "0.0.0.0")
    with pytest.raises(SystemExit) as exit_:
        main(["serve"])
    assert "RAG_AUTH=local" in str(exit_.value.code) and "RAG_AUTH_FORCE_OFF" in str(exit_.value.code)
    assert served == []


@pytest.mark.parametrize(
    ("env", "host"),
    [
        ({}, "127.0.0.1"),  # the default: unchanged behaviour of ./scripts/start
        ({"RAG_HOST": "localhost"}, "localhost"),
        ({"RAG_HOST": "::1"}, "::1"),
        ({"RAG_HOST": "0.0.0.0", "RAG_AUTH_FORCE_OFF": "true"}, "0.0.0.0"),
        ({"RAG_HOST": "0.0.0.0", "RAG_AUTH": "local"}, "0.0.0.0"),
    ],
)
def test_serve_listens_on_loopback_or_when_auth_is_on_or_forced_off(monkeypatch, env, host):
    served: list[str] = []
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: served.append(k["host"]))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    main(["serve"])
    assert served == [host]


def test_users_create_admin_adds_an_admin_who_can_sign_in(monkeypatch, tmp_path, capsys):
    import asyncio
    import io

    from backend.accounts.limiter import LoginLimiter
    from backend.accounts.service import Accounts
    from backend.accounts.sql import SqlAccountStore
    from backend.store.sqlite import SqliteDatabase

    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\n"))
    main(["users", "create-admin", "--email", "ann@team.org", "--password-stdin"])
    assert "admin ann@team.org created" in capsys.readouterr().out

    async def sign_in():
        async with SqliteDatabase.open(tmp_path / "data" / "accounts.sqlite") as db:
            accounts = Accounts(SqlAccountStore(db), 1, LoginLimiter(5, 60))
            return await accounts.sign_in("ann@team.org", "correct horse battery", "ip")

    signed = asyncio.run(sign_in())
    assert signed is not None and signed.user.role == "admin"
    monkeypatch.setattr("sys.stdin", io.StringIO("another password\n"))
    with pytest.raises(SystemExit) as exit_:
        main(["users", "create-admin", "--email", "ANN@team.org", "--password-stdin"])
    assert "exists already" in str(exit_.value.code)


def test_users_create_admin_with_a_database_url_makes_the_admin_in_postgres(monkeypatch, tmp_path, postgres_url):
    import io

    import psycopg

    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAG_DATABASE_URL", postgres_url)
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\n"))
    main(["users", "create-admin", "--email", "ann@team.org", "--password-stdin"])
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT email, role FROM users").fetchall() == [("ann@team.org", "admin")]
    assert not (tmp_path / "data" / "accounts.sqlite").exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("another password\n"))
    with pytest.raises(SystemExit) as exit_:
        main(["users", "create-admin", "--email", "ANN@team.org", "--password-stdin"])
    assert "exists already" in str(exit_.value.code)


def test_users_create_admin_refuses_a_short_password_or_a_non_email(monkeypatch, tmp_path):
    import io

    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    with pytest.raises(SystemExit) as exit_:
        main(["users", "create-admin", "--email", "ann@team.org", "--password-stdin"])
    assert "8 to 1024 characters" in str(exit_.value.code)
    monkeypatch.setattr("sys.stdin", io.StringIO("correct horse battery\n"))
    with pytest.raises(SystemExit) as exit_:
        main(["users", "create-admin", "--email", "ann", "--password-stdin"])
    assert "not an e-mail address" in str(exit_.value.code)


def test_migrate_brings_the_postgres_schema_to_head_and_says_so(monkeypatch, postgres_url, capsys):
    from backend.store import migrate

    monkeypatch.setenv("RAG_DATABASE_URL", postgres_url)
    main(["migrate"])
    assert capsys.readouterr().out.strip() == f"database schema: empty -> {migrate.head_revision()}"
    main(["migrate"])
    assert capsys.readouterr().out.strip() == f"database schema: {migrate.head_revision()}"


def test_migrate_without_a_database_url_says_what_to_set(monkeypatch):
    with pytest.raises(SystemExit) as exit_:
        main(["migrate"])
    assert "RAG_DATABASE_URL is not set" in str(exit_.value.code)


def test_a_database_url_that_is_not_postgres_is_refused_naming_the_variable_not_its_password(monkeypatch):
    monkeypatch.setenv("RAG_DATABASE_URL", "mysql://ragline:s3cret@db/ragline")
    with pytest.raises(SystemExit) as exit_:
        main(["migrate"])
    assert "RAG_DATABASE_URL: must be a postgresql://" in str(exit_.value.code)
    assert "s3cret" not in str(exit_.value.code)


def test_a_bad_url_in_a_pool_of_ollama_hosts_is_refused_naming_the_variable_once(monkeypatch):
    monkeypatch.setenv("RAG_LLM_BACKEND", "ollama")
    monkeypatch.setenv("RAG_OLLAMA_BASE_URL", "http://gpu-a:11434,gpu-b:port")
    with pytest.raises(SystemExit) as exit_:
        main(["serve"])
    message = str(exit_.value.code)
    assert "\nRAG_OLLAMA_BASE_URL: 'gpu-b:port' is not a server address" in message


async def test_ingest_beside_a_running_server_on_the_same_vector_store_is_refused_saying_to_upload(tmp_path):
    # Chroma's files take one writing process: what the CLI wrote beside a running server was unseen by the server's
    # vector index, and every search finding those chunks by keyword was a 500 ("Error finding id") until it next
    # wrote a document
    settings = fake_settings(tmp_path)
    note = tmp_path / "quokka.md"
    note.write_text("# Quokkas\n\nEach quokka gets two carrots a day.")
    app = create_app(settings)
    async with LifespanManager(app), httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://t") as api:
        with pytest.raises(SystemExit) as refused:
            await asyncio.to_thread(cli.ingest, settings, [note], False)
        assert "another Ragline process" in str(refused.value) and "/api/documents" in str(refused.value)
        assert (await api.get("/api/documents")).json() == []
    assert cli.ingest(settings, [note], False) == 0  # with the server stopped it goes in


async def test_with_accounts_a_changed_file_ingested_again_replaces_the_team_copy_not_a_copy_nobody_reads(tmp_path):
    # the CLI filed every file in no collection: a new version of a document the team collection held (it moved
    # there at setup) was "added" as a second, unfiled policy.md, left unfiled at the next start (its name was taken)
    # and read by nobody, while answers kept citing the old version
    settings = fake_settings(tmp_path / "data", auth="local")
    policy = tmp_path / "policy.md"
    policy.write_text("# Leave\n\nStaff get 28 days of annual leave.")
    assert cli.ingest(settings, [policy], False) == 0
    app = create_app(settings)
    async with LifespanManager(app), client_of(app) as client:
        await client.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD})
    policy.write_text("# Leave\n\nStaff get 30 days of annual leave.")
    assert cli.ingest(settings, [policy], False) == 0
    app = create_app(settings)
    async with LifespanManager(app), client_of(app) as client:
        await sign_in(client, "ann@team.org")
        listed = (await client.get("/api/documents")).json()
        assert [d["name"] for d in listed] == ["policy.md"]
        text = (await client.get(f"/api/documents/{listed[0]['id']}/text")).json()["text"]
        assert "30 days" in text
        assert len(app.state.services.knowledge.index.documents()) == 1  # no unfiled copy either


def test_serve_while_another_process_holds_the_vector_store_says_so_in_one_line(tmp_path, monkeypatch):
    # it loaded the model, then failed in the lifespan with uvicorn's traceback ending in the lock's message
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("the server started beside the other process"))
    settings = fake_settings(tmp_path)
    with chroma_folder_held(settings), pytest.raises(SystemExit) as refused:  # a `cli ingest` running, say
        cli.serve(settings)
    assert str(refused.value).startswith("error: the vector store in") and "another Ragline process" in str(
        refused.value
    )
