#!/usr/bin/env bash
# The dashboard's overview and item page against 10,000 and 100,000 people
# waiting for one item (in-memory store, over HTTP): load time and peak
# memory, one process per size. crates/cli/benches/dashboard.rs.
#
#   bash scripts/dashboard.sh [count ...]
#   bash scripts/dashboard.sh dynamodb [count ...]
#
# With `dynamodb`, the same pages against a fresh table on moto behind the
# strict double (default 10,000 waiting): items read and read units per load
# as DynamoDB bills them. moto answers a large Query slowly (the overview
# reads the item's queue), so its times say little; the units are the figure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = dynamodb ]; then
  shift
  [ $# -gt 0 ] || set -- 10000
  source scripts/moto.sh
  start_moto RESTOCK_DYNAMODB_ENDPOINT 0 0
  cargo bench -q -p restock-cli --bench dashboard -- dynamodb "$@"
  exit
fi
[ $# -gt 0 ] || set -- 10000 100000
cargo bench -q -p restock-cli --bench dashboard -- "$1"
shift
for n in "$@"; do
  cargo bench -q -p restock-cli --bench dashboard -- "$n" | tail -1
done
