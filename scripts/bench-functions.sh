#!/usr/bin/env bash
# Builds the four functions in release mode and prints their cold-start init,
# a 1,000-notice batch's peak RSS, and their stripped sizes.
# Uses RESTOCK_DYNAMODB_ENDPOINT, or starts moto the way scripts/test.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p restock-capture -p restock-detect -p restock-notify -p restock-sweep
source scripts/moto.sh
start_moto
cargo bench -q -p restock-e2e --bench functions
