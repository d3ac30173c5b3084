# Sourced by scripts/start and scripts/test after setup.sh: the Next.js web UI in frontend/, idempotently.
# npm ci only when package-lock.json changed, npm run build only when the sources changed (stamp files),
# and Debian's chromium for the end-to-end tests only when asked (Playwright's browser download is not used).

FRONTEND="$ROOT/frontend"
export NEXT_TELEMETRY_DISABLED=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

ensure_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "error: the web UI needs Node.js 20.9+ and npm (https://nodejs.org or your distribution)" >&2
    return 1
  fi
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  if [ "$major" -lt 20 ]; then
    echo "error: the web UI needs Node.js 20.9+; this is $(node --version)" >&2
    return 1
  fi
}

frontend_sources_hash() {
  (cd "$FRONTEND" && find app components hooks lib package-lock.json next.config.mjs tsconfig.json tsconfig.build.json -type f \
    | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
}

# ensure_frontend [--browser]: install and build the UI; --browser also installs Debian's chromium for the tests.
ensure_frontend() {
  ensure_node || return 1
  if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
    ensure_system_packages chromium
  fi
  local stamp="$FRONTEND/node_modules/.ragline-installed" want
  want="$(sha256sum "$FRONTEND/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing the web UI's npm packages (package-lock.json changed or first run)"
    (cd "$FRONTEND" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    echo "$want" > "$stamp"
  fi
  local built="$FRONTEND/.next/.ragline-built"
  want="$(frontend_sources_hash)"
  if [ ! -f "$FRONTEND/.next/BUILD_ID" ] || [ "$(cat "$built" 2>/dev/null)" != "$want" ]; then
    say "building the web UI (sources changed or first run)"
    (cd "$FRONTEND" && npm run --silent build) || return 1
    echo "$want" > "$built"
  fi
}

# run_frontend_tests: vitest, then Playwright against a real backend and the built UI; fails if either fails.
run_frontend_tests() {
  local status=0
  say "web UI unit tests (vitest)"
  (cd "$FRONTEND" && npm test --silent) || status=1
  say "web UI end-to-end tests (Playwright with /usr/bin/chromium, fake model, real backend)"
  (cd "$FRONTEND" && RAGLINE_PYTHON="$PY" npm run --silent test:e2e) || status=1
  return $status
}
