#!/usr/bin/env bash
# Served requests side by side (DESIGN §6): `superpoint serve` (CPU backend) and the plain Python
# server of bench/python_server.py (Pillow, ONNX Runtime, NumPy) run at once on this machine;
# bench/serve_client.py posts the same JPEG to their /predict_raw alternately, one request at a
# time, and prints each request and the medians. Both servers are stopped on exit.
#
#   bench/serve_side_by_side.sh [REQUESTS]     (default 20 per server, after 3 warm-up each)
#
# IMAGE=... picks another image (default tests/fixtures/images/hubble_1600x900.jpg). Needs
# `cargo build --release -p superpoint` and the venv of bench/README.md (PYTHON=... and
# CARGO_TARGET_DIR=... override their paths). Last line:
# `serve: python <a> ms, ours <b> ms, ratio <a/b>`.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-20}
python=${PYTHON:-bench/.venv/bin/python}
superpoint=${CARGO_TARGET_DIR:-target}/release/superpoint
weights=tests/fixtures/weights/random-seed1.safetensors
image=${IMAGE:-tests/fixtures/images/hubble_1600x900.jpg}
ours_port=${OURS_PORT:-20401} python_port=${PYTHON_PORT:-20402}
logs=$(mktemp -d)
pids=()
stop() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$logs"
}
trap stop EXIT
"$superpoint" serve --weights "$weights" --host 127.0.0.1 --port "$ours_port" >"$logs/ours.log" 2>&1 &
pids+=($!)
"$python" bench/python_server.py --weights "$weights" --port "$python_port" >"$logs/python.log" 2>&1 &
pids+=($!)
for port in "$ours_port" "$python_port"; do
    for _ in $(seq 120); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null && continue 2
        sleep 0.5
    done
    echo "the server on port $port did not start:" >&2
    cat "$logs"/*.log >&2
    exit 1
done
"$python" bench/serve_client.py "$image" "http://127.0.0.1:$python_port" \
    "http://127.0.0.1:$ours_port" --requests "$requests"
