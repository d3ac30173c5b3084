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
INTERPOLATION = re.compile(r"\$\{(RAG_[A-Z0-9_]+)(?::?-([^}]*))?\}")


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
        [*command, "-f", str(COMPOSE), "--profile", "embedded", "config", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
