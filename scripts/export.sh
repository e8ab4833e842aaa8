#!/usr/bin/env bash
# `restock export requests` of 10,000 and 100,000 requests from the in-memory
# store: the time, and the process's peak memory before and after the
# export (one process per size: a peak never goes down).
# crates/cli/benches/export.rs.
#
#   bash scripts/export.sh [count ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 10000 100000
cargo bench -q -p restock-cli --bench export -- "$1"
shift
for n in "$@"; do
  cargo bench -q -p restock-cli --bench export -- "$n" | tail -1
done
