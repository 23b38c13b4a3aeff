#!/usr/bin/env bash
# The scaling table of the batch conveyor on a CUDA machine: the output
# writer at 1..32 threads, tomo-recon's path on 1, 2, 4, ... GPUs with
# default options (float32 and float16 output), and, when the build has MPI
# and mpirun is there, the writer shared by MPI ranks and the same job by
# MPI ranks of one GPU each.
#
#   scripts/scaling-table.sh [BUILD_DIR] [SCRATCH_DIR]
#
# BUILD_DIR: a build with CUDA (default ./build); SCRATCH_DIR: where the
# simulated scan and the outputs go (default /dev/shm: memory, so storage
# does not bind). Environment: SIZE (2048: detector columns = slice width),
# PROJECTIONS (2048), ROWS (SIZE: slices), GPUS (all, or a list such as
# 0,1,2,3), RANKS (MPI ranks, default 2; 0 = no MPI run), OUT (where the
# JSON results and the log go, default ./scaling-results).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
scratch=${2:-/dev/shm}
size=${SIZE:-2048}
projections=${PROJECTIONS:-2048}
rows=${ROWS:-$size}
gpus=${GPUS:-all}
ranks=${RANKS:-2}
out=${OUT:-$PWD/scaling-results}
bench=$build/app/tomo-bench
[ -x "$bench" ] || { echo "scaling-table: no $bench (build first: scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"
scan=(--projections "$projections" --size "$size" --rows "$rows" --dir "$scratch")

{
    date -u +"%Y-%m-%d %H:%M UTC"
    nvidia-smi --query-gpu=index,name,memory.total --format=csv 2>/dev/null || true
    echo "cores: $(nproc), memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
    "$bench" --list | grep -E "^GPU|^strategy|hybrid|alu" || true

    for type in float32 float16; do
        echo; echo "== the writer alone, $type, into $scratch"
        "$bench" --pipeline --writer-threads 1,2,4,8,16,32 --size "$size" --rows "$rows" --dir "$scratch" \
            --output-type "$type" --json "$out/writer-$type.json"
    done

    # The scan is written once and kept for the later runs (same shape).
    for type in float32 float16; do
        echo; echo "== GPUs $gpus, default options, $type output"
        "$bench" "${scan[@]}" --pipeline --gpus "$gpus" --output-type "$type" --keep \
            --json "$out/gpus-$type.json"
    done

    if [ "$ranks" -gt 0 ] && command -v mpirun >/dev/null; then
        as_root=()
        [ "$(id -u)" = 0 ] && as_root=(--allow-run-as-root)
        echo; echo "== the writer alone, float32, into $scratch, shared by $ranks MPI ranks"
        mpirun "${as_root[@]}" -n "$ranks" "$bench" --pipeline --writer-threads 1,2,4,8,16 --size "$size" \
            --rows "$rows" --dir "$scratch" --mpi --json "$out/writer-mpi.json" || echo "(MPI run failed)"
        for type in float32 float16; do
            echo; echo "== $ranks MPI ranks, one GPU each (their local rank), $type output"
            mpirun "${as_root[@]}" -n "$ranks" "$bench" "${scan[@]}" --pipeline --mpi --output-type "$type" --keep \
                --json "$out/mpi-$type.json" || echo "(MPI run failed: a build without MPI says so above)"
        done
    else
        echo; echo "== no MPI run (RANKS=0 or no mpirun)"
    fi
} 2>&1 | tee "$out/scaling.log"

# What --keep left: the scan and the last output.
rm -rf "$scratch"/scan-"$projections"x"$rows"x"$size"-*.h5 "$scratch"/tomo-bench-volume.h5 "$scratch"/tomo-bench-volume
echo "results: $out"
