# Sourced by scripts/test.sh (and the scripts that need moto): checks for each
# tool the tests need and installs what is missing, so the test command works
# on a fresh Debian machine with Rust. Each step is skipped when its tool is
# already there, so a second run costs a few seconds.
#
#   - clippy and rustfmt (rustup components)
#   - curl (apt-get, as root)
#   - moto, cfn-lint, cargo-lambda and zig, pinned in scripts/requirements.txt,
#     in a project-local virtual environment (.venv/, put first on PATH)
#   - playwright-core and liquidjs for the browser story (npm ci in
#     tests/browser)
#   - Chromium, PHP's command line for the WordPress plugin's tests, and
#     libfaketime for the binaries run at a set time (apt-get, as root)
#   - the aarch64 Rust standard library for the Lambda build (rustup);
#     scripts/build-lambda.sh fails, saying so, where it cannot be fetched
#   - cargo-mutants (cargo install, pinned), for scripts/mutants.sh
#
# Where a step needs root and this is not root, it stops with the exact
# command to run.

RESTOCK_VENV="${RESTOCK_VENV:-$PWD/.venv}"

CARGO_MUTANTS_VERSION=27.1.0

deps_say() { printf '    %s\n' "$*"; }

# Runs apt-get install for the named Debian packages, or says how.
deps_apt() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing: $* — install with:  sudo apt-get install -y $*" >&2
    return 1
  fi
  deps_say "apt-get install $*"
  if [ -z "${RESTOCK_APT_UPDATED:-}" ]; then
    apt-get update -qq >/dev/null
    RESTOCK_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# The project-local Python tools: a virtual environment, refreshed whenever
# scripts/requirements.txt changes, put first on PATH.
use_venv() {
  local want stamp="$RESTOCK_VENV/.requirements.sha256"
  want=$(sha256sum scripts/requirements.txt | cut -d' ' -f1)
  if [ ! -x "$RESTOCK_VENV/bin/python3" ]; then
    deps_say "python3 -m venv $RESTOCK_VENV"
    python3 -m venv "$RESTOCK_VENV" || {
      echo "could not create a virtual environment: install python3-venv (sudo apt-get install -y python3-venv)" >&2
      return 1
    }
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    deps_say "pip install -r scripts/requirements.txt (into $RESTOCK_VENV)"
    "$RESTOCK_VENV/bin/python3" -m pip install --quiet --disable-pip-version-check -r scripts/requirements.txt
    echo "$want" >"$stamp"
  fi
  case ":$PATH:" in
    *":$RESTOCK_VENV/bin:"*) ;;
    *) export PATH="$RESTOCK_VENV/bin:$PATH" ;;
  esac
}

ensure_deps() {
  command -v cargo >/dev/null || { echo "Rust is missing: see https://rustup.rs" >&2; return 1; }
  command -v python3 >/dev/null || deps_apt python3 python3-venv
  local components
  components=$(rustup component list --installed 2>/dev/null || true)
  grep -q '^clippy' <<<"$components" || { deps_say "rustup component add clippy"; rustup component add clippy; }
  grep -q '^rustfmt' <<<"$components" || { deps_say "rustup component add rustfmt"; rustup component add rustfmt; }

  command -v curl >/dev/null || deps_apt curl ca-certificates
  use_venv

  if [ ! -x /usr/bin/chromium ]; then deps_apt chromium; fi
  command -v php >/dev/null || deps_apt php-cli
  ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || deps_apt libfaketime
  command -v npm >/dev/null || deps_apt nodejs npm
  # Again whenever the lock file changes (a stamp beside the modules).
  local lock stamp=tests/browser/node_modules/.lock.sha256
  lock=$(sha256sum tests/browser/package-lock.json | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$lock" ]; then
    deps_say "npm ci --prefix tests/browser"
    npm ci --prefix tests/browser --no-audit --no-fund --silent
    echo "$lock" >"$stamp"
  fi

  if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
    deps_say "rustup target add aarch64-unknown-linux-gnu"
    # Not fatal here: scripts/build-lambda.sh, the last step, fails on it
    # with the reason, after every test has run.
    timeout 600 rustup target add aarch64-unknown-linux-gnu || true
  fi

  if [ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $CARGO_MUTANTS_VERSION" ]; then
    deps_say "cargo install cargo-mutants@$CARGO_MUTANTS_VERSION (about 3 minutes)"
    cargo install --quiet --locked "cargo-mutants@$CARGO_MUTANTS_VERSION"
  fi
}
