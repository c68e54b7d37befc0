#!/usr/bin/env bash
# Downloads the ttnn 0.78.0 wheel from PyPI with pip (the release nearest the pinned tt-metal
# 8b98410e730: its libraries and device-side headers) into the git-ignored
# .cache/ttnn-0.78.0/wheel/, once, and prints the wheel's path. Shared by conformance-headers.sh
# (the kernel headers) and metal-check.sh (the host libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.78.0
dir=.cache/ttnn-$version/wheel
wheel=$(ls "$dir"/ttnn-$version-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$wheel" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-pip >&2
  fi
  mkdir -p "$dir"
  # The wheel is a CPython extension; the files used here are the same for every tag, so pin one
  # that PyPI carries.
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.10 \
    --platform manylinux_2_34_x86_64 "ttnn==$version" -d "$dir" >&2
  wheel=$(ls "$dir"/ttnn-$version-*.whl | head -n1)
fi
echo "$PWD/$wheel"
