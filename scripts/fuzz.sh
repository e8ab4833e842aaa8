#!/usr/bin/env bash
# Fuzzes webhook verification and parsing (Shopify, WooCommerce, Standard
# Webhooks), capture's input parsing, and the shoppers' link tokens and
# confirmation messages with cargo fuzz (libFuzzer), each
# target for a bounded time, starting from the committed seed corpus in
# fuzz/corpus/. New inputs go to target/fuzz-corpus/; a crash stops the run
# and leaves its input in fuzz/artifacts/<target>/.
#
#   cargo install cargo-fuzz        # once; needs a nightly toolchain
#   bash scripts/fuzz.sh [seconds per target, default 60]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is missing: cargo install cargo-fuzz" >&2; exit 1; }
targets=(webhook_shopify webhook_woocommerce webhook_standard join_form links contact)
printf '%-22s %12s %10s\n' target executions seconds
for t in "${targets[@]}"; do
  mkdir -p "target/fuzz-corpus/$t"
  log="target/fuzz-$t.log"
  (cd fuzz && cargo +nightly fuzz run "$t" "../target/fuzz-corpus/$t" "corpus/$t" -- \
      -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048) > "$log" 2>&1 || {
    echo "$t FAILED: see $log and fuzz/artifacts/$t/" >&2
    tail -30 "$log" >&2
    exit 1
  }
  runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1)
  printf '%-22s %12s %10s\n' "$t" "${runs:-?}" "$secs"
done
echo "no crashes, no hangs"
