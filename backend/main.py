"""create_app: the FastAPI application; the lifespan opens models, vector store, database and checkpointer."""

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from backend.accounts.limiter import LoginLimiter
from backend.accounts.oidc import SsoProvider
from backend.accounts.service import Accounts
from backend.accounts.sqlite import SqliteAccountStore
from backend.api import (
    auth,
    chat,
    collections,
    documents,
    errors,
    groups,
    health,
    invitations,
    keys,
    oidc,
    openai,
    profile,
    runs,
    search,
    threads,
    users,
)
from backend.api.deps import Services
from backend.api.openapi import install_openapi
from backend.api.security import authenticated
from backend.graph.builder import build_graph
from backend.graph.deps import GraphDeps
from backend.graph.history import cache_layout
from backend.graph.prompts import system_prompt
from backend.guardrails.faq import load_faq
from backend.guardrails.policy import GuardrailPolicy
from backend.llm.factory import open_models
from backend.llm.prime import prime_slots
from backend.memory.conversations import ConversationStore, delete_thread_rows, record_turn
from backend.rag.knowledge import KnowledgeBase, open_knowledge_database
from backend.rag.store import open_vectors
from backend.runs.log import RunLog
from backend.runs.runner import TurnRunner
from backend.runs.summary import SummaryScheduler
from backend.settings import Settings, get_settings
from backend.store.checkpointer import SqliteCheckpointer
from backend.store.sqlite import SqliteDatabase

log = logging.getLogger(__name__)


PRUNE_EVERY_SECONDS = 600


async def prune_run_logs(runner: TurnRunner, hours: float) -> None:
    """Delete finished runs' logs older than `hours`, at start-up and every few minutes."""
    while True:
        try:
            if pruned := await runner.prune(hours):
                log.info("pruned the logs of %d finished run(s)", pruned)
        except Exception:  # a failed prune must not stop the server; the next one retries
            log.exception("pruning the run log failed")
        await asyncio.sleep(PRUNE_EVERY_SECONDS)


async def open_accounts(settings: Settings, db: SqliteDatabase) -> Accounts:
    """The accounts service on its SQLite file (opened with auth off too, so an admin can be made beforehand)."""
    store = SqliteAccountStore(db)
    await store.setup()
    if settings.auth == "local" and settings.api_key_list:
        log.warning("RAG_API_KEYS is not used with RAG_AUTH=local: /v1 takes personal API keys (POST /api/keys)")
    return Accounts(store, settings.session_hours, LoginLimiter(settings.login_attempts, settings.login_window_seconds))


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open everything the server needs, hand it to the routes, close it on shutdown."""
    settings: Settings = app.state.settings
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    layout = cache_layout(settings)
    async with (
        open_models(settings, layout) as models,
        SqliteDatabase.open(settings.checkpoint_path) as db,
        RunLog.open(settings.runs_path) as runlog,
        SqliteDatabase.open(settings.accounts_path) as accounts_db,
        open_knowledge_database(settings) as knowledge_db,
    ):
        accounts = await open_accounts(settings, accounts_db)
        conversations = ConversationStore(db)
        await conversations.setup()
        checkpointer = await db.call(lambda: SqliteCheckpointer(db, record_turn, delete_thread_rows))
        vectors = await asyncio.to_thread(open_vectors, settings, knowledge_db, models.embedding_function)
        knowledge = await asyncio.to_thread(
            KnowledgeBase, settings, knowledge_db, vectors, models.embedding_function, models.embedding_model
        )
        await asyncio.to_thread(knowledge.warm_up)
        await knowledge.collections.setup()
        async with knowledge.running():
            deps = GraphDeps(
                chat_model=models.chat_model,
                retriever=knowledge.retriever,
                settings=settings,
                policy=GuardrailPolicy.parse(settings.guardrail_policy),
                faq=load_faq(settings.faq_path) if settings.faq_path and settings.faq_path.exists() else [],
                embed=knowledge.embed_query.many,
                provider=models.backend,
                model_name=models.model,
            )
            graph = build_graph(checkpointer)
            summaries = SummaryScheduler(graph, deps, models)
            runner = TurnRunner(graph, deps, checkpointer, summaries, models, runlog)
            await runner.recover()  # runs a dead server left `running` are `interrupted` before anyone asks
            app.state.services = Services(graph, deps, conversations, checkpointer, models, knowledge, runner, accounts)
            if settings.auth == "local" and (admin := await accounts.store.first_admin()):
                await auth.adopt_local_threads(app.state.services, admin)  # made before accounts, or by the CLI
            log.info("ragline ready: backend=%s model=%s data=%s", models.backend, models.model, settings.data_dir)
            priming = asyncio.create_task(prime_slots(models, system_prompt(settings.prompt_style)))
            pruning = asyncio.create_task(prune_run_logs(runner, settings.run_log_hours), name="prune-runs")
            try:
                yield
            finally:
                for task in (priming, pruning):
                    task.cancel()
                await asyncio.gather(priming, pruning, return_exceptions=True)
                await runner.close()
                await summaries.close()


def create_app(settings: Settings | None = None) -> FastAPI:
    """The API application; settings default to the RAG_* environment."""
    app = FastAPI(title="Ragline", version="0.2.0", lifespan=lifespan)
    app.state.settings = settings or get_settings()
    app.state.started_at = int(time.time())  # the `created` of the models in GET /v1/models
    if app.state.settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=app.state.settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=[openai.THREAD_HEADER],
        )
    errors.install(app)
    app.state.sso = SsoProvider(app.state.settings) if app.state.settings.oidc_issuer else None
    for module in (health, auth, oidc):  # public: the rest needs a signed-in user when RAG_AUTH=local
        app.include_router(module.router)
    for module in (
        chat,
        runs,
        threads,
        documents,
        collections,
        search,
        users,
        profile,
        invitations,
        groups,
        keys,
        openai,
    ):
        app.include_router(module.router, dependencies=[Depends(authenticated)])
    install_openapi(app)
    return app
