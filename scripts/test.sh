#!/usr/bin/env bash
# Installs what the tests need where it is missing (scripts/deps.sh: a
# project-local Python environment, npm packages, Chromium, the arm64 target,
# cargo-mutants), then runs every check and test restock has: formatting,
# clippy, the dependency rules for restock-core (pure) and restock-app (the
# store port only), the code's shape (scripts/shape.py), the workspace tests
# against a real DynamoDB API (moto's server on a free loopback port, started
# here and stopped on exit),
# cargo-mutants on the lines of restock-core a change touched, then the
# browser story (headless Chromium), cfn-lint on template.yaml and the arm64
# Lambda build.
#
#   bash scripts/test.sh            # everything
#   bash scripts/test.sh -p restock-core   # extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "$0")/.."
# A one-shot run gains nothing from incremental state, which is gigabytes.
export CARGO_INCREMENTAL=0

# Every step is timed; the table of seconds is printed at the end, beside the
# budget docs/RELIABILITY.md ("The suite's budget") gives each step.
STEP_TIMES=${RESTOCK_STEP_TIMES:-$(mktemp -t restock-steps.XXXXXX)}
step_name="" step_began=$SECONDS
# The randomised histories append what each run compared (a line a test;
# tests/reliability/budget.rs), printed beside the step table.
export RESTOCK_HISTORY_REPORT=${RESTOCK_HISTORY_REPORT:-$(mktemp -t restock-histories.XXXXXX)}
end_step() {
  [ -n "$step_name" ] && printf '%s\t%s\n' "$((SECONDS - step_began))" "$step_name" >>"$STEP_TIMES"
  step_name=""
}
step() { end_step; step_name="$*" step_began=$SECONDS; printf '\n==> %s\n' "$*"; }
step_table() {
  end_step
  printf '\n==> seconds per step (docs/RELIABILITY.md has the budget)\n'
  awk -F'\t' '{ printf "%6d  %s\n", $1, $2 }' "$STEP_TIMES"
  printf '%6d  the whole run, wall clock\n' "$SECONDS"
  if [ -s "$RESTOCK_HISTORY_REPORT" ]; then
    printf '\n==> the randomised histories this run compared\n'
    sort "$RESTOCK_HISTORY_REPORT"
  fi
}

step "the tools the tests need (scripts/deps.sh installs what is missing)"
source scripts/deps.sh
ensure_deps
echo "ok"

step "cargo fmt --check"
cargo fmt --all -- --check

# forbid_deps CRATE REGEX WHY: fails when CRATE's normal dependencies include a
# package whose name matches REGEX.
forbid_deps() {
  local found
  found=$(cargo tree -p "$1" -e normal --prefix none --format '{p}' | awk '{print $1}' | grep -E "$2" | sort -u || true)
  if [ -n "$found" ]; then
    echo "$1 must not depend on ($3): $found" >&2
    exit 1
  fi
  echo "ok"
}

step "restock-core stays pure (no tokio, aws-*, lambda*)"
forbid_deps restock-core '^(tokio|aws-|lambda)' "it holds the decisions, with no I/O"

step "restock-app depends on the store port only (no adapter, no AWS SDK)"
forbid_deps restock-app '^(restock-store-(memory|dynamo)|restock-aws|aws-|lambda)' "the handlers see the ports only"

step "the code's shape: no product file over 600 lines, no function over 80, platform names from the Platform type (scripts/shape.py)"
python3 scripts/shape.py --self-test
python3 scripts/shape.py

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "DynamoDB API (moto behind the strict double) on loopback"
source scripts/moto.sh
# The suites' endpoint: index reads current, client tokens and 1 MB pages as
# DynamoDB has them.
start_moto RESTOCK_DYNAMODB_ENDPOINT 0 0
# The lagging endpoint: index reads 250 ms behind the table, and transaction
# conflicts and throttles on 2% of requests (tests/store/lag.rs and the
# other tests that name it).
start_moto RESTOCK_DYNAMODB_LAGGING_ENDPOINT 250 0.02
# The contended endpoint: each transaction and single-item write in flight
# for 5 ms, overlapping transactions on an item cancelled as DynamoDB
# cancels them (crates/store-dynamo/tests/store/contention.rs runs on it).
start_moto RESTOCK_DYNAMODB_CONTENDED_ENDPOINT 0 0 5

# --tests as well, so the functions are built with the same dependency
# features as the tests (dev-dependencies' features count only when a test is
# among the targets): one build of the dependencies, not two.
step "cargo build --workspace --bins --tests (tests/binaries runs the compiled functions)"
cargo build --workspace --bins --tests --quiet

# The lagging, contended and 1 s runs each have doubles of their own, so
# they run beside the workspace tests: each double applies one request at a
# time on one core, and side by side they use both (docs/RELIABILITY.md,
# "Where the suite's time goes"). Their output is printed after the
# workspace tests, with their steps' seconds.
# The differential histories (memory against DynamoDB) run for a time
# budget per part, with fresh seeds each run (failing ones are kept and
# replayed first); scripts/deep.sh runs the long counted runs.
DIFFERENTIAL_SECONDS=${RESTOCK_DIFFERENTIAL_SECONDS:-100}
LAGGING_DIFFERENTIAL_SECONDS=${RESTOCK_LAGGING_DIFFERENTIAL_SECONDS:-150}

side_runs() {
  # The lagging runs, the contention model and the 1 s index, in order.
  step "the index lagging 250 ms, 2% of requests faulted: store suites, DESIGN story, binaries, histories"
  RESTOCK_DYNAMODB_ENDPOINT=$RESTOCK_DYNAMODB_LAGGING_ENDPOINT RESTOCK_INDEX_LAG_MS=250 \
    cargo test --workspace --test store -- conformance::dynamodb:: concurrency::
  RESTOCK_DYNAMODB_ENDPOINT=$RESTOCK_DYNAMODB_LAGGING_ENDPOINT RESTOCK_INDEX_LAG_MS=250 \
    cargo test --workspace --test e2e -- story:: binaries:: random_histories_keep_every_invariant_on_dynamodb
  step "memory against DynamoDB: differential histories on the lagging, faulted endpoint (${LAGGING_DIFFERENTIAL_SECONDS} s a part)"
  RESTOCK_DYNAMODB_ENDPOINT=$RESTOCK_DYNAMODB_LAGGING_ENDPOINT RESTOCK_INDEX_LAG_MS=250 \
    RESTOCK_DIFFERENTIAL_SECONDS=$LAGGING_DIFFERENTIAL_SECONDS \
    cargo test --workspace --test e2e -- differential:: --nocapture

  # The racing suites on the contention model, one test at a time (the
  # double applies one request at a time, about 40 transactions a second,
  # so suites side by side would only slow each other past their budgets).
  # The click races (two hundred clicks at once on one item's hold slots)
  # queue there for longer than a click's budget: crates/sim/tests/races.rs
  # runs them at a drop's rate on the same rules in simulated time, in the
  # workspace tests.
  step "the contention model (each transaction in flight 5 ms): racing joins, deliveries, cancels, waves and sweeps; histories"
  RESTOCK_DYNAMODB_ENDPOINT=$RESTOCK_DYNAMODB_CONTENDED_ENDPOINT \
    cargo test --workspace --test store -- --test-threads=1 \
    concurrency::fifty_identical_joins concurrency::twenty_deliveries \
    concurrency::two_different_deliveries concurrency::cancels_racing_a_wave \
    concurrency::concurrent_waves concurrency::two_overlapping_sweeps
  RESTOCK_DYNAMODB_ENDPOINT=$RESTOCK_DYNAMODB_CONTENDED_ENDPOINT \
    cargo test --workspace --test e2e -- random_histories_keep_every_invariant_on_dynamodb

  step "the index lagging 1 s: DESIGN story and binaries"
  RESTOCK_DYNAMODB_ENDPOINT=$RESTOCK_DYNAMODB_SLOW_INDEX_ENDPOINT RESTOCK_INDEX_LAG_MS=1000 \
    cargo test --workspace --test e2e -- story:: binaries::
  end_step
}

side_pid=""
if [ $# -eq 0 ]; then
  start_moto RESTOCK_DYNAMODB_SLOW_INDEX_ENDPOINT 1000 0.02
  side_log=$(mktemp -t restock-side.XXXXXX.log)
  side_times=$(mktemp -t restock-side-steps.XXXXXX)
  echo "the lagging, contended and 1 s runs go on beside the workspace tests (their output follows them)"
  ( STEP_TIMES=$side_times step_name=""; side_runs ) >"$side_log" 2>&1 &
  side_pid=$!
fi

step "cargo test --workspace (the differential histories ${DIFFERENTIAL_SECONDS} s a part)"
RESTOCK_DIFFERENTIAL_SECONDS=$DIFFERENTIAL_SECONDS \
  cargo test --workspace "$@"

if [ -n "$side_pid" ]; then
  step "waiting for the lagging, contended and 1 s runs"
  side_status=0
  wait "$side_pid" || side_status=$?
  cat "$side_log"
  awk -F'\t' '{ printf "%s\t(beside the workspace tests) %s\n", $1, $2 }' "$side_times" >>"$STEP_TIMES"
  if [ "$side_status" -ne 0 ]; then
    echo "the lagging, contended or 1 s runs failed (exit $side_status): their output is above" >&2
    exit "$side_status"
  fi

  step "cargo-mutants on restock-core: the mutants on lines changed since the last landed commit (.ci/landed)"
  bash scripts/mutants.sh --in-diff --baseline skip
fi

step "what the strict DynamoDB doubles did"
for var in RESTOCK_DYNAMODB_ENDPOINT RESTOCK_DYNAMODB_LAGGING_ENDPOINT RESTOCK_DYNAMODB_CONTENDED_ENDPOINT RESTOCK_DYNAMODB_SLOW_INDEX_ENDPOINT; do
  [ -n "${!var:-}" ] || continue
  printf '%s: %s\n' "$var" "$(curl -fsS "${!var}/_restock/strict/stats" || echo unavailable)"
done

if [ $# -eq 0 ]; then
  step "browser: the shopper's story in headless Chromium against restock-local"
  node tests/browser/story.mjs

  step "cfn-lint template.yaml"
  cfn-lint template.yaml
  echo "ok"

  step "cargo lambda build --release --arm64 (the four bootstrap artifacts sam build makes)"
  bash scripts/build-lambda.sh
fi

step_table
