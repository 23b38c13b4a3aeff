#!/usr/bin/env bash
# One call on the GPU machine (see docs/cuda_notes.md): unpack the carried
# .debs (FFTW, GoogleTest, nlohmann-json, CLI11), build the CUDA targets
# without GUI/HDF5/TIFF, run tomo_cuda_tests and tomo-cuda-bench, dump the
# kernels' SASS. Logs go to $TOMO_LOG_DIR (default /tmp/tomo-logs). Usage: device_run.sh [tests|sanitize|bench|tomobench|all] [bench args...]
#   preview: live-preview latency (issue 4): CUDA tests, memcheck of the banded
#            path, tomo-bench --preview of this tree and (when build-old-src/
#            holds an older tree, e.g. `git archive HEAD`) of that one
#   final:   the whole build (tests on), ctest (cpu, cli, cuda labels) and the
#            tomo-bench figures of record (docs/h100_final_run.md)
set -uo pipefail
LOGS=${TOMO_LOG_DIR:-/tmp/tomo-logs}
mkdir -p "$LOGS"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD="$ROOT/build-device"
what=${1:-all}
shift || true
targets="--target tomo_cuda_tests tomo-cuda-bench tomo-bench"
[ "$what" = final ] && targets=""
CONFIGURE_DEPS=(-DCMAKE_PREFIX_PATH=/tmp/deps/usr -DFFTW3F_INCLUDE_DIR=/tmp/deps/usr/include
    -DFFTW3F_LIBRARY=/tmp/deps/usr/lib/x86_64-linux-gnu/libfftw3f.so)

{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
    nvcc --version | tail -2
    cmake --version | head -1
    date -u +"%Y-%m-%d %H:%M UTC"
    nproc
    mkdir -p /tmp/deps
    for f in "$ROOT"/.debs/*.deb; do dpkg -x "$f" /tmp/deps; done
    if [ "$what" = preview ] && [ -d "$ROOT/build-old-src" ]; then
        # The older tree's tomo-bench, built beside this one (the "before" of a change).
        ( cmake -S "$ROOT/build-old-src" -B "$ROOT/build-old" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOMO_WITH_GUI=OFF \
            -DTOMO_WITH_HDF5=OFF -DTOMO_WITH_TIFF=OFF -DTOMO_WITH_OPENCL=OFF -DTOMO_WITH_CUDA=ON -DTOMO_BUILD_TESTS=OFF \
            -DCMAKE_CUDA_ARCHITECTURES=90 "${CONFIGURE_DEPS[@]}" >/dev/null &&
            cmake --build "$ROOT/build-old" --target tomo-bench --parallel 8 ) >"$LOGS/build_old.txt" 2>&1 &
    fi
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOMO_WITH_GUI=OFF -DTOMO_WITH_HDF5=OFF \
        -DTOMO_WITH_TIFF=OFF -DTOMO_WITH_OPENCL=OFF -DTOMO_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        "${CONFIGURE_DEPS[@]}" -DTOMO_CUDA_PTXAS_VERBOSE=ON >/dev/null &&
        LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu cmake --build "$BUILD" $targets --parallel 16 -- -k 0
} >"$LOGS/build.txt" 2>&1
status=$?
wait
grep -E "error|Error|spill stores [1-9]" "$LOGS/build.txt" | head -20
if [ $status -ne 0 ]; then
    grep -E "^FAILED|error:" "$LOGS/build.txt" | head -20
    # final: run what was built (the failures are in the log); otherwise stop.
    [ "$what" = final ] && [ -x "$BUILD/app/tomo-bench" ] || { tail -40 "$LOGS/build.txt"; exit $status; }
    echo "BUILD FAILED (status $status): running what was built"
else
    echo "build ok"
fi
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
[ "$what" != final ] && [ "$what" != preview ] && command -v cuobjdump >/dev/null &&
    cuobjdump -sass "$BUILD/kernels/cuda/CMakeFiles/tomo_cuda.dir/tex_optimized.cu.o" >"$LOGS/sass_tex_optimized.txt" 2>&1

if [ "$what" = preview ]; then
    "$BUILD/tests/tomo_cuda_tests" --gtest_color=no >"$LOGS/tests.txt" 2>&1
    echo "tests exit $?"
    grep -E "^MEASURED preview|FAILED|PASSED|SKIPPED \] [0-9]|Failure|Expected|Which is|actual" "$LOGS/tests.txt" | head -60
    timeout 100 compute-sanitizer --tool memcheck "$BUILD/tests/tomo_cuda_tests" \
        --gtest_filter='CudaPreview.BandedSetAxis*:CudaPreview.Session*' >"$LOGS/memcheck.txt" 2>&1
    echo "memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$LOGS/memcheck.txt" | head -5
    for b in old new new-unbanded; do
        exe="$BUILD/app/tomo-bench"; envs=""
        [ $b = old ] && exe="$ROOT/build-old/app/tomo-bench"
        [ $b = new-unbanded ] && envs="TOMO_CUDA_BAND_ROWS=0"
        [ -x "$exe" ] || { echo "$b: no $exe"; continue; }
        for k in 1 2; do
            echo "== preview $b ($k)"
            env $envs "$exe" --preview --projections 2048 --size 2048 --repeat 30 2>&1 | tee -a "$LOGS/preview.txt" |
                grep -vE "^wrote|^\(" | tail -2
        done
    done
fi
if [ "$what" = final ]; then
    (cd "$BUILD" && ctest --output-on-failure) >"$LOGS/ctest.txt" 2>&1
    echo "ctest exit $?"; grep -E "tests passed|tests failed|Total Test time|\*\*\*Failed|\*\*\*Exception|\*\*\*Timeout|Not Run" "$LOGS/ctest.txt" | head -40
    # Per label: the test names (for passed/failed/skipped counts per label).
    for label in cpu cli cuda; do
        (cd "$BUILD" && ctest -N -L "^$label\$" | sed "s/^/LABEL $label: /") >>"$LOGS/ctest.txt"
        grep -c "^LABEL $label: *Test *#" "$LOGS/ctest.txt" | sed "s/^/$label tests: /"
    done
    grep -E "Skipped" "$LOGS/ctest.txt" | grep -v "^LABEL" | sed 's/  */ /g' | cut -c1-150 | head -20
    "$BUILD/app/tomo-bench" --projections 2048 --size 2048 --slices 32 --strategy tex-standard,tex-optimized \
        --repeat 5 --json "$LOGS/bench.json" >"$LOGS/bench.txt" 2>&1
    echo "tomo-bench exit $?"; cut -c1-160 "$LOGS/bench.txt" | tail -40
    "$BUILD/app/tomo-bench" --preview --projections 2048 --size 2048 --json "$LOGS/preview.json" >"$LOGS/preview.txt" 2>&1
    echo "preview exit $?"; tail -6 "$LOGS/preview.txt"
    "$BUILD/app/tomo-bench" --strategy cpu,cpu-reference --projections 512 --size 512 --slices 8 --interp linear \
        --precision float32 --repeat 3 >"$LOGS/cpu.txt" 2>&1
    echo "cpu bench exit $?"; tail -8 "$LOGS/cpu.txt"
fi
if [ "$what" = all ] || [ "$what" = tests ]; then
    "$BUILD/tests/tomo_cuda_tests" --gtest_color=no >"$LOGS/tests.txt" 2>&1
    echo "tests exit $?"
    grep -E "^MEASURED|FAILED|PASSED|SKIPPED \] [0-9]|Failure|Expected|Which is|actual" "$LOGS/tests.txt" | head -150
fi
if [ "$what" = all ] || [ "$what" = sanitize ]; then
    # memcheck over the pipeline and every tex-optimized variant; racecheck on the shared-memory reduction.
    filter='CudaProperties.StreamingEqualsOneShot:CudaProperties.RegionEqualsWindowOfFullSlice:Cuda/AllModes.*tex_optimized*:CudaBackends.GpuFilterEqualsCpuFilter'
    timeout 240 compute-sanitizer --tool memcheck --leak-check full "$BUILD/tests/tomo_cuda_tests" --gtest_filter="$filter" \
        >"$LOGS/memcheck.txt" 2>&1
    echo "memcheck exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$LOGS/memcheck.txt" | head -5
    timeout 120 compute-sanitizer --tool racecheck "$BUILD/tests/tomo_cuda_tests" \
        --gtest_filter='Cuda/AllModes.*tex_optimized_*_x4' >"$LOGS/racecheck.txt" 2>&1
    echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$LOGS/racecheck.txt" | head -5
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
    "$BUILD/kernels/cuda/tomo-cuda-bench" --csv "$LOGS/bench.csv" "$@" 2>&1 | tee "$LOGS/bench.txt"
fi
if [ "$what" = all ] || [ "$what" = tomobench ]; then
    # The project's tomo-bench (app/), GPU strategies only, on its phantom.
    "$BUILD/app/tomo-bench" --projections 2048 --size 2048 --slices 32 --strategy tex-standard,tex-optimized \
        --repeat 2 --json "$LOGS/tomo_bench.json" >"$LOGS/tomo_bench.txt" 2>&1
    echo "tomo-bench exit $?"; cat "$LOGS/tomo_bench.txt" | cut -c1-200 | tail -45
    "$BUILD/app/tomo-bench" --preview --projections 2048 --size 2048 2>&1 | tail -8
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
