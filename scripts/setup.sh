#!/usr/bin/env bash
# Installs the system packages the build needs (Debian/Ubuntu), each found by a check that does
# what the build does with it, so a half-installed tool never passes:
#   cmake, nasm      build the bundled libjpeg-turbo (run by name);
#   pkg-config       used by -sys crates' build scripts;
#   g++              compiles the emulated kernels (C++17);
#   g++-multilib     32-bit libstdc++ and libc headers: the conformance check compiles every kernel
#                    for a 32-bit target like the device's RISC-V cores (a -m32 compile that includes
#                    <cstdint> and <type_traits>; one without headers passes without multilib);
#   libclang-dev     libclang for bindgen and the conformance crate, found the way clang-sys finds
#                    it (libclang.so, libclang-<n>.so[.m], libclang.so.<n>; never libclang-cpp), plus
#                    clang's own headers (stddef.h) that parsing needs;
#   python3-pip      pip fetches the ttnn wheel (tt-metal's headers and libraries) for the checks;
#   python3-venv     `python3 -m venv` (with pip) for the benchmarks and the Python package.
# Safe to run again; installs only what a check found missing.
# For tests of this script: SETUP_DRY_RUN=1 prints the apt-get line instead of running it;
# SETUP_LIB_ROOTS (colon-separated) replaces the system folders searched for libclang.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

# Files named like a libclang that clang-sys loads at run time, in the given folders, `depth` deep.
libclang_in() {
  local depth=$1
  shift
  local dirs=()
  for d in "$@"; do [ -d "$d" ] && dirs+=("$d"); done
  [ ${#dirs[@]} -gt 0 ] || return 1
  # The first match, without a pipe (a reader that stops early would fail find under pipefail).
  [ -n "$(find "${dirs[@]}" -maxdepth "$depth" \( -name 'libclang.so' -o -name 'libclang.so.*' \
    -o -name 'libclang-*.so' -o -name 'libclang-*.so.*' \) ! -name '*-cpp.*' -print -quit 2>/dev/null)" ]
}

# clang-sys's search order: LIBCLANG_PATH alone when set; else llvm-config's prefix, the library
# path variables, then the system folders.
libclang_found() {
  if [ -n "${LIBCLANG_PATH:-}" ]; then
    libclang_in 1 "$LIBCLANG_PATH"
    return
  fi
  local dirs=() roots=() prefix
  if have llvm-config && prefix=$(llvm-config --prefix 2>/dev/null); then
    dirs+=("$prefix/lib" "$prefix/lib64")
  fi
  local IFS=:
  for d in ${LD_LIBRARY_PATH:-} ${LIBRARY_PATH:-}; do dirs+=("$d"); done
  if [ -n "${SETUP_LIB_ROOTS+set}" ]; then
    for d in $SETUP_LIB_ROOTS; do roots+=("$d"); done
  else
    roots=(/usr/lib /usr/lib32 /usr/lib64 /usr/local/lib /usr/local/lib64)
    for d in /usr/local/llvm*; do roots+=("$d"); done
  fi
  unset IFS
  { [ ${#dirs[@]} -gt 0 ] && libclang_in 1 "${dirs[@]}"; } || libclang_in 3 "${roots[@]}"
}

# clang's builtin headers, which libclang needs to parse anything that includes <stddef.h>.
clang_headers_found() {
  local roots=()
  if [ -n "${SETUP_LIB_ROOTS+set}" ]; then
    IFS=: read -ra roots <<<"$SETUP_LIB_ROOTS"
  else
    roots=(/usr/lib /usr/lib64 /usr/local/lib)
    for d in /usr/local/llvm*; do roots+=("$d"); done
  fi
  local dirs=()
  for d in "${roots[@]}"; do [ -d "$d" ] && dirs+=("$d"); done
  [ ${#dirs[@]} -gt 0 ] || return 1
  [ -n "$(find "${dirs[@]}" -maxdepth 6 -path '*/clang/*/include/stddef.h' -print -quit 2>/dev/null)" ]
}

need=()
have cmake || need+=(cmake)
have nasm || need+=(nasm)
have pkg-config || need+=(pkg-config)
if ! have g++; then
  need+=(g++ g++-multilib)
# A here-document rather than a pipe: under pipefail, a compiler that exits before reading its input
# would fail the writer with SIGPIPE and look like a missing multilib.
elif ! g++ -m32 -std=c++17 -x c++ -fsyntax-only - >/dev/null 2>&1 <<'CXX'
#include <cstdint>
#include <cstring>
#include <type_traits>
CXX
then
  need+=(g++-multilib)
fi
{ libclang_found && clang_headers_found; } || need+=(libclang-dev)
if ! have python3; then
  need+=(python3 python3-pip python3-venv)
else
  python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
  venv_dir=$(mktemp -d)
  python3 -m venv "$venv_dir/v" >/dev/null 2>&1 || need+=(python3-venv)
  rm -rf "$venv_dir"
fi

if [ ${#need[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  if [ -n "${SETUP_DRY_RUN:-}" ]; then
    echo "setup: would run: ${sudo[*]}${sudo:+ }apt-get install -y ${need[*]}"
  else
    echo "setup: installing ${need[*]}" >&2
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  fi
elif [ -n "${SETUP_DRY_RUN:-}" ]; then
  echo "setup: nothing to install"
fi
if ! have cargo; then
  echo "cargo not found: install Rust with rustup (https://rustup.rs) first" >&2
  exit 1
fi
