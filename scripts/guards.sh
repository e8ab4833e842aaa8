#!/usr/bin/env bash
# Removes each guard of the DynamoDB store in turn (docs/guards.toml) and runs
# the tests that should need it on the strict doubles: see scripts/guards.py.
#
#   bash scripts/guards.sh                # every guard
#   bash scripts/guards.sh wave.version   # the guards named
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
source scripts/moto.sh
start_moto RESTOCK_DYNAMODB_ENDPOINT 0 0
start_moto RESTOCK_DYNAMODB_CONTENDED_ENDPOINT 0 0 5
# The lag:: and tickets:: tests take the lagging endpoint, as scripts/test.sh runs them.
start_moto RESTOCK_DYNAMODB_LAGGING_ENDPOINT 250 0.02
python3 scripts/guards.py "$@"
