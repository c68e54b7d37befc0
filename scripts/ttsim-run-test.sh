#!/usr/bin/env bash
# Checks that scripts/ttsim-run.sh, which builds neither Tenstorrent's simulator nor the SFPI
# toolchain (docs/ttsim.md), stops with exit status 1 and names what is missing when the
# simulator, the toolchain or the weights are absent, before it unpacks or builds anything.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# expect_stop MESSAGE VAR=VALUE...: ttsim-run.sh with those variables must exit 1 saying MESSAGE.
expect_stop() {
  local message=$1 out status=0
  shift
  out=$(env "$@" scripts/ttsim-run.sh 2>&1) || status=$?
  if [ "$status" -ne 1 ] || ! grep -qF "ttsim-run: $message" <<<"$out"; then
    echo "ttsim-run-test: expected exit status 1 and 'ttsim-run: $message', got status $status:" >&2
    echo "$out" >&2
    exit 1
  fi
}

expect_stop "no simulator at $scratch/libttsim_bh.so" TTSIM_LIB="$scratch/libttsim_bh.so"
touch "$scratch/libttsim_bh.so"
expect_stop "no SFPI toolchain at $scratch/sfpi" TTSIM_LIB="$scratch/libttsim_bh.so" SFPI_ROOT="$scratch/sfpi"
mkdir -p "$scratch/sfpi/compiler/bin"
printf '#!/bin/sh\nexit 1\n' >"$scratch/sfpi/compiler/bin/riscv-tt-elf-g++"
chmod +x "$scratch/sfpi/compiler/bin/riscv-tt-elf-g++"
expect_stop "no weights at $scratch/none.safetensors" TTSIM_LIB="$scratch/libttsim_bh.so" \
  SFPI_ROOT="$scratch/sfpi" TTSIM_WEIGHTS="$scratch/none.safetensors"
echo "ttsim-run-test: a missing simulator, toolchain or weights file stops ttsim-run.sh by name"
