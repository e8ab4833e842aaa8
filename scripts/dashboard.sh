#!/usr/bin/env bash
# The dashboard's overview and item page against 10,000 and 100,000 people
# waiting for one item (in-memory store, over HTTP): load time and peak
# memory, one process per size. crates/cli/benches/dashboard.rs.
#
#   bash scripts/dashboard.sh [count ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 10000 100000
cargo bench -q -p restock-cli --bench dashboard -- "$1"
shift
for n in "$@"; do
  cargo bench -q -p restock-cli --bench dashboard -- "$n" | tail -1
done
