#!/usr/bin/env bash
# Every test of the workspace, plus the style gates CI enforces. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-test.sh
cargo fmt --all -- --check
cargo test --workspace --locked --exclude conformance
# Conformance with tt-metal's real kernel headers (README, "Conformance"); prints its figures.
scripts/conformance-headers.sh >/dev/null
cargo test --locked -p conformance --no-fail-fast -- --nocapture
# The `metal` backend compiled and linked against tt-metal 0.78 (tt-runtime/README.md, "Real hardware").
scripts/metal-check.sh
# scripts/ttsim-run.sh (Tenstorrent's simulator; docs/ttsim.md) stops by name without its artifacts.
scripts/ttsim-run-test.sh
cargo run --locked -p kernel-gen -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
