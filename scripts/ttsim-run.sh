#!/usr/bin/env bash
# Runs our generated programs on Tenstorrent's simulator (ttsim) through the real tt-metal 0.78
# runtime, with our `metal` backend, and compares each output byte for byte with the emulator's
# for the same inputs (docs/ttsim.md). It builds neither ttsim nor the SFPI toolchain; both must
# already be in the git-ignored cache, else it stops and names what is missing:
#   TTSIM_LIB  the Blackhole simulator (default .cache/ttsim/libttsim_bh.so)
#   SFPI_ROOT  the SFPI RISC-V toolchain tt-metal's JIT compiles kernels with, holding
#              compiler/bin/riscv-tt-elf-g++ (default .cache/sfpi)
# Steps:
#   1. a tt-metal runtime root in .cache/ttsim-root from the ttnn 0.78.0 wheel: tt_metal/ (device
#      tree, pre-compiled firmware, SoC and core descriptors) and runtime/ (linker scripts and
#      libraries), with runtime/sfpi pointing at SFPI_ROOT;
#   2. the simulator in .cache/ttsim-root/sim beside the SoC descriptor ttsim reads there
#      (soc_descriptor.yaml, tt-metal's blackhole_140_arch.yaml);
#   3. scripts/metal-check.sh: the metal backend built against the wheel (target/metal);
#   4. the example open_device on the simulator;
#   5. the example dump_steps (superpoint/examples) built for the emulator (target/) and for
#      tt-metal (target/metal), each run on the same weights and input plane up to the first conv
#      step (after the resize), up to the NMS node, and, with TTSIM_FULL=1, through the whole
#      640x480 program; every buffer the two runs leave is compared byte for byte.
# TTSIM_WEIGHTS picks the weights (default tests/fixtures/weights/random-seed1.safetensors).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
sim_lib=${TTSIM_LIB:-$repo/.cache/ttsim/libttsim_bh.so}
sfpi=${SFPI_ROOT:-$repo/.cache/sfpi}
weights=${TTSIM_WEIGHTS:-$repo/tests/fixtures/weights/random-seed1.safetensors}

fail() {
  echo "ttsim-run: $*" >&2
  exit 1
}
[ -f "$sim_lib" ] ||
  fail "no simulator at $sim_lib: build libttsim_bh.so from tenstorrent/ttsim (its make.py, target src/_out/release_bh/libttsim.so) and put it there, or set TTSIM_LIB (docs/ttsim.md, 'Steps and times')"
[ -x "$sfpi/compiler/bin/riscv-tt-elf-g++" ] ||
  fail "no SFPI toolchain at $sfpi (compiler/bin/riscv-tt-elf-g++ is missing): tt-metal compiles every kernel with it; build tenstorrent/sfpi with its sfpi-gcc, sfpi-binutils and newlib into $sfpi, or set SFPI_ROOT (docs/ttsim.md says why it could not be built here)"
[ -f "$weights" ] || fail "no weights at $weights (set TTSIM_WEIGHTS)"
weights=$(realpath "$weights")

# 1. The runtime root, unpacked once from the wheel.
root=$repo/.cache/ttsim-root
if [ ! -f "$root/unpacked.stamp" ]; then
  wheel=$(scripts/ttnn-wheel.sh)
  rm -rf "$root"
  python3 - "$wheel" "$root" <<'PY'
import pathlib, sys, zipfile
wheel, root = sys.argv[1], pathlib.Path(sys.argv[2])
count = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename
        if info.is_dir() or not name.startswith(("ttnn/tt_metal/", "ttnn/runtime/")):
            continue
        dest = root / name[len("ttnn/"):]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(z.read(info))
        count += 1
if not (root / "tt_metal/soc_descriptors/blackhole_140_arch.yaml").is_file():
    sys.exit(f"{wheel} has no tt_metal/soc_descriptors/blackhole_140_arch.yaml")
print(f"ttsim-run: unpacked {count} files of the wheel into {root}")
PY
  touch "$root/unpacked.stamp"
fi
ln -sfn "$sfpi" "$root/runtime/sfpi"

# 2. The simulator beside its SoC descriptor.
mkdir -p "$root/sim"
cp "$sim_lib" "$root/sim/libttsim_bh.so"
cp "$root/tt_metal/soc_descriptors/blackhole_140_arch.yaml" "$root/sim/soc_descriptor.yaml"
# tt-metal writes its logs (generated/) into the working directory: run it in the cache.
sim_env=(
  TT_METAL_RUNTIME_ROOT="$root"
  TT_METAL_SIMULATOR="$root/sim/libttsim_bh.so"
  TT_METAL_SLOW_DISPATCH_MODE=1
  TT_METAL_DISABLE_SFPLOADMACRO=1
)

# 3. The metal backend, built and checked against the wheel (without the simulator: the check
# expects tt-metal to find no device).
scripts/metal-check.sh

# 4. Open the simulated device (tt-metal JIT-builds the firmware for it with the SFPI compiler).
(cd "$root" && env "${sim_env[@]}" "$repo/target/metal/debug/examples/open_device" tensix) ||
  fail "tt-metal could not open the simulated device (its log is above)"

# 5. The same steps on the emulator and on ttsim, compared buffer by buffer.
headers=$repo/third_party/tt-metal-host-headers
metal_env=(
  CARGO_TARGET_DIR="$repo/target/metal"
  TT_METAL_HOME="$headers/tt-metal"
  TT_METAL_LIB_DIR="$repo/.cache/ttnn-0.78.0/lib"
  TTR_METAL_INCLUDE_DIRS="$headers/fmt/include:$headers/spdlog/include:$headers/tt-logger/include:$headers/enchantum/enchantum/include:$headers/nlohmann_json/include"
)
cargo build --locked -p superpoint --example dump_steps
env "${metal_env[@]}" cargo build --locked -p superpoint --features tt-runtime/metal --example dump_steps
emu_bin=$repo/target/debug/examples/dump_steps
metal_bin=$repo/target/metal/debug/examples/dump_steps
nodes=$("$emu_bin" --list)
conv=$(grep -m1 '^conv' <<<"$nodes" || fail "the program has no conv node; its nodes: $(tr '\n' ' ' <<<"$nodes")")
nms=$(grep -m1 -x 'nms' <<<"$nodes" || fail "the program has no node 'nms'; its nodes: $(tr '\n' ' ' <<<"$nodes")")
runs=("conv:$conv" "nms:$nms")
[ "${TTSIM_FULL:-0}" = 1 ] && runs+=("full:")
out=$repo/.cache/ttsim-out
echo "program | buffers | bytes compared | bytes equal"
for run in "${runs[@]}"; do
  label=${run%%:*}
  until=${run#*:}
  args=("$weights")
  for side in emu ttsim; do
    rm -rf "$out/$label/$side"
  done
  until_args=()
  [ -n "$until" ] && until_args=(--until "$until")
  "$emu_bin" "${args[@]}" "$out/$label/emu" "${until_args[@]}" >/dev/null
  start=$(date +%s)
  (cd "$root" && env "${sim_env[@]}" "$metal_bin" "${args[@]}" "$out/$label/ttsim" "${until_args[@]}") >"$out/$label.log" 2>&1 ||
    fail "the $label run on ttsim failed after $(($(date +%s) - start)) s; see $out/$label.log"
  python3 - "$out/$label/emu" "$out/$label/ttsim" "$label ($(($(date +%s) - start)) s on ttsim)" <<'PY'
import pathlib, sys
emu, sim, label = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
compared = equal = 0
files = sorted(p.name for p in emu.glob("*.bin"))
for name in files:
    a, b = (emu / name).read_bytes(), (sim / name).read_bytes()
    same = 0
    for i in range(0, min(len(a), len(b)), 4096):
        x, y = a[i:i + 4096], b[i:i + 4096]
        same += len(x) if x == y else sum(p == q for p, q in zip(x, y))
    compared += max(len(a), len(b))
    equal += same
    if same != max(len(a), len(b)):
        print(f"  {name}: {same} of {max(len(a), len(b))} bytes equal", file=sys.stderr)
print(f"{label} | {len(files)} | {compared} | {equal}")
PY
done
