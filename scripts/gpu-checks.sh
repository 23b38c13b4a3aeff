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
#   stream     tomo-bench --stream: live ingest of 2048^2 frames (ZeroMQ with
#              Record, and a growing file), and the latency from the last
#              frame to three 2048^2 slices at 200 frames/s
#
# Environment: DEPS_PREFIX, a prefix holding packages unpacked outside the
# system (e.g. `dpkg -x pkg.deb DIR`: then DIR/usr), searched by CMake and
# the loader; SCRATCH (/dev/shm); GPUS (all); JOBS (nproc); STRATEGIES (the
# kernel table's, default the CUDA ones).
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
    stream)
        live=(--stream --size 2048 --projections 1500)
        record stream-record "ingest|live|latency|error" "$bench" "${live[@]}" --stream-via inproc --record \
            --json "$logs/stream-record.json"
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
