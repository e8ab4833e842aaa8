#!/usr/bin/env bash
# Builds the four Lambda artifacts as `sam build` does: release, arm64
# (Graviton), linked with zig by cargo-lambda, one `bootstrap` per function
# under target/lambda/<function>/. Checks each is an aarch64 executable and
# prints its size.
#
#   python3 -m pip install -r scripts/requirements.txt   # cargo-lambda, zig
#   bash scripts/build-lambda.sh
set -euo pipefail
cd "$(dirname "$0")/.."

functions=(capture detect notify sweep)

if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
  echo "adding the aarch64-unknown-linux-gnu standard library (rustup target add)"
  rustup target add aarch64-unknown-linux-gnu
fi
command -v cargo-lambda >/dev/null || {
  echo "cargo-lambda is missing: python3 -m pip install -r scripts/requirements.txt" >&2
  exit 1
}

start=$(date +%s)
cargo lambda build --release --arm64 $(printf -- '--bin %s ' "${functions[@]}")
took=$(( $(date +%s) - start ))

printf '\n%-8s %10s  %s\n' function bytes artifact
for f in "${functions[@]}"; do
  artifact="target/lambda/$f/bootstrap"
  [ -x "$artifact" ] || { echo "missing $artifact" >&2; exit 1; }
  # ELF e_machine (offset 18, little-endian): 183 is AArch64.
  machine=$(od -An -t u2 -j 18 -N 2 "$artifact" | tr -d ' ')
  [ "$machine" = 183 ] || { echo "$artifact is not an aarch64 executable (e_machine $machine)" >&2; exit 1; }
  printf '%-8s %10s  %s\n' "$f" "$(stat -c %s "$artifact")" "$artifact"
done
echo "built in ${took}s"
