#!/usr/bin/env bash
# Fetches tt-metal's real device-side kernel headers for the conformance checks (README,
# "Conformance"): takes the ttnn 0.78.0 wheel (scripts/ttnn-wheel.sh downloads it once; the release
# nearest the pinned tt-metal 8b98410e730) and unpacks only the header trees the kernel API reaches into
# .cache/ttnn-0.78.0/tt_metal/. Nothing of tt-metal is committed: .cache is git-ignored.
# Idempotent: a second run reuses the cached wheel and the unpacked tree. Prints the tt_metal root.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.78.0
cache=.cache/ttnn-$version
root=$cache/tt_metal
stamp=$cache/unpacked.stamp
if [ ! -f "$stamp" ]; then
  wheel=$(scripts/ttnn-wheel.sh)
  rm -rf "$root"
  # Only the trees a Blackhole kernel includes: the kernel API and firmware internals, the firmware
  # wrappers that include a kernel (brisck.cc, ncrisck.cc, trisck.cc), the Blackhole
  # LLK and ckernels, and the few host/device shared headers they pull in.
  python3 - "$wheel" "$root" <<'PY' >&2
import sys, zipfile, pathlib
wheel, root = sys.argv[1], pathlib.Path(sys.argv[2])
keep = ("hw/inc/", "hw/ckernels/blackhole/", "tt-llk/tt_llk_blackhole/", "tt-llk/common/",
        "hostdevcommon/", "api/tt-metalium/", "tools/profiler/", "fabric/hw/inc/",
        "hw/firmware/src/tt-1xx/")
count = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        name = info.filename
        if not name.startswith("ttnn/tt_metal/") or info.is_dir():
            continue
        rel = name[len("ttnn/tt_metal/"):]
        if rel.startswith(keep):
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(info))
            count += 1
if count == 0:
    sys.exit(f"{wheel} holds no ttnn/tt_metal headers: is it a ttnn wheel?")
print(f"unpacked {count} tt-metal header files into {root}")
PY
  touch "$stamp"
fi
echo "$PWD/$root"
