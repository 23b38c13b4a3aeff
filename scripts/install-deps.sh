#!/usr/bin/env bash
# Installs the Debian 12 packages Tomo Workstation needs to build and test.
# Idempotent: packages already installed are skipped, and nothing is asked
# of apt when all are present. Uses sudo when not run as root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libfftw3-dev libhdf5-dev zlib1g-dev libtiff-dev
  # HDF5 compression plugins (found by libhdf5 in its plugin folder): LZF,
  # LZ4 + bzip2, Blosc, bitshuffle (+ LZ4); gzip is built into libhdf5
  hdf5-plugin-lzf hdf5-filter-plugin hdf5-filter-plugin-blosc-serial bitshuffle
  libcli11-dev nlohmann-json3-dev libgtest-dev
  # Live acquisition streams (tomo-stream, the workstation's Open Stream): ZeroMQ and its C++ binding
  libzmq3-dev cppzmq-dev
  # MPI (tomo-recon --mpi, tests/mpi): Open MPI's headers and mpirun
  libopenmpi-dev openmpi-bin
  # OpenCL: the ICD loader and headers, PoCL (OpenCL on the CPU, for CI) and
  # VkFFT (header-only FFT, its OpenCL backend filters the sinograms)
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libvkfft-dev clinfo
  # GUI: Qt 6 widgets + charts, VTK for the 3D view, Xvfb for GUI tests
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev libvtk9-dev
  libqt6svg6 xvfb xauth
  # Fuzzing (scripts/fuzz.sh, run by CI): clang with libFuzzer, the sanitizers
  # and llvm-symbolizer
  clang libclang-rt-14-dev
  # CI's Clang build (scripts/build-clang.sh): C++20 comparisons as GCC 13 reads them
  clang-16
  # The Python module tomows (pybind11) and its tests (pytest, numpy, h5py
  # reads tomo-recon's output); `file` for CPack's Debian package (scripts/package.sh)
  python3-dev pybind11-dev python3-numpy python3-pytest python3-h5py file
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
