# Sourced by the scripts that need the DynamoDB API.
#
#   start_moto [VAR] [LAG_MS] [FAULT_RATE] [INFLIGHT_MS]
#
# Unless $VAR (default RESTOCK_DYNAMODB_ENDPOINT) is already set, starts
# moto's server (one request at a time, behind the strict DynamoDB double:
# see scripts/moto_serial.py and scripts/dynamo_strict.py) on a free loopback
# port, with index reads lagging by LAG_MS (default 0) and transaction
# conflicts and throttles injected at FAULT_RATE (default 0), transactions
# in flight for INFLIGHT_MS (default 0, off; a few ms: overlapping ones contend as on
# DynamoDB; see scripts/dynamo_strict.py); waits until it
# answers, exports $VAR, and stops it when the script exits.
start_moto() {
  local var=${1:-RESTOCK_DYNAMODB_ENDPOINT} lag=${2:-0} faults=${3:-0} inflight=${4:-0}
  export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=eu-west-2
  [ -n "${!var:-}" ] && return 0
  # moto lives in the project's virtual environment (scripts/deps.sh).
  [ -x "${RESTOCK_VENV:-$PWD/.venv}/bin/python3" ] && export PATH="${RESTOCK_VENV:-$PWD/.venv}/bin:$PATH"
  if ! python3 -c 'import moto.server, werkzeug' >/dev/null 2>&1; then
    echo "moto's server is not installed: run  bash scripts/test.sh  once (it installs the test tools into .venv/)" >&2
    return 1
  fi
  local port log pid
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  log=$(mktemp -t moto.XXXXXX.log)
  RESTOCK_INDEX_LAG_MS=$lag RESTOCK_FAULT_RATE=$faults RESTOCK_TX_INFLIGHT_MS=$inflight \
    python3 scripts/moto_serial.py 127.0.0.1 "$port" >"$log" 2>&1 &
  pid=$!
  MOTO_PIDS="${MOTO_PIDS:-} $pid"
  trap 'for p in $MOTO_PIDS; do kill $p 2>/dev/null || true; wait $p 2>/dev/null || true; done' EXIT
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/moto-api/" 2>/dev/null; then
      export "$var=http://127.0.0.1:$port"
      echo "moto server pid $pid at http://127.0.0.1:$port (index lag ${lag} ms, fault rate ${faults}, transactions in flight ${inflight} ms) as $var"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then echo "moto server exited:" >&2; cat "$log" >&2; return 1; fi
    sleep 0.1
  done
  echo "moto server did not answer on port $port" >&2
  cat "$log" >&2
  return 1
}
