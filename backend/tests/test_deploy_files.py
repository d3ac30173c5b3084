"""docker-compose.yml, Dockerfile and .dockerignore agree with the code, checked without a Docker engine."""

import importlib
import json
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, get_args
from urllib.parse import urlsplit

import pytest
import yaml

from backend.api.health import router as health_router
from backend.settings import LlmBackend, Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
NGINX_SCALE = ROOT / "deploy" / "nginx-scale.conf"
INTERPOLATION = re.compile(r"\$\{(RAG_[A-Z0-9_]+)(?::?-([^}]*))?\}")
ANY_INTERPOLATION = re.compile(r"\$\{([A-Za-z0-9_]+)(?::?-([^}]*))?\}")
DEFAULT_SERVICES = {"ollama", "ollama-pull", "backend", "frontend"}
SCALE_SERVICES = {"postgres", "api-1", "api-2", "proxy", "frontend-scale"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]


def _env(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment as a dict, whether written as a mapping or a list of KEY=VALUE."""
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def _default(value: str) -> str:
    """The value compose uses when the variable is unset: `${RAG_X:-default}` -> default."""
    match = INTERPOLATION.fullmatch(value)
    return match.group(2) if match and match.group(2) is not None else value


def _unset(value: str) -> str:
    """The value compose makes of a string when none of its variables is set: `${X:-d}` -> d, `${X}` -> ''."""
    return ANY_INTERPOLATION.sub(lambda match: match.group(2) or "", value)


def _depends(service: dict[str, Any]) -> dict[str, str]:
    """depends_on as {service: condition}."""
    deps = service.get("depends_on", {})
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: spec.get("condition", "service_started") for name, spec in deps.items()}


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """Volumes as {target: source} from the short `source:target[:mode]` syntax."""
    return {entry.split(":")[1]: entry.split(":")[0] for entry in service.get("volumes", [])}


def _setting_env_names() -> set[str]:
    return {f"RAG_{name.upper()}" for name in Settings.model_fields}


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [tuple(line.split(None, 1)) for line in lines if line and not line.startswith("#")]


def test_compose_defines_the_ragline_services(services: dict[str, Any]) -> None:
    assert {"ollama", "ollama-pull", "backend", "frontend", "backend-embedded"} <= services.keys()


def test_every_rag_variable_in_compose_is_a_settings_field() -> None:
    used = set(re.findall(r"\bRAG_[A-Z0-9_]+", COMPOSE.read_text()))
    assert used, "compose should configure the server through RAG_* variables"
    assert used - _setting_env_names() == set()


def test_compose_model_defaults_match_settings_defaults(services: dict[str, Any]) -> None:
    for name in ("backend", "ollama-pull"):
        env = _env(services[name])
        for field in ("ollama_chat_model", "ollama_embed_model"):
            assert _default(env[f"RAG_{field.upper()}"]) == Settings.model_fields[field].default, (name, field)


@pytest.mark.parametrize("name", ["backend", "backend-embedded"])
def test_compose_backend_environment_loads_into_settings(
    services: dict[str, Any], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in _env(services[name]).items():
        monkeypatch.setenv(key, _default(value))
    settings = Settings(_env_file=None)
    assert settings.llm_backend == _env(services[name])["RAG_LLM_BACKEND"]
    assert settings.llm_backend in get_args(LlmBackend)
    assert str(settings.data_dir) == "/data"
    assert settings.host == "0.0.0.0"
    if settings.llm_backend == "ollama":
        assert settings.ollama_base_url == "http://ollama:11434"


def test_backend_talks_to_the_ollama_service(services: dict[str, Any]) -> None:
    backend = _env(services["backend"])
    assert backend["RAG_LLM_BACKEND"] == "ollama"
    url = urlsplit(backend["RAG_OLLAMA_BASE_URL"])
    assert (url.hostname, url.port) == ("ollama", 11434)
    assert url.hostname in services
    assert _env(services["ollama-pull"])["OLLAMA_HOST"] == "ollama:11434"


def test_ollama_pull_pulls_the_chat_and_embedding_models(services: dict[str, Any]) -> None:
    pull = services["ollama-pull"]
    assert pull["image"] == services["ollama"]["image"]
    script = " ".join(pull["command"]) if isinstance(pull["command"], list) else pull["command"]
    assert 'ollama pull "$$RAG_OLLAMA_CHAT_MODEL"' in script
    assert 'ollama pull "$$RAG_OLLAMA_EMBED_MODEL"' in script
    assert pull.get("restart", "no") == "no"


def test_startup_order_waits_for_healthy_ollama_and_pulled_models(services: dict[str, Any]) -> None:
    assert "ollama" in " ".join(services["ollama"]["healthcheck"]["test"])
    assert _depends(services["ollama-pull"]) == {"ollama": "service_healthy"}
    backend_deps = _depends(services["backend"])
    assert backend_deps["ollama-pull"] == "service_completed_successfully"
    assert backend_deps["ollama"] == "service_healthy"


def test_backend_healthcheck_targets_the_health_route_on_the_published_port(services: dict[str, Any]) -> None:
    routes = {route.path for route in health_router.routes}
    for name in ("backend", "backend-embedded"):
        service = services[name]
        test = service["healthcheck"]["test"]
        assert test[:3] == ["CMD", "python", "-c"], name
        url = urlsplit(re.search(r"'(http://[^']+)'", test[3]).group(1))
        assert url.path in routes
        assert f"{url.port}:{url.port}" in service["ports"]


@pytest.fixture
def health_stub() -> Iterator[tuple[int, list[int]]]:
    """A loopback HTTP server answering /api/health with the status code at the head of a list."""
    statuses = [200]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(statuses[0] if self.path == "/api/health" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], statuses
    server.shutdown()
    server.server_close()


def test_backend_healthcheck_command_fails_when_the_server_is_unhealthy(
    services: dict[str, Any], health_stub: tuple[int, list[int]]
) -> None:
    port, statuses = health_stub
    code = services["backend"]["healthcheck"]["test"][3].replace("127.0.0.1:8000", f"127.0.0.1:{port}")

    def run() -> int:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30).returncode

    assert run() == 0
    statuses[0] = 503
    assert run() != 0


def test_embedded_profile_runs_without_ollama(services: dict[str, Any]) -> None:
    embedded = services["backend-embedded"]
    assert embedded["profiles"] == ["embedded"]
    assert _env(embedded)["RAG_LLM_BACKEND"] == "embedded"
    assert not set(_depends(embedded)) & {"ollama", "ollama-pull"}
    assert "profiles" not in services["backend"]
    assert _mounts(embedded)[_env(embedded)["RAG_CACHE_DIR"]] == "ragline-cache"


def test_state_lives_in_declared_named_volumes(compose: dict[str, Any], services: dict[str, Any]) -> None:
    declared = set(compose["volumes"])
    assert _mounts(services["ollama"])["/root/.ollama"] in declared
    for name in ("backend", "backend-embedded"):
        assert _mounts(services[name])[_env(services[name])["RAG_DATA_DIR"]] in declared
    for name, service in services.items():
        for source in _mounts(service).values():
            assert source.startswith((".", "/")) or source in declared, (name, source)


def test_frontend_service_builds_the_next_app_and_proxies_to_the_backend(services: dict[str, Any]) -> None:
    frontend = services["frontend"]
    build = frontend["build"]
    context = ROOT / build["context"]
    assert (context / "package.json").is_file()
    assert (context / build.get("dockerfile", "Dockerfile")).is_file()
    url = urlsplit(_env(frontend)["BACKEND_URL"])
    assert (url.scheme, url.hostname, url.port) == ("http", "backend", 8000)
    assert url.hostname in services
    assert "3000:3000" in frontend["ports"]
    assert "3000" in " ".join(frontend["healthcheck"]["test"])
    assert not _mounts(frontend), "the UI is built into its image, not mounted"


def test_frontend_dockerfile_builds_with_npm_and_serves_as_non_root() -> None:
    text = re.sub(r"\\\n", " ", (ROOT / "frontend" / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    instructions = [tuple(line.split(None, 1)) for line in lines]
    froms = [args.split()[0] for op, args in instructions if op == "FROM"]
    assert froms and all(image == "node:20-slim" for image in froms)
    runs = " && ".join(args for op, args in instructions if op == "RUN")
    assert "npm ci" in runs
    assert "npm run build" in runs
    assert json.loads([args for op, args in instructions if op == "CMD"][-1]) == ["npm", "run", "start"]
    users = [args for op, args in instructions if op == "USER"]
    assert users and users[-1] not in {"root", "0"}
    ignored = (ROOT / "frontend" / ".dockerignore").read_text().split()
    assert {"node_modules", ".next"} <= set(ignored)


def test_dockerfile_installs_libgomp_and_runs_as_non_root() -> None:
    instructions = _dockerfile_instructions()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    runs = [args for op, args in instructions if op == "RUN"]
    assert any(re.search(r"apt-get install\b[^&;]*\blibgomp1\b", run) for run in runs)
    assert any(re.search(r"pip install\b[^&;]*\s\.(\s|$)", run) for run in runs)
    users = [args for op, args in instructions if op == "USER"]
    assert users and users[-1] not in {"root", "0"}


def test_dockerfile_cmd_starts_the_app_factory() -> None:
    cmds = [args for op, args in _dockerfile_instructions() if op == "CMD"]
    argv = json.loads(cmds[-1])
    assert argv[0] == "uvicorn"
    assert "--factory" in argv
    target = next(arg for arg in argv if ":" in arg)
    assert target == "backend.main:create_app"
    module, attr = target.split(":")
    assert callable(getattr(importlib.import_module(module), attr))
    assert argv[argv.index("--host") + 1] == "0.0.0.0"
    assert argv[argv.index("--port") + 1] == "8000"


def test_dockerignore_keeps_local_state_and_models_out_of_the_image() -> None:
    patterns = {line.strip() for line in DOCKERIGNORE.read_text().splitlines()}
    for path in (".venv", ".ragline", "node_modules", ".git", "__pycache__", ".pytest_cache", "*.gguf"):
        assert f"**/{path}" in patterns or path in patterns, path


def _compose_command() -> list[str] | None:
    """`docker compose` (v2 plugin) when present, else the standalone `docker-compose`."""
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    standalone = shutil.which("docker-compose")
    return [standalone] if standalone else None


def test_compose_file_passes_docker_compose_config() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("neither the docker compose plugin nor docker-compose is installed")
    result = subprocess.run(
        [*command, "-f", str(COMPOSE), "--profile", "embedded", "--profile", "scale", "config", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


# The `scale` profile: Postgres, two API replicas, nginx in front, a web UI talking to nginx.

Directive = tuple[str, list[str], list[Any]]


def _nginx(text: str) -> list[Directive]:
    """An nginx config as nested (name, arguments, block) tuples; comments dropped, quoted arguments unquoted."""
    tokens = re.findall(r'"[^"]*"|[{};]|[^\s{};"]+', re.sub(r"#[^\n]*", "", text))

    def block(it: Iterator[str]) -> list[Directive]:
        items: list[Directive] = []
        words: list[str] = []
        for token in it:
            if token in ";{":
                items.append((words[0], [w.strip('"') for w in words[1:]], block(it) if token == "{" else []))
                words = []
            elif token == "}":
                return items
            else:
                words.append(token)
        assert not words, f"unterminated directive {words}"
        return items

    return block(iter(tokens))


def _one(items: list[Directive], name: str) -> Directive:
    found = [item for item in items if item[0] == name]
    assert len(found) == 1, f"expected one {name!r}, found {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def nginx() -> list[Directive]:
    return _nginx(NGINX_SCALE.read_text())


def _effective(server: list[Directive], path: str) -> dict[str, list[list[str]]]:
    """The directives that apply to a request for `path`: the server's, replaced name by name by those of the
    longest matching prefix location (how nginx inherits proxy_set_header and the other proxy_* directives)."""
    locations = [item for item in server if item[0] == "location"]
    assert all(len(args) == 1 for _, args, _ in locations), "only plain prefix locations are understood here"
    matching = [item for item in locations if path.startswith(item[1][0])]
    assert matching, f"no location serves {path}"
    location = max(matching, key=lambda item: len(item[1][0]))
    directives: dict[str, list[list[str]]] = {}
    for scope in (server, location[2]):
        own: dict[str, list[list[str]]] = {}
        for name, args, block in scope:
            if not block:
                own.setdefault(name, []).append(args)
        directives |= own
    return directives


def _seconds(value: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(ms|s|m|h|d)?", value).groups()
    return int(number) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit or "s"]


def _bytes(value: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([kKmMgG])?", value).groups()
    return int(number) * 1024 ** {"": 0, "k": 1, "m": 2, "g": 3}[(unit or "").lower()]


def test_default_up_starts_the_same_services_and_scale_needs_its_profile(services: dict[str, Any]) -> None:
    default = {name for name, service in services.items() if not service.get("profiles")}
    assert default == DEFAULT_SERVICES
    for name in SCALE_SERVICES:
        assert services[name]["profiles"] == ["scale"], name
    for name in default:
        assert set(_depends(services[name])) <= default, name


def test_scale_postgres_runs_pgvector_on_a_volume_with_a_readiness_check(
    compose: dict[str, Any], services: dict[str, Any]
) -> None:
    postgres = services["postgres"]
    assert postgres["image"].startswith("pgvector/pgvector:pg")
    assert _mounts(postgres)["/var/lib/postgresql/data"] in compose["volumes"]
    test = postgres["healthcheck"]["test"]
    assert test[:2] == ["CMD", "pg_isready"]
    assert test[test.index("-h") + 1] == "127.0.0.1", "over TCP: the image's first-start server is socket-only"
    password = ANY_INTERPOLATION.fullmatch(_env(postgres)["POSTGRES_PASSWORD"])
    assert password and password.group(2), "the password comes from a variable, with a default for local use"
    assert "ports" not in postgres


@pytest.mark.parametrize("name", ["api-1", "api-2"])
def test_scale_replica_is_the_backend_on_postgres_with_a_shared_data_volume(
    services: dict[str, Any], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    replica, backend, postgres = services[name], services["backend"], _env(services["postgres"])
    assert (replica["build"], replica["healthcheck"]) == (backend["build"], backend["healthcheck"])
    env = {key: _unset(value) for key, value in _env(replica).items()}
    url = urlsplit(env["RAG_DATABASE_URL"])
    assert (url.scheme, url.hostname, url.port, url.path) == (
        "postgresql",
        "postgres",
        5432,
        f"/{postgres['POSTGRES_DB']}",
    )
    assert (url.username, url.password) == (postgres["POSTGRES_USER"], _unset(postgres["POSTGRES_PASSWORD"]))
    assert _depends(replica) == {
        "postgres": "service_healthy",
        "ollama": "service_healthy",
        "ollama-pull": "service_completed_successfully",
    }
    assert _mounts(replica) == _mounts(services["api-1"]), "the uploaded files must be where every replica reads them"
    assert _mounts(replica)[env["RAG_DATA_DIR"]] != _mounts(backend)["/data"], "not the SQLite stack's data"
    assert "ports" not in replica, "reached through the proxy only"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings(_env_file=None)
    assert settings.database_url is not None
    assert settings.database_url.get_secret_value() == env["RAG_DATABASE_URL"]
    assert (str(settings.data_dir), settings.host, settings.llm_backend) == ("/data", "0.0.0.0", "ollama")


def test_scale_proxy_mounts_its_nginx_config_and_balances_both_replicas(
    services: dict[str, Any], nginx: list[Directive]
) -> None:
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert (ROOT / _mounts(proxy)["/etc/nginx/conf.d/default.conf"]).resolve() == NGINX_SCALE
    assert set(_depends(proxy)) == {"api-1", "api-2"}
    upstream = _one(nginx, "upstream")
    servers = [args for name, args, _ in upstream[2] if name == "server"]
    assert sorted(args[0] for args in servers) == ["api-1:8000", "api-2:8000"]
    for args in servers:
        options = dict(arg.split("=", 1) for arg in args[1:] if "=" in arg)
        assert int(options["max_fails"]) >= 1 and _seconds(options["fail_timeout"]) > 0, args
    balancing = {name for name, _, _ in upstream[2]} & {"ip_hash", "hash", "sticky", "least_time"}
    assert not balancing, "no sticky sessions: any replica answers any request"
    listen = _one(_one(nginx, "server")[2], "listen")[1][0]
    assert f"{listen}:{listen}" in proxy["ports"]
    frontend = urlsplit(_env(services["frontend-scale"])["BACKEND_URL"])
    assert (frontend.hostname, frontend.port) == ("proxy", int(listen))
    assert services["frontend-scale"]["build"] == services["frontend"]["build"]


@pytest.mark.parametrize("path", ["/api/chat/stream", "/api/documents", "/v1/chat/completions"])
def test_nginx_streams_api_and_v1_unbuffered_with_long_timeouts(nginx: list[Directive], path: str) -> None:
    upstream = _one(nginx, "upstream")[1][0]
    directives = _effective(_one(nginx, "server")[2], path)
    value = {name: " ".join(args[-1]) for name, args in directives.items()}
    assert value["proxy_pass"] == f"http://{upstream}"
    assert (value["proxy_buffering"], value["proxy_cache"], value["proxy_http_version"]) == ("off", "off", "1.1")
    assert _seconds(value["proxy_read_timeout"]) >= 3600
    assert _seconds(value["proxy_send_timeout"]) >= 3600
    headers = {args[0].lower(): args[1] for args in directives["proxy_set_header"]}
    assert headers["connection"] == ""
    assert {"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "host"} <= headers.keys()
    ignored = " ".join(" ".join(args) for args in directives.get("proxy_ignore_headers", []))
    assert "x-accel-buffering" not in ignored.lower()


def test_nginx_accepts_a_document_at_the_api_upload_limit(nginx: list[Directive]) -> None:
    limit = Settings.model_fields["max_upload_mb"].default * 1e6
    body = _bytes(_one(_one(nginx, "server")[2], "client_max_body_size")[1][0])
    assert body >= limit + 1_000_000, "room for the multipart framing around a document at RAG_MAX_UPLOAD_MB"
