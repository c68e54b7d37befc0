#!/usr/bin/env bash
# Builds the `metal` backend of tt-runtime against tt-metal 0.78 and checks it, without a card:
#   1. the libraries of the ttnn 0.78.0 wheel (libtt_metal.so and what it links; the wheel comes
#      from scripts/ttnn-wheel.sh) are unpacked once into .cache/ttnn-0.78.0/lib;
#   2. patches/tt-metal-eth-dispatch.patch applies (git apply --check) to the wheel's 0.78
#      dev_mem_map.h (its other file is not in the wheel; see patches/README.md);
#   3. tt-runtime is compiled with --features metal (target dir target/metal) on the host headers
#      in third_party/tt-metal-host-headers;
#   4. the symbol check: every symbol the compiled backend leaves undefined that the C and C++
#      runtime libraries do not define must be exported by the wheel's libtt_metal.so under the same
#      mangled name (so with the same signature), else each missing one is named and the check
#      fails; a probe object that calls a function absent from the library must fail it (the
#      check's own test);
#   4b. the device-lost classifier takes the library's hang messages (checked present word for word)
#      for a lost device and its other failures not (tt-runtime/tests/metal/device_lost.cpp);
#   5. the example open_device links, runs, and must end with the typed "no device" error
#      (tt-metal's "No chips detected"), not a crash.
# The last line is `metal: <N> tt-metal symbols resolved in libtt_metal.so 0.78.0`.
# A second run reuses the wheel, the unpacked libraries and target/metal.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.78.0
cache=.cache/ttnn-$version
lib=$PWD/$cache/lib
headers=$PWD/third_party/tt-metal-host-headers
export CARGO_TARGET_DIR=$PWD/target/metal

# 1. The wheel's libraries: ttnn/build/lib and the libraries auditwheel bundled (ttnn.libs), side by
# side, which is what their $ORIGIN rpaths expect.
if [ ! -f "$lib/unpacked.stamp" ]; then
  wheel=$(scripts/ttnn-wheel.sh)
  rm -rf "$lib"
  python3 - "$wheel" "$lib" <<'PY'
import os, pathlib, sys, zipfile
wheel, lib = sys.argv[1], pathlib.Path(sys.argv[2])
lib.mkdir(parents=True)
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.is_dir() or not info.filename.startswith(("ttnn/build/lib/", "ttnn.libs/")):
            continue
        dest = lib / os.path.basename(info.filename)
        dest.write_bytes(z.read(info))
        dest.chmod(0o755)
if not (lib / "libtt_metal.so").is_file():
    sys.exit(f"{wheel} has no ttnn/build/lib/libtt_metal.so")
PY
  touch "$lib/unpacked.stamp"
fi
# tt-metal reads its runtime root (a folder holding tt_metal/) as soon as a device is opened; the
# device-side tree that scripts/conformance-headers.sh unpacks is one.
runtime_root=$(dirname "$(scripts/conformance-headers.sh)")

# 2. The ETH-dispatch patch against the 0.78 file the wheel has, in a scratch tree outside this
# repository (inside one, git apply would resolve paths against the repository's root).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mem_map=tt_metal/hw/inc/internal/tt-1xx/blackhole/dev_mem_map.h
mkdir -p "$scratch/patch/$(dirname "$mem_map")"
cp "$runtime_root/$mem_map" "$scratch/patch/$mem_map"
patch_file=$PWD/patches/tt-metal-eth-dispatch.patch
if ! applied=$(cd "$scratch/patch" && git apply --check -v --include="$mem_map" "$patch_file" 2>&1) ||
  ! grep -q "^Checking patch $mem_map" <<<"$applied"; then
  echo "metal-check: patches/tt-metal-eth-dispatch.patch does not apply to the 0.78 $mem_map:" >&2
  echo "$applied" >&2
  exit 1
fi
echo "metal-check: patches/tt-metal-eth-dispatch.patch applies to the 0.78 $mem_map"

# 3. The backend, compiled on the committed header tree and the wheel's libraries.
export TT_METAL_HOME=$headers/tt-metal
export TT_METAL_LIB_DIR=$lib
export TTR_METAL_INCLUDE_DIRS=$headers/fmt/include:$headers/spdlog/include:$headers/tt-logger/include:$headers/enchantum/enchantum/include:$headers/nlohmann_json/include
out_dir=$(cargo build --locked -p tt-runtime --features metal --lib --message-format=json-render-diagnostics |
  python3 -c '
import json, sys
dirs = [m["out_dir"] for m in map(json.loads, sys.stdin)
        if m.get("reason") == "build-script-executed" and "tt-runtime" in m["package_id"]]
print(dirs[-1] if dirs else "")')
backend=$out_dir/libttr_metal.a
if [ ! -f "$backend" ]; then
  echo "metal-check: the build left no libttr_metal.a (out dir: '$out_dir')" >&2
  exit 1
fi

# 4. The symbol check. Symbols the C and C++ runtime libraries define, the linker-made ones, and
# those defined inside the checked object itself are not tt-metal's.
defined_in() {
  for so in "$@"; do nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//'; done | sort -u
}
system_symbols=$scratch/system.txt
defined_in "$(g++ -print-file-name=libstdc++.so.6)" "$(gcc -print-file-name=libc.so.6)" \
  "$(gcc -print-file-name=libm.so.6)" "$(gcc -print-file-name=libgcc_s.so.1)" \
  "$(gcc -print-file-name=ld-linux-x86-64.so.2)" >"$system_symbols"
printf '%s\n' _GLOBAL_OFFSET_TABLE_ __dso_handle >>"$system_symbols"
sort -u -o "$system_symbols" "$system_symbols"
library_symbols=$scratch/tt_metal.txt
defined_in "$lib/libtt_metal.so" >"$library_symbols"
other_symbols=$scratch/other.txt
defined_in "$lib"/libtt_stl.so "$lib"/libtt-umd.so.0 >"$other_symbols"

# check_symbols OBJECT: prints each symbol OBJECT needs from tt-metal that libtt_metal.so does
# not export and fails, or prints how many it resolves.
check_symbols() {
  local needed=$scratch/needed.txt missing
  comm -23 <(nm -u "$1" | awk '$1 == "U" {print $2}' | sort -u) \
    <(nm --defined-only "$1" | awk '{print $NF}' | sort -u) |
    comm -23 - "$system_symbols" >"$needed"
  missing=$(comm -23 "$needed" "$library_symbols")
  if [ -n "$missing" ]; then
    echo "metal-check: $(wc -l <<<"$missing") symbol(s) that $(basename "$1") calls are not exported by libtt_metal.so $version:" >&2
    while read -r sym; do
      where="absent from the wheel's libraries"
      grep -qxF "$sym" "$other_symbols" && where="exported only by libtt_stl.so or libtt-umd.so"
      echo "  $(c++filt "$sym")  [$sym] ($where)" >&2
    done <<<"$missing"
    return 1
  fi
  local resolved
  resolved=$(comm -12 "$needed" "$library_symbols" | wc -l)
  if [ "$resolved" -eq 0 ]; then
    echo "metal-check: $(basename "$1") calls no tt-metal function: not the backend's object?" >&2
    return 1
  fi
  echo "$resolved"
}

# The check's own test: a call to a function libtt_metal.so does not have must fail it, by name.
cat >"$scratch/probe.cpp" <<'CPP'
namespace tt::tt_metal {
void CreateProgram(int ttr_metal_check_probe);
}
void ttr_metal_check_probe() { tt::tt_metal::CreateProgram(1); }
CPP
g++ -c "$scratch/probe.cpp" -o "$scratch/probe.o"
if probe_out=$(check_symbols "$scratch/probe.o" 2>&1) ||
  ! grep -qF "tt::tt_metal::CreateProgram(int)" <<<"$probe_out"; then
  echo "metal-check: the symbol check did not catch a call to tt::tt_metal::CreateProgram(int), which" >&2
  echo "libtt_metal.so does not export; its output was:" >&2
  echo "$probe_out" >&2
  exit 1
fi
echo "metal-check: the symbol check names a call absent from libtt_metal.so (probe: tt::tt_metal::CreateProgram(int))"

resolved=$(check_symbols "$backend")

# 4b. The device-lost classifier (tt-runtime/src/metal/device_lost.hpp) on the library's own texts:
# the hang messages below (each must be in libtt_metal.so word for word, as a format string) must
# be taken for a lost device once formatted, and the library's other failures must not.
library_strings=$scratch/strings.txt
strings "$lib/libtt_metal.so" >"$library_strings"
hang_formats=(
  "TIMEOUT: device timeout, potential hang detected, the device is unrecoverable"
  "TIMEOUT: device timeout in fetch queue wait, potential hang detected"
  "Device {}: Timeout ({} ms) waiting for physical cores to finish: {}."
)
other_formats=(
  "Fabric Router Sync: Timeout after {} ms on Device {}. Expected status 0x{:08x} ({}) at edm_status_address=0x{:08x}. Per-router status:"
  "Timeout waiting for host to acknowledge data over D2H socket. Bytes sent: {}, Bytes acknowledged: {}. Barrier was potentially issued on host before all required reads were completed."
)
for text in "${hang_formats[@]}" "${other_formats[@]}"; do
  if ! grep -qxF "$text" "$library_strings"; then
    echo "metal-check: libtt_metal.so $version no longer holds \"$text\": update device_lost.hpp and this list" >&2
    exit 1
  fi
done
# tt-metal's {} filled in as a run would.
formatted() { sed -e 's/{:08x}/0000beef/g' -e 's/{}/0/' -e 's/{}/30000/' -e 's/{}/14-3, 14-2/' -e 's/{}/7/g' <<<"$1"; }
args=()
for text in "${hang_formats[@]}"; do args+=("hang:$(formatted "$text")"); done
for text in "${other_formats[@]}"; do args+=("other:$(formatted "$text")"); done
args+=("other:No chips detected in the cluster"
  "other:Out of Memory: Not enough space to allocate 1048576 B DRAM buffer across 8 banks")
g++ -std=c++17 -Wall -Werror tt-runtime/tests/metal/device_lost.cpp -o "$scratch/device_lost"
"$scratch/device_lost" "${args[@]}"
echo "metal-check: the device-lost check takes libtt_metal.so's ${#hang_formats[@]} hang messages for a lost device, and not its other failures"

# 5. An example that opens a device: it links and runs, and without a card it must report the
# typed "no device" error (exit status 2), not crash.
cargo build --locked -p tt-runtime --features metal --example open_device
status=0
run_out=$(TT_METAL_RUNTIME_ROOT=$runtime_root "$CARGO_TARGET_DIR/debug/examples/open_device" 2>&1) || status=$?
if [ "$status" -ne 2 ] || ! grep -q "open_device: no device: .*No chips detected" <<<"$run_out"; then
  echo "metal-check: open_device exited with status $status; expected 2 and tt-metal's \"No chips detected\" as a typed no-device error:" >&2
  echo "$run_out" >&2
  exit 1
fi
echo "metal-check: open_device without a card: $(grep -m1 -o 'no device: no Tenstorrent device found[^;]*' <<<"$run_out")"
echo "metal: $resolved tt-metal symbols resolved in libtt_metal.so $version"
