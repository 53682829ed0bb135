#!/usr/bin/env bash
# Installs the Debian packages turnout builds with, when any is missing.
# Does nothing (and needs no network) when they are all there.
#   tools/install_deps.sh          what the build and the tests need
#   tools/install_deps.sh bench    and what tools/bench.sh compares with
set -euo pipefail

packages=(
  bazel-bootstrap   # Bazel 4.2.3, the only Bazel that works offline here
  g++
  ninja-build       # turnout.utils.cpp_extension builds in parallel with it
  pkg-config
  make              # examples/external's Makefile (//tests/tools:install_prefix_test)
  cmake             # examples/external's CMakeLists.txt (the same test)
  libabsl-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libopenblas-dev   # CBLAS for mm/bmm/addmm/matmul
  libsleef-dev      # vectorised erf/exp/tanh (GELU, softmax)
  libdnnl-dev       # oneDNN: the forward of large float32 convolutions
  nlohmann-json3-dev  # JSON of registry snapshots and Chrome traces
  pybind11-dev
  python3-dev
  python3-pytest
  python3-numpy     # turnout.tensor(), Tensor.numpy(), from_numpy
  python3-pip       # pip install . and the wheel (//tests/python:wheel_test)
  python3-venv      # ensurepip, for venvs with their own pip
  libdlpack-dev     # DLPack's header for Tensor.__dlpack__ / from_dlpack
  python3-torch     # torch 1.13: the oracle of the tests of torch's behaviour
  python3-hypothesis  # property-based tests (table model, argument fuzzing)
  clang-14          # --config=fuzz: libFuzzer targets need clang
  libfuzzer-14-dev
)
if [ "${1:-}" = bench ]; then
  packages+=(libtorch-dev)  # c10, ATen and TorchScript 1.13, in the same runs
elif [ $# -gt 0 ]; then
  echo "tools/install_deps.sh: unknown argument '$1' (none, or 'bench')" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "turnout: installing missing Debian packages: ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
