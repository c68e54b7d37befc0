#!/usr/bin/env bash
# Every test of the workspace, plus the style gates CI enforces. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-test.sh
cargo fmt --all -- --check
cargo test --workspace --locked --exclude conformance
# The CPU kernels' tests (cpu_vs_reference, the unit tests) check every instruction-set level this
# CPU has in one run, reusing one reference evaluation; the library's end-to-end path takes its
# level from SUPERPOINT_CPU_ISA, so the API fixtures and the kernel checks run again forced to each
# lower level (README "Performance"; ~20 s each: the fixture cases' reference runs are skipped).
cpu_levels=(scalar)
if grep -qw avx512f /proc/cpuinfo && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  cpu_levels+=(avx2)
fi
for isa in "${cpu_levels[@]}"; do
  # Selected as the run above selects (the workspace), so its build is reused: `-p superpoint`
  # alone would resolve features differently and rebuild part of the dependency tree.
  SUPERPOINT_CPU_ISA=$isa cargo test --workspace --exclude conformance --locked \
    --test api_fixtures --test cpu_vs_reference -- --skip every_fixture_case
done
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
