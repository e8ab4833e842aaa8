#!/usr/bin/env bash
# Mutation testing of restock-core's decision modules with cargo-mutants
# (the modules and the equivalent mutants, each with its reason, are in
# .cargo/mutants.toml). Prints the mutants caught, missed, timed out and
# unviable, and the equivalent ones listed; fails when one is missed.
#
#   bash scripts/mutants.sh             # every mutant (about an hour on 2 cores)
#   bash scripts/mutants.sh --in-diff   # only those on lines changed since the
#                                       # last landed commit (.ci/landed): CI
#   bash scripts/mutants.sh -f crates/core/src/stock.rs   # extra arguments go to cargo mutants
set -euo pipefail
cd "$(dirname "$0")/.."
out=${RESTOCK_MUTANTS_OUT:-target/mutants}
mkdir -p "$out"
args=(-p restock-core --output "$out" --no-shuffle)
if [ "${1:-}" = "--in-diff" ]; then
  shift
  base=$(cat .ci/landed)
  diff="$out/core.diff"
  git diff "$base" -- crates/core >"$diff"
  if [ ! -s "$diff" ]; then
    echo "restock-core has not changed since $base (.ci/landed): no mutant to test"
    exit 0
  fi
  echo "the lines of restock-core changed since $base (.ci/landed)"
  args+=(--in-diff "$diff")
fi
status=0
rm -f "$out/mutants.out/outcomes.json"
cargo mutants "${args[@]}" "$@" || status=$?
if [ ! -f "$out/mutants.out/outcomes.json" ]; then
  # cargo-mutants writes no outcomes when no mutant is on the lines given.
  echo "mutants: none to test"
  exit "$status"
fi
# cargo-mutants exits 2 when a mutant was missed, 3 on a timeout.
python3 - "$out/mutants.out/outcomes.json" <<'PY'
import json, sys, tomllib
outcomes = json.load(open(sys.argv[1]))
equivalent = len(tomllib.load(open(".cargo/mutants.toml", "rb")).get("exclude_re", []))
print(f"mutants: {outcomes['caught']} caught, {outcomes['missed']} missed, "
      f"{outcomes['timeout']} timed out, {outcomes['unviable']} unviable; "
      f"{equivalent} listed as equivalent (.cargo/mutants.toml)")
PY
if [ "$status" -ne 0 ]; then
  echo "missed (each needs a test, or a reason in .cargo/mutants.toml):"
  cat "$out/mutants.out/missed.txt" 2>/dev/null || true
fi
exit "$status"
