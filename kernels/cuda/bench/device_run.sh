#!/usr/bin/env bash
# One call on the GPU machine (see docs/cuda_notes.md): unpack the carried
# .debs (FFTW, GoogleTest, nlohmann-json, CLI11), build the CUDA targets
# without GUI/HDF5/TIFF, run tomo_cuda_tests and tomo-cuda-bench, dump the
# kernels' SASS. Logs go to $OUT. Usage: device_run.sh [tests|sanitize|bench|tomobench|all] [bench args...]
set -uo pipefail
OUT=${OUT:-/tmp/tomo-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD="$ROOT/build-device"
what=${1:-all}
shift || true

{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
    nvcc --version | tail -2
    cmake --version | head -1
    mkdir -p /tmp/deps
    for f in "$ROOT"/.debs/*.deb; do dpkg -x "$f" /tmp/deps; done
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOMO_WITH_GUI=OFF -DTOMO_WITH_HDF5=OFF \
        -DTOMO_WITH_TIFF=OFF -DTOMO_WITH_OPENCL=OFF -DTOMO_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_PREFIX_PATH=/tmp/deps/usr -DFFTW3F_INCLUDE_DIR=/tmp/deps/usr/include \
        -DFFTW3F_LIBRARY=/tmp/deps/usr/lib/x86_64-linux-gnu/libfftw3f.so -DTOMO_CUDA_PTXAS_VERBOSE=ON >/dev/null &&
        LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu cmake --build "$BUILD" --target tomo_cuda_tests tomo-cuda-bench tomo-bench --parallel 16
} >"$OUT/build.txt" 2>&1
status=$?
grep -E "error|Error|spill stores [1-9]" "$OUT/build.txt" | head -20
[ $status -ne 0 ] && { tail -40 "$OUT/build.txt"; exit $status; }
echo "build ok"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
command -v cuobjdump >/dev/null &&
    cuobjdump -sass "$BUILD/kernels/cuda/CMakeFiles/tomo_cuda.dir/tex_optimized.cu.o" >"$OUT/sass_tex_optimized.txt" 2>&1

if [ "$what" = all ] || [ "$what" = tests ]; then
    "$BUILD/tests/tomo_cuda_tests" --gtest_color=no >"$OUT/tests.txt" 2>&1
    echo "tests exit $?"
    grep -E "^MEASURED|FAILED|PASSED|SKIPPED \] [0-9]|Failure|Expected|Which is|actual" "$OUT/tests.txt" | head -150
fi
if [ "$what" = all ] || [ "$what" = sanitize ]; then
    # memcheck over the pipeline and every tex-optimized variant; racecheck on the shared-memory reduction.
    filter='CudaProperties.StreamingEqualsOneShot:CudaProperties.RegionEqualsWindowOfFullSlice:Cuda/AllModes.*tex_optimized*:CudaBackends.GpuFilterEqualsCpuFilter'
    timeout 240 compute-sanitizer --tool memcheck --leak-check full "$BUILD/tests/tomo_cuda_tests" --gtest_filter="$filter" \
        >"$OUT/memcheck.txt" 2>&1
    echo "memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt" | head -5
    timeout 120 compute-sanitizer --tool racecheck "$BUILD/tests/tomo_cuda_tests" \
        --gtest_filter='Cuda/AllModes.*tex_optimized_*_x4' >"$OUT/racecheck.txt" 2>&1
    echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck.txt" | head -5
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
    "$BUILD/kernels/cuda/tomo-cuda-bench" --csv "$OUT/bench.csv" "$@" 2>&1 | tee "$OUT/bench.txt"
fi
if [ "$what" = all ] || [ "$what" = tomobench ]; then
    # The project's tomo-bench (app/), GPU strategies only, on its phantom.
    "$BUILD/app/tomo-bench" --projections 2048 --size 2048 --slices 32 --strategy tex-standard,tex-optimized \
        --repeat 2 --json "$OUT/tomo_bench.json" >"$OUT/tomo_bench.txt" 2>&1
    echo "tomo-bench exit $?"; cat "$OUT/tomo_bench.txt" | cut -c1-200 | tail -45
    "$BUILD/app/tomo-bench" --preview --projections 2048 --size 2048 2>&1 | tail -8
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
