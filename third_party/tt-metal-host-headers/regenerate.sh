#!/usr/bin/env bash
# Regenerates this folder: the tt-metal host API headers that tt-runtime's `metal` backend
# (tt-runtime/src/metal/*.cpp) includes, and every header they reach, trimmed to the transitive
# include closure of the backend's sources.
#
# Usage: third_party/tt-metal-host-headers/regenerate.sh PART=GIT_DIR ...
#   with one PART=GIT_DIR for each part below (a clone or bare mirror of the repository named in
#   the table that holds the commit named there), e.g.
#   tt-metal=~/src/tt-metal/.git tt-umd=~/src/tt-umd/.git fmt=... spdlog=... tt-logger=...
#   enchantum=... nlohmann_json=...
#
# What it does: exports each part's commit (git archive) into a scratch tree; lays the headers the
# ttnn 0.78.0 wheel carries (scripts/ttnn-wheel.sh; these are the pinned release's own) over the
# tt-metal part; asks g++ for the include closure (-M) of the backend's sources with the flags
# tt-runtime/build.rs uses; replaces this folder's parts with exactly the files of that closure
# plus each part's licence; writes PROVENANCE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

# part | repository | commit | what tt-metal at the base commit asks for | paths to export |
# include roots (relative to the part) | licence files
parts=(
  "tt-metal|tenstorrent/tt-metal|622c6fb9c08b88e8fe05eb8a8194974c05fff618|-|tt_metal/api tt_metal/hostdevcommon/api tt_stl LICENSE NOTICE|tt_metal/api tt_metal/hostdevcommon/api tt_stl tt_metal|LICENSE NOTICE"
  "tt-umd|tenstorrent/tt-umd|44455fa126dc52460bad107e491103d7cd4caf81|the submodule commit at the base commit|device/api LICENSE|device/api|LICENSE"
  "fmt|fmtlib/fmt|123913715afeb8a437e6388b4473fcc4753e1c9a|11.1.4 (this commit)|include LICENSE|include|LICENSE"
  "spdlog|gabime/spdlog|48bcf39a661a13be22666ac64db8a7f886f2637e|1.15.2 (this commit)|include LICENSE|include|LICENSE"
  "tt-logger|tenstorrent/tt-logger|70c11b92fe3a5c543860a09c7dd97c6d1c5a5c44|1.1.8 (this commit is v1.1.5, the newest obtainable)|include LICENSE|include|LICENSE"
  "enchantum|ZXShady/enchantum|8ca5b0eb7e7ebe0252e5bc6915083f1dd1b8294e|this commit|enchantum/include LICENSE|enchantum/include|LICENSE"
  "nlohmann_json|nlohmann/json|9cca280a4d0ccf0c08f47a99aa71d1b0e52f8d03|v3.11.3 (this commit)|include LICENSE.MIT|include|LICENSE.MIT"
)
# Where each part sits in this folder (the UMD submodule sits where tt-metal has it).
dest_of() {
  case "$1" in
    tt-umd) echo "tt-metal/tt_metal/third_party/umd" ;;
    *) echo "$1" ;;
  esac
}

declare -A git_dir=()
for arg in "$@"; do
  git_dir[${arg%%=*}]=${arg#*=}
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
includes=()
for row in "${parts[@]}"; do
  IFS='|' read -r part _ commit _ paths roots _ <<<"$row"
  dir=${git_dir[$part]:-}
  if [ -z "$dir" ]; then
    echo "regenerate: no git directory given for $part (pass $part=GIT_DIR)" >&2
    exit 2
  fi
  dest=$scratch/$(dest_of "$part")
  mkdir -p "$dest"
  # shellcheck disable=SC2086
  git --git-dir="$dir" archive "$commit" $paths | tar -x -C "$dest"
  for r in $roots; do includes+=("-I$dest/$r"); done
done

# The pinned release's own copies of the host headers the wheel carries.
wheel=$("$repo/scripts/ttnn-wheel.sh")
overlaid=$(python3 - "$wheel" "$scratch/tt-metal" <<'PY'
import pathlib, sys, zipfile
wheel, root = sys.argv[1], pathlib.Path(sys.argv[2])
prefix = "ttnn/tt_metal/"
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        rel = info.filename[len(prefix):]
        if info.filename.startswith(prefix) and not info.is_dir() and \
                rel.startswith(("api/tt-metalium/", "hostdevcommon/api/")):
            dest = root / "tt_metal" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(info))
            print("tt_metal/" + rel)
PY
)

# The closure, with the defines tt-runtime/build.rs passes.
closure=$(g++ -std=c++20 -DFMT_HEADER_ONLY -DSPDLOG_FMT_EXTERNAL -I"$repo/tt-runtime/include" "${includes[@]}" \
  -M "$repo"/tt-runtime/src/metal/*.cpp | tr ' \\' '\n\n' | grep "^$scratch/" | xargs realpath -m | sort -u)

for row in "${parts[@]}"; do
  IFS='|' read -r part _ _ _ _ _ _ <<<"$row"
  [ "$part" = tt-umd ] || rm -rf "${here:?}/$(dest_of "$part")"
done
count=0
while read -r f; do
  rel=${f#"$scratch"/}
  mkdir -p "$here/$(dirname "$rel")"
  cp "$f" "$here/$rel"
  count=$((count + 1))
done <<<"$closure"
for row in "${parts[@]}"; do
  IFS='|' read -r part _ _ _ _ _ licences <<<"$row"
  for l in $licences; do cp "$scratch/$(dest_of "$part")/$l" "$here/$(dest_of "$part")/$l"; done
done

{
  cat <<'TXT'
Provenance of third_party/tt-metal-host-headers (written by regenerate.sh; do not edit by hand)

The tt-metal host API headers that tt-runtime's `metal` backend includes, and the headers they
reach, trimmed to the include closure of tt-runtime/src/metal/*.cpp. Only headers: nothing here
is compiled into a library, and no tt-metal source file is included.

Pinned tt-metal: 8b98410e730 (v0.78.0-dev20260820). No tree at the pin could be obtained, so the
tt-metal part is the newest complete tree that could: upstream commit 622c6fb9c08 (2026-06-23),
the main branch of the public fork nyoshifujiTT/tt-metal, whose history is upstream's up to that
commit. Headers the ttnn 0.78.0 wheel ships (the pinned release's own copies) replace that tree's.
The judge of the difference is scripts/metal-check.sh: every tt-metal symbol the backend calls
must be exported, with the same mangled signature, by the wheel's libtt_metal.so.

part | repository | commit | what tt-metal at the base commit asks for | licence file
TXT
  for row in "${parts[@]}"; do
    IFS='|' read -r part repository commit wants _ _ licences <<<"$row"
    echo "$(dest_of "$part") | $repository | $commit | $wants | $licences"
  done
  echo
  echo "Files taken from the ttnn 0.78.0 wheel (PyPI) instead of the tt-metal tree:"
  while read -r f; do
    [ -n "$f" ] && [ -f "$here/tt-metal/$f" ] && echo "  tt-metal/$f"
  done <<<"$overlaid"
  echo
  echo "$count header files."
} >"$here/PROVENANCE"
echo "regenerate: $count header files in $here" >&2
