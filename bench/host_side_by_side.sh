#!/usr/bin/env bash
# The host pre-processing side by side (DESIGN §6): Pillow (bench/host_pillow.py, the port's
# decode + BILINEAR resize + /255) and ours (the `bench_host` example: decode to the R plane,
# Pillow-exact resize, /255) alternate on the same files, so that both see the same load.
#
#   bench/host_side_by_side.sh [ROUNDS]        (default 5 rounds; each: --runs 20 --warmup 3)
#
# Files: tests/fixtures/images/hubble_1600x900.jpg, and made from it by Pillow into a temporary
# folder: a 1920x1080 JPEG (LANCZOS upscale, quality 90, 4:2:0) and a 1600x900 PNG. Prints every
# round, the per-file medians over rounds, and last the sums of the per-file medians:
# `host: Pillow <a> ms, ours <b> ms, ratio <a/b>`.
# Needs `cargo build --release -p superpoint --example bench_host` and the venv of
# bench/README.md (PYTHON=... and CARGO_TARGET_DIR=... override their paths).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
python=${PYTHON:-bench/.venv/bin/python}
bench_host=${CARGO_TARGET_DIR:-target}/release/examples/bench_host
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=tests/fixtures/images/hubble_1600x900.jpg
"$python" - "$src" "$work" <<'PY'
import sys
from PIL import Image
src, out = sys.argv[1], sys.argv[2]
image = Image.open(src).convert("RGB")
image.resize((1920, 1080), Image.LANCZOS).save(f"{out}/hubble_1920x1080.jpg", quality=90)
image.save(f"{out}/hubble_1600x900.png")
PY
files=("$src" "$work/hubble_1920x1080.jpg" "$work/hubble_1600x900.png")
declare -A pillow ours
for i in $(seq "$rounds"); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    # Each program prints `<path>: median <ms> ms (...)` per file.
    while read -r path ms; do
        pillow[$path]+="$ms "
    done < <("$python" bench/host_pillow.py "${files[@]}" | sed 's/: median / /; s/ ms .*//')
    while read -r path ms; do
        ours[$path]+="$ms "
    done < <("$bench_host" "${files[@]}" | sed 's/: median / /; s/ ms .*//')
    line="round $i (load average $load):"
    for f in "${files[@]}"; do
        read -ra p <<<"${pillow[$f]}"
        read -ra o <<<"${ours[$f]}"
        line+=" $(basename "$f") Pillow ${p[-1]} / ours ${o[-1]} ms;"
    done
    echo "$line"
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
a=0 b=0
for f in "${files[@]}"; do
    # shellcheck disable=SC2086 # the lists split on spaces
    p=$(med ${pillow[$f]}) o=$(med ${ours[$f]})
    echo "$(basename "$f"): Pillow $p ms, ours $o ms, ratio $(awk -v a="$p" -v b="$o" 'BEGIN {printf "%.2f", a / b}')"
    a=$(awk -v a="$a" -v p="$p" 'BEGIN {print a + p}') b=$(awk -v b="$b" -v o="$o" 'BEGIN {print b + o}')
done
echo "host: Pillow $a ms, ours $b ms, ratio $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')"
