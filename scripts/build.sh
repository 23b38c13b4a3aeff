#!/usr/bin/env bash
# Configures and builds Tomo Workstation in ./build (Release, Ninja).
# Extra arguments go to cmake's configure step, e.g. -DTOMO_WITH_GUI=OFF.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TOMO_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" --parallel "${TOMO_BUILD_JOBS:-$(nproc)}"
