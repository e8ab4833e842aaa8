#!/usr/bin/env bash
# The long randomised runs: run before resolving any issue that touches a
# store (docs/RELIABILITY.md, "The suite's budget"). scripts/test.sh runs the
# differential histories for a time budget with fresh seeds; this runs them
# counted, as many as CI ran before it had a budget and more, and the
# invariant histories likewise. A failing history is kept in
# tests/reliability/*.regressions and replayed first by every later run.
#
#   bash scripts/deep.sh                # the counts below
#   RESTOCK_DEEP_DIFFERENTIAL=400 bash scripts/deep.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=0
source scripts/deps.sh
ensure_deps
source scripts/moto.sh
start_moto RESTOCK_DYNAMODB_ENDPOINT 0 0
start_moto RESTOCK_DYNAMODB_LAGGING_ENDPOINT 250 0.02
start_moto RESTOCK_DYNAMODB_CONTENDED_ENDPOINT 0 0 5
cargo build --workspace --bins --tests --quiet

# A history takes about 28 steps (tests/reliability/differential.rs).
plain=${RESTOCK_DEEP_DIFFERENTIAL:-120}
lagging=${RESTOCK_DEEP_LAGGING_DIFFERENTIAL:-80}
began=$SECONDS
export RESTOCK_HISTORY_REPORT=${RESTOCK_HISTORY_REPORT:-$(mktemp -t restock-histories.XXXXXX)}
timed() { local t=$SECONDS; "$@"; printf '    %d s\n' "$((SECONDS - t))"; }

echo "==> memory against DynamoDB: $plain differential histories on the strict double, $lagging on the lagging, faulted one (side by side)"
RESTOCK_DIFFERENTIAL_HISTORIES=$plain \
  timed cargo test --workspace --test e2e -- differential:: --nocapture &
plain_pid=$!
RESTOCK_DYNAMODB_ENDPOINT=$RESTOCK_DYNAMODB_LAGGING_ENDPOINT RESTOCK_INDEX_LAG_MS=250 \
  RESTOCK_DIFFERENTIAL_HISTORIES=$lagging \
  timed cargo test --workspace --test e2e -- differential:: --nocapture
wait "$plain_pid"

echo "==> the invariant histories: 20,000 in memory, ${RESTOCK_DEEP_DYNAMODB:-100} on each DynamoDB double"
RESTOCK_HISTORIES=20000 timed cargo test --workspace --test e2e -- random_histories_keep_every_invariant_in_memory random_histories_keep_every_invariant_with_double_opt_in --nocapture
pids=()
for var in RESTOCK_DYNAMODB_ENDPOINT RESTOCK_DYNAMODB_LAGGING_ENDPOINT RESTOCK_DYNAMODB_CONTENDED_ENDPOINT; do
  lag=0
  [ "$var" = RESTOCK_DYNAMODB_LAGGING_ENDPOINT ] && lag=250
  RESTOCK_DYNAMODB_ENDPOINT=${!var} RESTOCK_INDEX_LAG_MS=$lag RESTOCK_DYNAMODB_HISTORIES=${RESTOCK_DEEP_DYNAMODB:-100} \
    timed cargo test --workspace --test e2e -- random_histories_keep_every_invariant_on_dynamodb --nocapture &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
echo "==> what the deep run compared"
sort "$RESTOCK_HISTORY_REPORT"
echo "deep run passed in $((SECONDS - began)) s"
