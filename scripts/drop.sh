#!/usr/bin/env bash
# The hyped-drop simulation: 100,000 sign-ups over 16 queue shards, a
# 10,000-unit restock, and 2,000 concurrent clicks on 1,000 offers on the
# in-memory store; the same drop through capture's and detect's routers and
# the real notify passes (every notice sent, paced); then a scaled-down run
# on the DynamoDB API (moto behind the strict double, lagging 250 ms with 2%
# of requests faulted, started here): 1,200 sign-ups, 1,000 units and the
# same 2,000 clicks on 1,000 offers, counting DynamoDB requests and the
# writes to the hottest counter item. Each run checks that exactly the
# oldest sign-ups were offered (or told), oldest first, and one hold per
# offer.
#
#   bash scripts/drop.sh [signups units] [moto-signups moto-units]
set -euo pipefail
cd "$(dirname "$0")/.."
signups=${1:-100000}; units=${2:-10000}
moto_signups=${3:-1200}; moto_units=${4:-1000}

echo "==> in memory, the store's operations called in turn"
cargo bench -q -p restock-store-dynamo --bench drop -- memory "$signups" "$units" 16

echo
echo "==> in memory, through capture's and detect's routers and the real notify passes"
cargo bench -q -p restock-e2e --bench drop -- "$signups" "$units" 16

echo
echo "==> DynamoDB API (moto behind the strict double: one request at a time, so scaled down)"
source scripts/moto.sh
start_moto RESTOCK_DYNAMODB_ENDPOINT 250 0.02
cargo bench -q -p restock-store-dynamo --bench drop -- dynamodb "$moto_signups" "$moto_units" 16
