# Sourced by the scripts that need the DynamoDB API: unless
# RESTOCK_DYNAMODB_ENDPOINT is already set, starts moto's server (one request
# at a time: see scripts/moto_serial.py) on a free loopback port, waits until
# it answers, exports the endpoint, and stops it when the script exits.
start_moto() {
  export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=eu-west-2
  [ -n "${RESTOCK_DYNAMODB_ENDPOINT:-}" ] && return 0
  # moto lives in the project's virtual environment (scripts/deps.sh).
  [ -x "${RESTOCK_VENV:-$PWD/.venv}/bin/python3" ] && export PATH="${RESTOCK_VENV:-$PWD/.venv}/bin:$PATH"
  if ! python3 -c 'import moto.server, werkzeug' >/dev/null 2>&1; then
    echo "moto's server is not installed: run  bash scripts/test.sh  once (it installs the test tools into .venv/)" >&2
    return 1
  fi
  local port log
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  log=$(mktemp -t moto.XXXXXX.log)
  python3 scripts/moto_serial.py 127.0.0.1 "$port" >"$log" 2>&1 &
  MOTO_PID=$!
  trap 'kill $MOTO_PID 2>/dev/null || true; wait $MOTO_PID 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/moto-api/" 2>/dev/null; then
      export RESTOCK_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
      echo "moto server pid $MOTO_PID at $RESTOCK_DYNAMODB_ENDPOINT"
      return 0
    fi
    if ! kill -0 "$MOTO_PID" 2>/dev/null; then echo "moto server exited:" >&2; cat "$log" >&2; return 1; fi
    sleep 0.1
  done
  echo "moto server did not answer on port $port" >&2
  cat "$log" >&2
  return 1
}
