"""create_app: the FastAPI application; the lifespan opens models, vector store, database and checkpointer."""

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from langgraph.graph.state import CompiledStateGraph

from backend.accounts.limiter import LoginLimiter
from backend.accounts.oidc import SsoProvider
from backend.accounts.service import Accounts
from backend.accounts.sql import SqlAccountStore
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
from backend.api.session_cookie import RefreshSessionCookie
from backend.api.unicode_guard import RejectUnstorableText
from backend.graph.builder import build_graph
from backend.graph.deps import GraphDeps
from backend.graph.history import cache_layout
from backend.graph.prompts import system_prompt
from backend.guardrails.classifier import warm_up as warm_up_guardrails
from backend.guardrails.faq import load_faq
from backend.guardrails.policy import GuardrailPolicy
from backend.llm.factory import MINILM, open_models
from backend.llm.prime import prime_slots
from backend.memory.conversations import ConversationStore, delete_thread_rows, record_turn
from backend.rag.knowledge import KnowledgeBase
from backend.rag.store import open_vector_store
from backend.runs.log import RunLog
from backend.runs.runner import TurnRunner
from backend.runs.summary import SummaryScheduler
from backend.settings import Settings, get_settings
from backend.store.checkpointer import Checkpointer, checkpointer_for
from backend.store.database import Database
from backend.store.open import open_storage
from backend.store.prune import prune_checkpoints

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


async def open_accounts(settings: Settings, db: Database) -> Accounts:
    """The accounts service on its database (opened with auth off too, so an admin can be made beforehand)."""
    store = SqlAccountStore(db)
    await store.setup()
    if settings.auth == "local" and settings.api_key_list:
        log.warning("RAG_API_KEYS is not used with RAG_AUTH=local: /v1 takes personal API keys (POST /api/keys)")
    return Accounts(store, settings.session_hours, LoginLimiter(settings.login_attempts, settings.login_window_seconds))


async def prune_checkpoints_every(graph: CompiledStateGraph, checkpointer: Checkpointer, days: float) -> None:
    """Prune the checkpoints of threads idle for `days`, at start-up and every few minutes."""
    while True:
        try:
            pruned = await prune_checkpoints(graph, checkpointer, days)
            if pruned.checkpoints:
                log.info("pruned %d checkpoint(s) of %d idle thread(s)", pruned.checkpoints, pruned.threads)
        except Exception:  # a failed prune must not stop the server; the next one retries
            log.exception("pruning checkpoints failed")
        await asyncio.sleep(PRUNE_EVERY_SECONDS)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open everything the server needs, hand it to the routes, close it on shutdown."""
    settings: Settings = app.state.settings
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    layout = cache_layout(settings)
    async with (
        open_models(settings, layout) as models,
        open_storage(settings) as storage,
        RunLog.open(storage.runs) as runlog,
        open_vector_store(settings, storage.knowledge, models.embedding_function) as vectors,
    ):
        accounts = await open_accounts(settings, storage.accounts)
        db = storage.conversations
        conversations = ConversationStore(db)
        await conversations.setup()
        checkpointer = await db.call(lambda: checkpointer_for(db, record_turn, delete_thread_rows))
        knowledge = await asyncio.to_thread(
            KnowledgeBase, settings, storage.knowledge, vectors, models.embedding_function, models.embedding_model
        )
        await asyncio.to_thread(knowledge.warm_up)
        await asyncio.to_thread(warm_up_guardrails)
        await knowledge.collections.setup()
        async with knowledge.running():
            deps = GraphDeps(
                chat_model=models.chat_model,
                retriever=knowledge.retriever,
                settings=settings,
                policy=GuardrailPolicy.parse(settings.guardrail_policy),
                faq=load_faq(settings.faq_path) if settings.faq_path and settings.faq_path.exists() else [],
                embed=knowledge.embed_query.many,
                guard_embed=knowledge.embed_query.many if models.embedding_model == MINILM else None,
                provider=models.backend,
                model_name=models.model,
            )
            graph = build_graph(checkpointer)
            summaries = SummaryScheduler(graph, deps, models)
            runner = TurnRunner(graph, deps, checkpointer, summaries, models, runlog)
            shared = storage.runs.dialect == "postgres"  # replicas may share it: only dead replicas' runs
            await runner.recover(dead_only=shared)  # runs a dead server left `running` are interrupted before use
            app.state.services = Services(graph, deps, conversations, checkpointer, models, knowledge, runner, accounts)
            if settings.auth == "local" and (admin := await accounts.store.first_admin()):
                await auth.adopt_local_threads(app.state.services, admin)  # made before accounts, or by the CLI
            log.info("ragline ready: backend=%s model=%s data=%s", models.backend, models.model, settings.data_dir)
            tasks = [
                asyncio.create_task(prime_slots(models, system_prompt(settings.prompt_style)), name="prime"),
                asyncio.create_task(prune_run_logs(runner, settings.run_log_hours), name="prune-runs"),
            ]
            if shared:
                tasks.append(asyncio.create_task(runner.watch(), name="watch-replicas"))
            if days := settings.checkpoint_prune_days:
                tasks.append(asyncio.create_task(prune_checkpoints_every(graph, checkpointer, days)))
            try:
                yield
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await runner.close()
                await summaries.close()


def create_app(settings: Settings | None = None) -> FastAPI:
    """The API application; settings default to the RAG_* environment."""
    app = FastAPI(title="Ragline", version="0.2.0", lifespan=lifespan)
    app.state.settings = settings or get_settings()
    app.state.started_at = int(time.time())  # the `created` of the models in GET /v1/models
    app.add_middleware(RejectUnstorableText)
    app.add_middleware(RefreshSessionCookie)
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
