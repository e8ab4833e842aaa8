#!/usr/bin/env bash
# What a wave costs when most of the queue is asleep (quiet hours,
# crates/store-dynamo/benches/quiet.rs): 100,000 waiting by text in memory,
# a restock at 09:00 in New York with most of the line asleep in Sydney,
# then Sydney's morning; each beside the same queue with quiet hours off.
# Then a scaled-down queue on the DynamoDB API (moto behind the strict
# double, started here), for the requests and the read units DynamoDB bills.
#
#   bash scripts/quiet.sh [waiting units] [moto-waiting moto-units]
set -euo pipefail
cd "$(dirname "$0")/.."
waiting=${1:-100000}; units=${2:-1000}
moto_waiting=${3:-4000}; moto_units=${4:-40}

echo "==> in memory: one in 10 awake (the units go to people awake)"
cargo bench -q -p restock-store-dynamo --bench quiet -- memory "$waiting" "$units" 16 10
echo "==> in memory: one in 200 awake (units left over: the wave reads the whole queue, then Sydney's morning)"
cargo bench -q -p restock-store-dynamo --bench quiet -- memory "$waiting" "$units" 16 200

echo
echo "==> DynamoDB API (moto behind the strict double: one request at a time, so scaled down)"
source scripts/moto.sh
start_moto RESTOCK_DYNAMODB_ENDPOINT 0 0
cargo bench -q -p restock-store-dynamo --bench quiet -- dynamodb "$moto_waiting" "$moto_units" 16 10
cargo bench -q -p restock-store-dynamo --bench quiet -- dynamodb "$moto_waiting" "$moto_units" 16 200
