#!/usr/bin/env bash
# Where the workspace suite's time goes, test by test: runs every workspace
# test under cargo-nextest (one process a test, each timed) against the
# strict DynamoDB doubles, as `cargo test --workspace` runs in scripts/test.sh
# (the plain one for most, the lagging and contended ones for the tests that
# name them; the differential histories with the same time budget), then
# prints the slowest tests, the seconds per test binary, and what the plain
# double did.
# docs/RELIABILITY.md ("Where the suite's time goes") quotes its figures.
# Doctests are not timed (nextest does not run them; cargo test does).
#
#   bash scripts/test-times.sh          # the 30 slowest
#   RESTOCK_TIMES_TOP=60 bash scripts/test-times.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=0
source scripts/deps.sh
ensure_deps
if ! cargo nextest --version >/dev/null 2>&1; then
  deps_say "cargo install cargo-nextest --locked"
  cargo install --quiet cargo-nextest --locked
fi
source scripts/moto.sh
start_moto RESTOCK_DYNAMODB_ENDPOINT 0 0
start_moto RESTOCK_DYNAMODB_LAGGING_ENDPOINT 250 0.02
start_moto RESTOCK_DYNAMODB_CONTENDED_ENDPOINT 0 0 5
cargo build --workspace --bins --tests --quiet

began=$SECONDS
status=0
RESTOCK_DIFFERENTIAL_SECONDS=${RESTOCK_DIFFERENTIAL_SECONDS:-100} \
  cargo nextest run --workspace --profile times --no-fail-fast --status-level fail \
  --final-status-level slow || status=$?
echo "nextest took $((SECONDS - began)) s of wall clock (exit $status)"

python3 - "target/nextest/times/junit.xml" "${RESTOCK_TIMES_TOP:-30}" <<'PY'
import sys, xml.etree.ElementTree as ET
from collections import defaultdict
root = ET.parse(sys.argv[1]).getroot()
top = int(sys.argv[2])
tests, per_binary = [], defaultdict(lambda: [0.0, 0])
for suite in root.iter("testsuite"):
    for case in suite.iter("testcase"):
        t = float(case.get("time", 0))
        tests.append((t, suite.get("name"), case.get("name")))
        per_binary[suite.get("name")][0] += t
        per_binary[suite.get("name")][1] += 1
total = sum(t for t, _, _ in tests)
print(f"\n==> the {top} slowest of {len(tests)} tests ({total:.0f} test-seconds in all)")
for t, binary, name in sorted(tests, reverse=True)[:top]:
    print(f"{t:8.1f}  {binary}  {name}")
print("\n==> test-seconds per test binary")
for binary, (t, n) in sorted(per_binary.items(), key=lambda kv: -kv[1][0]):
    print(f"{t:8.1f}  {n:4d} tests  {binary}")
PY
printf '\n==> what the double did\n%s\n' "$(curl -fsS "$RESTOCK_DYNAMODB_ENDPOINT/_restock/serial/stats" || echo unavailable)"
exit "$status"
