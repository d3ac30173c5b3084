"""create_app: the FastAPI application; the lifespan opens models, vector store and checkpointer."""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiosqlite
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from backend.api import chat, documents, errors, health, search, threads
from backend.api.deps import Services
from backend.graph.builder import build_graph
from backend.graph.deps import GraphDeps
from backend.guardrails.faq import load_faq
from backend.guardrails.policy import GuardrailPolicy
from backend.llm.factory import open_models
from backend.memory.summary import SummaryScheduler
from backend.memory.threads import ThreadStore
from backend.memory.turns import TurnStore
from backend.rag.knowledge import KnowledgeBase
from backend.rag.store import open_client, open_collection
from backend.settings import Settings, get_settings

log = logging.getLogger(__name__)


@asynccontextmanager
async def _sqlite(path: str) -> AsyncIterator[aiosqlite.Connection]:
    """A connection in WAL mode, so checkpoints survive a killed process and readers never block."""
    async with aiosqlite.connect(path) as conn:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        yield conn


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open everything the server needs, hand it to the routes, close it on shutdown."""
    settings: Settings = app.state.settings
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    async with (
        open_models(settings) as models,
        _sqlite(str(settings.checkpoint_path)) as cp_conn,
        _sqlite(str(settings.checkpoint_path)) as thread_conn,
    ):
        checkpointer = AsyncSqliteSaver(cp_conn)
        await checkpointer.setup()
        threads = ThreadStore(thread_conn)
        await threads.setup()
        turns = TurnStore(thread_conn)
        await turns.setup()
        client = await asyncio.to_thread(open_client, settings)
        collection = await asyncio.to_thread(open_collection, client, settings.collection, models.embedding_function)
        knowledge = await asyncio.to_thread(
            KnowledgeBase, settings, collection, models.embedding_function, models.embedding_model
        )
        await asyncio.to_thread(knowledge.warm_up)
        async with knowledge.running():
            deps = GraphDeps(
                chat_model=models.chat_model,
                retriever=knowledge.retriever,
                settings=settings,
                policy=GuardrailPolicy.parse(settings.guardrail_policy),
                faq=load_faq(settings.faq_path) if settings.faq_path and settings.faq_path.exists() else [],
                embed=models.embedding_function,
            )
            graph = build_graph(checkpointer)
            summaries = SummaryScheduler(graph, deps)
            app.state.services = Services(graph, deps, threads, turns, checkpointer, models, knowledge, summaries)
            log.info("ragline ready: backend=%s model=%s data=%s", models.backend, models.model, settings.data_dir)
            try:
                yield
            finally:
                await summaries.close()


def create_app(settings: Settings | None = None) -> FastAPI:
    """The API application; settings default to the RAG_* environment."""
    app = FastAPI(title="Ragline", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings or get_settings()
    if app.state.settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=app.state.settings.cors_origins, allow_methods=["*"], allow_headers=["*"]
        )
    errors.install(app)
    for module in (chat, threads, documents, search, health):
        app.include_router(module.router)
    return app
