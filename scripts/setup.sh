#!/usr/bin/env bash
# Installs the system packages the build needs (Debian/Ubuntu): cmake and nasm build the
# bundled libjpeg-turbo, libclang-dev serves bindgen and the conformance crate, g++ compiles the
# emulated kernels, g++-multilib lets the conformance check compile kernels for a 32-bit target
# like the device's RISC-V cores, python3-pip fetches tt-metal's headers for that check.
# Safe to run again; skips what is already there.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v nasm >/dev/null || need+=(nasm)
command -v g++ >/dev/null || need+=(g++)
command -v pkg-config >/dev/null || need+=(pkg-config)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || need+=(libclang-dev)
echo 'int main() {}' | g++ -m32 -x c++ -fsyntax-only - >/dev/null 2>&1 || need+=(g++-multilib)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust with rustup (https://rustup.rs) first" >&2
  exit 1
fi
