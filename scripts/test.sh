#!/usr/bin/env bash
# Every test of the workspace, plus the style gates CI enforces. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-test.sh
cargo fmt --all -- --check
cargo test --workspace --locked --exclude conformance
# The Python package (python/, README "Python") in a virtual environment kept in .cache/: built in
# Cargo's dev profile so that it links the library `cargo test` just compiled instead of compiling
# it again in release, then its pytest suite (which also runs the CLI that build left).
venv=.cache/python-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r python/tests/requirements.txt
PATH="$PWD/$venv/bin:$PATH" MATURIN_PEP517_ARGS="--profile dev --locked" "$venv/bin/pip" install --quiet \
  --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./python
SUPERPOINT_CLI=target/debug/superpoint "$venv/bin/python" -m pytest -q python/tests
# Conformance with tt-metal's real kernel headers (README, "Conformance"); prints its figures.
scripts/conformance-headers.sh >/dev/null
cargo test --locked -p conformance --no-fail-fast -- --nocapture
# The `metal` backend compiled and linked against tt-metal 0.78 (tt-runtime/README.md, "Real hardware").
scripts/metal-check.sh
# scripts/ttsim-run.sh (Tenstorrent's simulator; docs/ttsim.md) stops by name without its artifacts.
scripts/ttsim-run-test.sh
cargo run --locked -p kernel-gen -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
