#!/usr/bin/env bash
# A drop's load in simulated time (crates/sim): capture's real router on the
# in-memory store behind DynamoDB's latency, transaction-conflict and
# partition read and write limits, under Lambda's concurrency and cold
# starts, on a virtual clock. Prints the tables in
# docs/PERFORMANCE.md ("Load in simulated time"). Takes under a minute.
#
#   bash scripts/load.sh [--tx-ms 12 --read-ms 4 --write-ms 6 --partition-wcu 1000 --partition-rcu 3000 --concurrency 1000 --cold-start-ms 200]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p restock-sim
sim() { ./target/release/restock-sim "$@"; }

echo "Sign-ups on one item, 10 s at each offered rate (the widget sends a 503 once more after Retry-After)"
echo
echo "| offered | shards | double opt-in | accepted | 429 / 503 | other | lost | sent again | p50 ms | p99 ms | attempts per join | conflicts | simulated s | throttled writes / reads | hottest reads/s · writes/s | units read / written | functions (started) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for shards in 1 16; do
  for rate in 100 500 1000 2000; do
    for confirm in true false; do
      sim signups --rate "$rate" --shards "$shards" --confirm "$confirm" "$@"
    done
  done
done
echo
echo "One shard, rising (double opt-in on)"
echo
echo "| offered | shards | double opt-in | accepted | 429 / 503 | other | lost | sent again | p50 ms | p99 ms | attempts per join | conflicts | simulated s | throttled writes / reads | hottest reads/s · writes/s | units read / written | functions (started) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for rate in 20 40 60 80 100; do
  sim signups --rate "$rate" --shards 1 "$@"
done
echo
echo "Clicks on one restock's links (each twice: a mail scanner, then the shopper)"
echo
echo "| clicks | shards | holds | to checkout | 5xx | p50 ms | p99 ms | attempts per click | conflicts | simulated s | throttled writes / reads | hottest reads/s · writes/s | units read / written | functions (started) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for secs in 60 10 1; do
  sim clicks --offers 1000 --clicks 2000 --secs "$secs" "$@"
done
