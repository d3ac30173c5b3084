# Sourced by scripts/start and scripts/test: install what is missing, idempotently.
# Python venv in .venv (re-installed when pyproject.toml changes), Debian's libgomp1 for llama.cpp.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

ensure_system_packages() {
  local missing=()
  ldconfig -p 2>/dev/null | grep -q 'libgomp.so.1' || missing+=(libgomp1)
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_python_env() {
  local stamp="$VENV/.installed" want
  want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
  if [ ! -x "$PY" ]; then
    say "creating Python virtual environment in .venv"
    python3 -m venv "$VENV"
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing Python dependencies (pyproject.toml changed or first run)"
    "$PY" -m pip install --quiet --disable-pip-version-check -e "$ROOT[dev]" 2> >(grep -v '^WARNING: Location' >&2)
    echo "$want" > "$stamp"
  fi
}
