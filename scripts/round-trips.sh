#!/usr/bin/env bash
# Prints DynamoDB requests per operation (measured against moto) as a table.
# Needs RESTOCK_DYNAMODB_ENDPOINT, or starts moto the way scripts/test.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/moto.sh
start_moto
cargo test -q -p restock-store-dynamo --test store round_trips -- --nocapture 2>&1 | grep -E '^\|'
