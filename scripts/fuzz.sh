#!/usr/bin/env bash
# Fuzzing with libFuzzer (Debian's clang and libclang-rt-14-dev, whose
# llvm-symbolizer names the frames that tell upstream hangs from ours;
# TOMO_FUZZ_CXX picks another clang++): builds the fuzz targets of tests/fuzz
# with AddressSanitizer and UndefinedBehaviorSanitizer in ./build-fuzz (no
# GUI, no CUDA), writes the seed
# corpora, and runs each target for SECONDS seconds (default 30). What the
# fuzzer learns stays in build-fuzz/fuzz/corpus/<target> for the next run;
# each crash is kept in build-fuzz/fuzz/findings/<target>/ with its report.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   scripts/fuzz.sh 15                  # CI: 15 s per target
#   scripts/fuzz.sh 3600 fuzz_hdf5      # a long local run of one target
#
# Exit status 1 when a target crashed, hung or ran out of memory in this
# program's code: fix it and add the input to tests/fuzz/regressions/<target>/
# (CTest replays those on every build). A crash or a hang whose innermost
# frames are all in libhdf5 or libtiff (a library's bug on damaged data,
# which tomo-recon turns into a one-line error) is listed as "upstream" and
# does not fail the run; the fuzzer is restarted (5 times at most) to spend its remaining time
# elsewhere. Without clang or libFuzzer the script says so and exits 0: the
# deterministic replay in CTest still runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TOMO_FUZZ_BUILD_DIR:-$root/build-fuzz}
shared=${TOMO_SHARED_DATA_DIR:-$root/../shared/data}
seconds=${1:-30}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(fuzz_hdf5 fuzz_tiff fuzz_tiff_folder fuzz_raw fuzz_run_config fuzz_numbers fuzz_volume fuzz_stream_message)
fi

# libFuzzer ships with clang's runtime (libclang-rt-14-dev on Debian).
cxx=${TOMO_FUZZ_CXX:-clang++}
cc=${cxx/clang++/clang}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
if ! command -v "$cxx" >/dev/null || ! "$cxx" -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  echo "fuzz: $cxx with libFuzzer not found (Debian: clang libclang-rt-14-dev); skipped, CTest's replay still runs"
  exit 0
fi

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "-DCMAKE_CXX_FLAGS=$flags" \
    -DTOMO_FUZZ=ON -DTOMO_WITH_GUI=OFF -DTOMO_WITH_CUDA=OFF -DTOMO_SHARED_DATA_DIR="$shared" >/dev/null
fi
cmake --build "$build" --target tomo-fuzz-seeds "${targets[@]}" --parallel "${TOMO_BUILD_JOBS:-$(nproc)}"

work=$build/fuzz
"$build/tests/fuzz/tomo-fuzz-seeds" "$work/seeds" "$shared"

# The first frame of the crash report outside the C/C++ runtime, the
# sanitizers (their interceptors of malloc, strdup, memcpy... appear as
# frames of the fuzz target itself) and libFuzzer says whose code failed.
culprit() {
  { grep -E '^ +#[0-9]+ ' "$1" || true; } |
    { grep -vE 'libc\.so|sysdeps/|libstdc\+\+|libgcc|libclang_rt|__sanitizer|__asan|__ubsan|__interceptor|fuzzer::|in abort |in raise |pthread_kill|__cxa_|std::terminate|__fortify_fail|__stack_chk_fail|__chk_fail|__libc_message|in (malloc|calloc|realloc|free|operator new|operator delete|(str|mem|wcs)[a-z]*)\b' || true; } |
    head -1
}

# A single allocation over 1 GiB returns null (as on a machine without the
# memory) instead of ending the run: libhdf5 asks for sizes a damaged header
# states (8 GB for an object of an 18 kB file) and reports its own error when
# the memory is not there, which the readers turn into one-line errors. Inputs
# are at most 1.1 MB, so nothing the program does with them needs 1 GiB at
# once; a cap near the 4 GiB RSS limit let one such allocation, touched and
# freed, push the run over it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/fuzz/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=0
for target in "${targets[@]}"; do
  corpus=$work/corpus/$target
  findings=$work/findings/$target
  mkdir -p "$corpus" "$findings"
  inputs=("$corpus" "$work/seeds/$target")
  [[ -d $root/tests/fuzz/regressions/$target ]] && inputs+=("$root/tests/fuzz/regressions/$target")
  left=$seconds
  runs=0
  restarts=0
  upstream=0
  verdict=ok
  while ((left > 0)); do
    log=$findings/run-$restarts.log
    start=$(date +%s)
    status=0
    # Inputs up to the largest seed (a real scan of about 1 MB); 4 GB of
    # memory: libhdf5 may take a few hundred MB on a damaged file.
    "$build/tests/fuzz/$target" -max_total_time="$left" -timeout=20 -rss_limit_mb=4096 -max_len=1100000 \
      -print_final_stats=1 -artifact_prefix="$findings/" \
      "${inputs[@]}" >"$log" 2>&1 || status=$?
    left=$((left - ($(date +%s) - start)))
    runs=$((runs + $(grep -oP 'stat::number_of_executed_units: \K[0-9]+' "$log" || echo 0)))
    ((status == 0)) && break
    frame=$(culprit "$log")
    artifact=$(grep -oP 'Test unit written to \K\S+' "$log" | tail -1 || true)
    # The library's own crashes, hangs and endless allocations (tomo-recon
    # meets them in a capped child process; tests/fuzz/upstream keeps some).
    if [[ $frame =~ libhdf5|libtiff ]] && ((restarts < 5)); then
      upstream=$((upstream + 1))
      [[ -n $artifact ]] && mv "$artifact" "$findings/upstream-$(basename "$artifact")"
      echo "fuzz: $target: upstream library crash at${frame#*in} (input kept in $findings)"
      restarts=$((restarts + 1))
      continue
    fi
    verdict="FAILED: $(grep -m1 -oE 'ERROR: [A-Za-z]+: [^(]*|libFuzzer: (timeout|out-of-memory|deadly signal)[^)]*' "$log" || echo "exit $status") in${frame#*in}; input $artifact, report $log"
    failed=1
    break
  done
  files=$(find "$corpus" -type f | wc -l)
  bytes=$(du -sk "$corpus" | cut -f1)
  echo "MEASURED fuzz $target: $runs inputs in $seconds s, corpus $files files ($bytes kB), $upstream upstream crash(es): $verdict"
done
exit $failed
