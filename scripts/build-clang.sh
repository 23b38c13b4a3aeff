#!/usr/bin/env bash
# Compiles the test suite with Clang 16 (Debian's clang-16), warnings as
# errors, in ./build-clang: CI's guard for the compilers users have beside
# GCC 12. Clang 16 follows C++20's rules for rewritten comparison operators
# as GCC 13 does (an operator== that GCC 12 accepts can be ambiguous there).
# Without GUI and CUDA and unoptimised, so it stays short: the core, the
# programs, and the core, CLI, OpenCL and fuzz-replay suites. It compiles
# and links; the tests themselves run in the GCC build (scripts/run-tests.sh).
#
#   scripts/build-clang.sh [CMAKE OPTIONS...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TOMO_CLANG_BUILD_DIR:-$root/build-clang}
cxx=${TOMO_CLANG_CXX:-clang++-16}
if ! command -v "$cxx" >/dev/null; then
  echo "build-clang: $cxx not found (Debian: apt-get install clang-16)" >&2
  exit 1
fi
cc=${cxx/clang++/clang}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
start=$(date +%s)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_C_FLAGS_DEBUG=-O0 \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DTOMO_WITH_GUI=OFF -DTOMO_WITH_CUDA=OFF -DTOMO_WARNINGS_AS_ERRORS=ON "$@" >/dev/null
cmake --build "$build" --parallel "${TOMO_BUILD_JOBS:-$(nproc)}"
echo "MEASURED build-clang: $("$cxx" --version | head -1), the tree without GUI and CUDA built in $(($(date +%s) - start)) s"
