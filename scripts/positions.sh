#!/usr/bin/env bash
# What a join and a status call cost at queue depths 100, 10,000 and 100,000
# (16 shards): first in memory (the local server's store: the time of each),
# then on the DynamoDB API (moto behind the strict double, started here,
# which counts items read and read units as DynamoDB bills them). Prints one
# table row per depth (crates/store-dynamo/benches/positions.rs), then the
# write units a join costs on a shard after 1,000 and 1,000,000 tickets.
#
#   bash scripts/positions.sh [depth ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 100 10000 100000
cargo bench -q -p restock-store-dynamo --bench positions -- memory "$@"
echo
source scripts/moto.sh
start_moto
cargo bench -q -p restock-store-dynamo --bench positions -- "$@"
echo
cargo bench -q -p restock-store-dynamo --bench positions -- lifetime 1000 1000000
