#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs packages,
# builds, runs every CTest test (GUI tests under Xvfb). GPU tests skip with
# the reason when no CUDA device is present.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TOMO_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$@"
cd "$build"
runner=()
if command -v xvfb-run >/dev/null; then runner=(xvfb-run -a -s "-screen 0 1600x1000x24"); fi
"${runner[@]}" ctest --output-on-failure --parallel "$(nproc)" --timeout 900
