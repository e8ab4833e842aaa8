#!/usr/bin/env bash
# Runs every check and test restock has: formatting, clippy, the dependency
# rule for restock-core, and the workspace tests against a real DynamoDB API
# (moto's server on a free loopback port, started here and stopped on exit).
#
#   bash scripts/test.sh            # everything
#   bash scripts/test.sh -p restock-core   # extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "restock-core stays pure (no tokio, aws-*, lambda*)"
impure=$(cargo tree -p restock-core -e normal --prefix none --format '{p}' | awk '{print $1}' | grep -E '^(tokio|aws-|lambda)' | sort -u || true)
if [ -n "$impure" ]; then
  echo "restock-core must not depend on: $impure" >&2
  exit 1
fi
echo "ok"

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "DynamoDB API (moto) on loopback"
if [ -z "${RESTOCK_DYNAMODB_ENDPOINT:-}" ]; then
  if ! python3 -c 'import moto.server, werkzeug' >/dev/null 2>&1; then
    echo "moto's server is not installed: run  python3 -m pip install -r scripts/requirements.txt" >&2
    exit 1
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  log=$(mktemp -t moto.XXXXXX.log)
  # moto's server, one request at a time: see scripts/moto_serial.py for why.
  python3 scripts/moto_serial.py 127.0.0.1 "$port" >"$log" 2>&1 &
  moto_pid=$!
  trap 'kill $moto_pid 2>/dev/null || true; wait $moto_pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/moto-api/" 2>/dev/null; then break; fi
    if ! kill -0 "$moto_pid" 2>/dev/null; then echo "moto server exited:" >&2; cat "$log" >&2; exit 1; fi
    sleep 0.1
  done
  curl -fsS -o /dev/null "http://127.0.0.1:$port/moto-api/" || { echo "moto server did not answer on port $port" >&2; cat "$log" >&2; exit 1; }
  export RESTOCK_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
  echo "moto server pid $moto_pid at $RESTOCK_DYNAMODB_ENDPOINT"
fi
# Tests that need DynamoDB fail, never skip, when this is set and unreachable.
export RESTOCK_REQUIRE_DYNAMODB=1
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=eu-west-2

step "cargo build --workspace --bins (tests/binaries runs the compiled functions)"
cargo build --workspace --bins --quiet

step "cargo test --workspace"
cargo test --workspace "$@"
