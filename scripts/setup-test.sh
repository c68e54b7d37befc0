#!/usr/bin/env bash
# Tests scripts/setup.sh's decisions on fake machines (its dry-run mode): a g++ without multilib,
# a folder with only libclang-cpp.so, a python3 without venv, and a complete machine. Each tool is a
# stub in a fake bin folder; PATH holds only the stubs and the few utilities the script runs, so no
# real tool of this machine answers for a missing one. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The utilities setup.sh itself runs, from this machine.
mkdir -p "$work/sys"
for tool in bash env find grep mktemp rm id; do
  ln -s "$(command -v "$tool")" "$work/sys/$tool"
done

stub() { # stub DIR NAME BODY: an executable shell script
  mkdir -p "$1"
  printf '#!/usr/bin/env bash\n%s\n' "$3" >"$1/$2"
  chmod +x "$1/$2"
}

# machine NAME MULTILIB(yes|no) VENV(yes|no): a bin folder with every tool, g++ and python3 as asked.
machine() {
  local bin=$work/$1/bin
  for tool in cmake nasm pkg-config cargo; do stub "$bin" "$tool" 'exit 0'; done
  if [ "$2" = yes ]; then
    stub "$bin" g++ 'exit 0'
  else
    # Like Debian's g++ without g++-multilib: -m32 compiles only what includes no header.
    stub "$bin" g++ 'for a in "$@"; do [ "$a" = -m32 ] || continue
  if grep -q "#include"; then echo "bits/c++config.h: No such file or directory" >&2; exit 1; fi; done; exit 0'
  fi
  if [ "$3" = yes ]; then
    stub "$bin" python3 'exit 0'
  else
    stub "$bin" python3 '[ "${2:-}" = venv ] && { echo "ensurepip is not available" >&2; exit 1; }; exit 0'
  fi
  stub "$bin" llvm-config "echo $work/$1/llvm"
  mkdir -p "$work/$1/llvm/lib" "$work/$1/lib"
}

run() { # run NAME [VAR=VALUE...]: setup.sh's dry-run line on machine NAME
  local name=$1
  shift
  env -i PATH="$work/$name/bin:$work/sys" SETUP_DRY_RUN=1 SETUP_LIB_ROOTS="$work/$name/lib" "$@" \
    bash scripts/setup.sh
}

failures=0
expect() { # expect NAME OUTPUT MUST-CONTAIN... -- MUST-NOT-CONTAIN...
  local name=$1 out=$2 negate=no
  shift 2
  for word in "$@"; do
    if [ "$word" = -- ]; then negate=yes; continue; fi
    if [ $negate = no ] && ! grep -qw -- "$word" <<<"$out"; then
      echo "FAIL $name: expected $word in: $out"; failures=$((failures + 1))
    elif [ $negate = yes ] && grep -qw -- "$word" <<<"$out"; then
      echo "FAIL $name: did not expect $word in: $out"; failures=$((failures + 1))
    fi
  done
}

# A fresh Debian machine with g++ but no multilib, only libclang-cpp (from llvm's runtime), no venv.
machine fresh no no
touch "$work/fresh/llvm/lib/libclang-cpp.so.14" "$work/fresh/lib/libclang-cpp.so.14"
expect fresh "$(run fresh)" g++-multilib libclang-dev python3-venv -- cmake nasm python3-pip

# clang's headers there, but the only library is libclang-cpp, which is not libclang.
machine cpponly yes yes
mkdir -p "$work/cpponly/lib/llvm-14/lib/clang/14/include"
touch "$work/cpponly/lib/llvm-14/lib/libclang-cpp.so.14" "$work/cpponly/lib/llvm-14/lib/clang/14/include/stddef.h"
expect cpponly "$(run cpponly)" libclang-dev -- g++-multilib python3-venv

# Everything there: libclang-14.so.1 in a system folder with clang's headers beside it.
machine complete yes yes
mkdir -p "$work/complete/lib/llvm-14/lib/clang/14.0.6/include"
touch "$work/complete/lib/llvm-14/lib/libclang-14.so.1" \
  "$work/complete/lib/llvm-14/lib/clang/14.0.6/include/stddef.h"
out=$(run complete)
[ "$out" = "setup: nothing to install" ] || { echo "FAIL complete: $out"; failures=$((failures + 1)); }

# libclang.so.1 found only through llvm-config, but clang's headers (libclang-common) absent.
machine noheaders yes yes
touch "$work/noheaders/llvm/lib/libclang.so.1"
expect noheaders "$(run noheaders)" libclang-dev -- g++-multilib python3-venv

# LIBCLANG_PATH is the only place searched when set, as clang-sys does.
machine pinned yes yes
mkdir -p "$work/pinned/lib/clang/14/include" "$work/pinned/elsewhere"
touch "$work/pinned/lib/libclang-14.so" "$work/pinned/lib/clang/14/include/stddef.h"
expect pinned "$(run pinned LIBCLANG_PATH="$work/pinned/elsewhere")" libclang-dev
out=$(run pinned LIBCLANG_PATH="$work/pinned/lib")
[ "$out" = "setup: nothing to install" ] || { echo "FAIL pinned: $out"; failures=$((failures + 1)); }

# No g++ at all: the compiler and its multilib.
machine nogxx yes yes
rm "$work/nogxx/bin/g++"
touch "$work/nogxx/lib/libclang.so" && mkdir -p "$work/nogxx/lib/clang/14/include" &&
  touch "$work/nogxx/lib/clang/14/include/stddef.h"
expect nogxx "$(run nogxx)" g++ g++-multilib -- libclang-dev

if [ $failures -gt 0 ]; then
  echo "setup-test: $failures failure(s)"
  exit 1
fi
echo "setup-test: 6 fake machines, every decision as expected"
