#!/usr/bin/env bash
# The GPU checks of record on a CUDA machine, in one go: a GUI-less build
# (HDF5, TIFF, MPI where found), the CUDA and MPI tests, and the benchmark
# figures the README and the issue notes quote. Each step's log goes to
# LOG_DIR; a summary of every step to LOG_DIR/summary.txt.
#
#   scripts/gpu-checks.sh LOG_DIR STEP...
#
# Steps, in the order given:
#   build      configure and build build-gpu/ (Release, sm_90 + PTX)
#   cuda       ctest -L cuda (GPU tests)
#   mpi        ctest -L mpi (MPI tests, where the build has MPI)
#   kernels    tomo-bench's kernel table, 2048 projections of 2048^2 slices
#   preview    tomo-bench --preview: the live preview's latency
#   iterative  tomo-bench --iterative: SIRT/CGLS/TV per-iteration times
#   pipeline   2048^3 scan (uint16, DXchange) to a volume in SCRATCH: one GPU,
#              all GPUs, float32 and float16 output, the writer alone at 1-8
#              threads, MPI with one rank per GPU, and the MPI ranks'
#              shared writer alone
#   scaling    scripts/scaling-table.sh (writer threads, GPUs, MPI ranks)
#   python     the module tomows in build-gpu (after build): CuPy/PyTorch
#              arrays on the GPU (python/tests/test_gpu.py), the module's
#              suite (ctest -L python), its overhead against tomo-bench
#              (python/benchmarks/overhead.py, cpu and a CUDA strategy with
#              a CUDA array)
#   stream     tomo-bench --stream: live ingest of 2048^2 frames (ZeroMQ
#              inproc and ipc with Record into SCRATCH, and a growing file), and
#              the latency from the last frame to three 2048^2 slices at 200 frames/s
#
# Environment: DEPS_PREFIX, a prefix holding packages unpacked outside the
# system (e.g. `dpkg -x pkg.deb DIR`: then DIR/usr), searched by CMake and
# the loader; SCRATCH (/dev/shm); GPUS (all); JOBS (nproc); STRATEGIES (the
# kernel table's, default the CUDA ones); PYTHON (python3): the interpreter
# with numpy, pytest and CuPy and/or PyTorch (h5py too for ctest -L python).
# The module's build needs Python.h and pybind11's CMake package: from the
# system (python3-dev, pybind11-dev), from pip (`PYTHON -m pybind11
# --cmakedir`), or from DEPS_PREFIX (libpython3.X-dev and pybind11-dev
# unpacked there: DEPS_PREFIX/include/python3.X, DEPS_PREFIX/lib/cmake/pybind11).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
logs=${1:?usage: gpu-checks.sh LOG_DIR STEP...}
shift
mkdir -p "$logs"
build=$root/build-gpu
scratch=${SCRATCH:-/dev/shm}
gpus=${GPUS:-all}
jobs=${JOBS:-$(nproc)}
strategies=${STRATEGIES:-tex-standard,tex-optimized,alu,hybrid,oversample,gridrec}
bench=$build/app/tomo-bench
summary=$logs/summary.txt
prefix_args=()
if [ -n "${DEPS_PREFIX:-}" ]; then
    arch_lib=$DEPS_PREFIX/lib/$(gcc -print-multiarch)
    export LD_LIBRARY_PATH=$arch_lib:$arch_lib/hdf5/serial:${LD_LIBRARY_PATH:-}
    prefix_args=(-DCMAKE_PREFIX_PATH="$DEPS_PREFIX" -DFFTW3F_INCLUDE_DIR="$DEPS_PREFIX/include"
        -DFFTW3F_LIBRARY="$arch_lib/libfftw3f.so")
fi
as_root=()
[ "$(id -u)" = 0 ] && as_root=(--allow-run-as-root)

note() { echo "$*" | tee -a "$summary"; }
# Runs a step's command with its output in LOG_DIR/NAME.txt; the summary
# gets its exit status, duration and the lines matching PATTERN.
record() {
    local name=$1 pattern=$2
    shift 2
    local start=$SECONDS
    "$@" >"$logs/$name.txt" 2>&1
    local rc=$?
    note "== $name: exit $rc, $((SECONDS - start)) s"
    grep -E "$pattern" "$logs/$name.txt" | cut -c1-220 | head -60 | tee -a "$summary"
    return $rc
}
scan=(--projections 2048 --rows 2048 --size 2048 --dir "$scratch")

{
    date -u +"%Y-%m-%d %H:%M UTC"
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    echo "cores: $(nproc)"
} >>"$summary"

for step in "$@"; do
    case $step in
    build)
        record configure "HDF5|TIFF|CUDA|MPI|OpenCL|Error" cmake -S "$root" -B "$build" -G Ninja \
            -DCMAKE_BUILD_TYPE=Release -DTOMO_WITH_GUI=OFF -DTOMO_WITH_OPENCL=OFF -DTOMO_WITH_CUDA=ON \
            -DCMAKE_CUDA_ARCHITECTURES=90 "${prefix_args[@]}" || exit 1
        record build "FAILED|error:|warning:" cmake --build "$build" --parallel "$jobs" -- -k 0 || exit 1
        ;;
    cuda | mpi)
        record "ctest-$step" "tests passed|tests failed|Failed|Exception|Timeout|Not Run|MEASURED" \
            ctest --test-dir "$build" -L "^$step\$" --output-on-failure --timeout 600
        grep -E "SKIPPED|Skipped" "$logs/ctest-$step.txt" | sort | uniq -c | head -20 >>"$summary"
        ;;
    kernels)
        for interp in linear nearest; do
            record "kernels-$interp" "GU/s|strategy|alu|hybrid|tex|gridrec|oversample|half" "$bench" \
                --projections 2048 --size 2048 --slices 32 --repeat 5 --interp "$interp" \
                --precision float32,float16 --strategy "$strategies" --json "$logs/kernels-$interp.json"
        done
        ;;
    preview)
        record preview "ms|strategy|preview" "$bench" --preview --projections 2048 --size 2048 --repeat 30 \
            --json "$logs/preview.json"
        record preview-gridrec "ms|strategy|preview" "$bench" --preview --projections 2048 --size 2048 \
            --repeat 30 --strategy gridrec
        ;;
    iterative)
        record iterative "." "$bench" --iterative --json "$logs/iterative.json"
        ;;
    pipeline)
        record pipeline-1gpu "total|busy|bottleneck|GB/s|s$" "$bench" "${scan[@]}" --pipeline --gpus 0 --keep \
            --json "$logs/pipeline-1gpu.json"
        record pipeline-all "total|busy|bottleneck|GB/s|s$" "$bench" "${scan[@]}" --pipeline --gpus "$gpus" --keep \
            --json "$logs/pipeline-all.json"
        record pipeline-all-f16 "total|busy|bottleneck|GB/s|s$" "$bench" "${scan[@]}" --pipeline --gpus "$gpus" \
            --output-type float16 --keep
        record writer "threads|GB/s|write" "$bench" --pipeline --writer-threads 1,2,4,8 --size 2048 --rows 2048 \
            --dir "$scratch" --json "$logs/writer.json"
        if command -v mpirun >/dev/null; then
            ranks=$(nvidia-smi -L | wc -l)
            record pipeline-mpi "total|busy|bottleneck|GB/s|rank|s$" mpirun "${as_root[@]}" -n "$ranks" \
                "$bench" "${scan[@]}" --pipeline --mpi --keep
            record writer-mpi "threads|GB/s|write|shared" mpirun "${as_root[@]}" -n "$ranks" "$bench" --pipeline \
                --writer-threads 1,2,4,8 --size 2048 --rows 2048 --dir "$scratch" --mpi --json "$logs/writer-mpi.json"
        fi
        ;;
    scaling)
        export OUT=$logs/scaling GPUS=$gpus RANKS
        RANKS=$(nvidia-smi -L | wc -l)
        record scaling "==|total|GB/s|GPU" "$root/scripts/scaling-table.sh" "$build" "$scratch"
        ;;
    python)
        py=$(command -v "${PYTHON:-python3}")
        py_args=(-DTOMO_WITH_PYTHON=ON -DPython_EXECUTABLE="$py")
        if dir=$("$py" -m pybind11 --cmakedir 2>/dev/null); then py_args+=(-Dpybind11_DIR="$dir"); fi
        if [ -n "${DEPS_PREFIX:-}" ]; then
            ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
            [ -d "$DEPS_PREFIX/lib/cmake/pybind11" ] && py_args+=(-Dpybind11_DIR="$DEPS_PREFIX/lib/cmake/pybind11")
            if [ -f "$DEPS_PREFIX/include/python$ver/Python.h" ]; then
                # Debian's pyconfig.h includes <MULTIARCH/python3.X/pyconfig.h>: one folder with both.
                headers=$build/python-headers/python$ver
                mkdir -p "$headers"
                cp -r "$DEPS_PREFIX/include/python$ver/." "$headers/"
                cp "$DEPS_PREFIX/include/$(gcc -print-multiarch)/python$ver/pyconfig.h" "$headers/pyconfig.h"
                py_args+=(-DPython_INCLUDE_DIR="$headers")
            fi
        fi
        record python-configure "PYTHON|Python|pybind11|Error" cmake "$build" "${py_args[@]}" ||
            { note "python: configure failed (Python.h or pybind11 missing: see the header)"; continue; }
        record python-build "FAILED|error:|warning:" cmake --build "$build" --parallel "$jobs" \
            --target _tomows tomo-recon tomo-bench || continue
        "$py" -c "import numpy, pytest" 2>&1 | tee -a "$summary"
        for lib in cupy torch; do "$py" -c "import $lib; print('$lib', $lib.__version__)" 2>&1 | tail -1 | tee -a "$summary"; done
        # The GPU arrays: every test passes, none skipped (-rs lists skips with their reasons).
        record python-gpu "passed|failed|skipped|SKIPPED|Error" env PYTHONPATH="$build/python" TOMO_AUTOTUNE=off \
            "$py" -m pytest -v -rs -p no:cacheprovider "$root/python/tests/test_gpu.py"
        record ctest-python "tests passed|tests failed|Failed|Not Run" \
            ctest --test-dir "$build" -L '^python$' --output-on-failure --timeout 900
        for strategy in cpu tex-optimized; do
            cuda_array=()
            [ "$strategy" != cpu ] && "$py" -c "import cupy" 2>/dev/null && cuda_array=(--cuda-array cupy)
            record "python-overhead-$strategy" "rounds|C\+\+|module|fixed|copies" env PYTHONPATH="$build/python" \
                "$py" "$root/python/benchmarks/overhead.py" --build "$build" --rounds 15 --strategy "$strategy" \
                "${cuda_array[@]}"
        done
        ;;
    stream)
        live=(--stream --size 2048 --projections 1500 --dir "$scratch")
        record stream-record "ingest|live|latency|error" "$bench" "${live[@]}" --stream-via inproc --record \
            --json "$logs/stream-record.json"
        record stream-ipc "ingest|live|latency|error" "$bench" "${live[@]}" --stream-via ipc --record \
            --json "$logs/stream-ipc.json"
        record stream-file "ingest|live|latency|error" "$bench" "${live[@]}" --stream-via file \
            --json "$logs/stream-file.json"
        record stream-latency "ingest|live|latency|error" "$bench" "${live[@]}" --stream-via inproc --rate 200 \
            --strategy auto --json "$logs/stream-latency.json"
        ;;
    *)
        note "unknown step $step"
        ;;
    esac
done
