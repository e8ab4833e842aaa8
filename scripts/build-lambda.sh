#!/usr/bin/env bash
# Builds the four Lambda artifacts as `sam build` does: release, arm64
# (Graviton), linked with zig by cargo-lambda, one `bootstrap` per function
# under target/lambda/<function>/. Checks each is an aarch64 executable and
# prints its size.
#
#   (cargo-lambda and zig: scripts/test.sh installs them into .venv/)
#   bash scripts/build-lambda.sh
set -euo pipefail
cd "$(dirname "$0")/.."

functions=(capture detect notify sweep)

arch=--arm64 machine_expected=183 arch_name=aarch64
if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
  echo "adding the aarch64-unknown-linux-gnu standard library (rustup target add)"
  if ! timeout 600 rustup target add aarch64-unknown-linux-gnu; then
    # No fallback: an x86_64 artifact is not what Lambda runs on arm64, and
    # a check that passes without the arm64 build would say nothing.
    echo "the aarch64 standard library could not be installed (rustup target add aarch64-unknown-linux-gnu): no arm64 build" >&2
    exit 1
  fi
fi
[ -x .venv/bin/cargo-lambda ] && export PATH="$PWD/.venv/bin:$PATH"
command -v cargo-lambda >/dev/null || {
  echo "cargo-lambda is missing: run  bash scripts/test.sh  once (it installs it into .venv/)" >&2
  exit 1
}

start=$(date +%s)
cargo lambda build --release "$arch" $(printf -- '--bin %s ' "${functions[@]}")
took=$(( $(date +%s) - start ))

printf '\n%-8s %10s  %s\n' function bytes artifact
for f in "${functions[@]}"; do
  artifact="target/lambda/$f/bootstrap"
  [ -x "$artifact" ] || { echo "missing $artifact" >&2; exit 1; }
  # ELF e_machine (offset 18, little-endian): 183 is AArch64, 62 x86-64.
  machine=$(od -An -t u2 -j 18 -N 2 "$artifact" | tr -d ' ')
  [ "$machine" = "$machine_expected" ] || { echo "$artifact is not an $arch_name executable (e_machine $machine)" >&2; exit 1; }
  printf '%-8s %10s  %s\n' "$f" "$(stat -c %s "$artifact")" "$artifact"
done
echo "built $arch_name in ${took}s"
