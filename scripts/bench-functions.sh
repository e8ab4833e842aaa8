#!/usr/bin/env bash
# Builds the four functions in release mode and prints their cold-start init,
# a 1,000-notice batch's peak RSS, and their stripped sizes.
# Uses RESTOCK_DYNAMODB_ENDPOINT, or starts moto the way scripts/test.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p restock-capture -p restock-detect -p restock-notify -p restock-sweep
if [ -z "${RESTOCK_DYNAMODB_ENDPOINT:-}" ]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  python3 scripts/moto_serial.py 127.0.0.1 "$port" >/dev/null 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/moto-api/" 2>/dev/null && break; sleep 0.1; done
  export RESTOCK_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
fi
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=eu-west-2
cargo bench -q -p restock-e2e --bench functions
