#!/usr/bin/env bash
# Runs the CPU backend benchmark and the ONNX Runtime baseline alternately (A/B/A/B), so that
# both see the same machine load, and prints every round and the ratio of the medians.
#
#   bench/side_by_side.sh [ROUNDS] [THREADS]      (defaults: 5 rounds, all cores)
#
# Needs `cargo build --release -p superpoint --example bench_cpu` and the venv of bench/README.md
# (PYTHON=path/to/python overrides bench/.venv/bin/python). Each side: --runs 5 --warmup 2.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
threads=${2:-$(nproc)}
bench_cpu=${CARGO_TARGET_DIR:-target}/release/examples/bench_cpu
python=${PYTHON:-bench/.venv/bin/python}
ours=() theirs=()
# The "median X ms/frame" figure of a benchmark's summary line.
median_of() { sed -n 's/.*median \([0-9.]*\) ms\/frame.*/\1/p' | head -n 1; }
for i in $(seq "$rounds"); do
    a=$("$bench_cpu" --runs 5 --warmup 2 --threads "$threads" | median_of)
    b=$("$python" bench/onnx_baseline.py --runs 5 --warmup 2 --threads "$threads" | median_of)
    echo "round $i: CpuKernels $a ms, onnxruntime $b ms (load average $(cut -d' ' -f1 /proc/loadavg))"
    ours+=("$a") theirs+=("$b")
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
a=$(med "${ours[@]}") b=$(med "${theirs[@]}")
echo "medians over $rounds rounds, $threads threads: CpuKernels $a ms, onnxruntime $b ms," \
    "onnxruntime / CpuKernels = $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b / a}')"
