#!/usr/bin/env python3
"""The module's overhead against the C++ programs on the same problems
(issue 32: at most 5 %). Every comparison alternates the two sides round by
round, so that a noisy machine loads both alike, and reports the medians,
the minima (the least disturbed runs) and the median of the per-round
ratios:

  fixed cost: one Plan.reconstruct call of a tiny problem (1 sinogram of
              8 x 16, engine included), CALLS times per round, against
              tomo-bench's end-to-end time of the same problem (one plan
              call, in C++): the difference is what the module adds per call
              (argument checks, the GIL, the result array, the progress check);
  in memory:  tomo-bench's end-to-end time of the SLICES sinograms held in
              memory (filter + back-projection, its output buffer reused)
              against tomows.Plan.reconstruct of a same-sized array (wall
              time in Python, a fresh result array each call, as a user gets);
              and set_sinograms + backproject (one engine batch, as
              tomo-bench's one call);
  device:     with --cuda-array cupy|torch: Plan.reconstruct of a CUDA
              array (no host transfers) against tomo-bench's host path;
  from file:  tomo-recon on a DXchange scan (wall time of the process: start,
              probe, open, conveyor, HDF5 output) against
              tomows.reconstruct(path) (wall time of the call).

    PYTHONPATH=build/python python3 python/benchmarks/overhead.py [--build build] [--rounds 15]
    ... --strategy tex-optimized --cuda-array cupy     (on a GPU)

The sinograms are random (the time of FBP does not depend on the values);
tomo-bench's are a phantom of the same shape.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np

import tomows

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--build", default="build")
parser.add_argument("--rounds", type=int, default=15)
parser.add_argument("--size", type=int, default=512)
parser.add_argument("--projections", type=int, default=512)
parser.add_argument("--slices", type=int, default=8)
parser.add_argument("--calls", type=int, default=200, help="tiny calls per round for the fixed cost")
parser.add_argument("--strategy", default="cpu")
parser.add_argument("--cuda-array", choices=["cupy", "torch"], help="also time a CUDA array of this library")
parser.add_argument("--no-file", action="store_true", help="skip the tomo-recon comparison")
parser.add_argument("--scan", help="DXchange scan for the file comparison (default: tomo-recon's demo scan)")
args = parser.parse_args()
bench = os.path.join(args.build, "app", "tomo-bench")
recon = os.path.join(args.build, "app", "tomo-recon")
env = dict(os.environ, TOMO_AUTOTUNE="off")
work = tempfile.mkdtemp(prefix="tomows-overhead-")
options = dict(strategy=args.strategy, interpolation="linear", precision="float32", slices_per_pass=1)


def bench_seconds(size, projections, slices, repeat):
    """tomo-bench's median end-to-end seconds of one plan call over `repeat` runs."""
    out = os.path.join(work, "bench.json")
    subprocess.run([bench, "--strategy", args.strategy, "--interp", "linear", "--precision", "float32",
                    "--slices-per-pass", "1", "--size", str(size), "--projections", str(projections),
                    "--slices", str(slices), "--repeat", str(repeat), "--warmup", "1", "--json", out],
                   check=True, capture_output=True, env=env)
    with open(out) as f:
        return json.load(f)["results"][0]["seconds_end_to_end"]


def timed(function, calls=1):
    """Median seconds of `calls` calls of function()."""
    runs = []
    for _ in range(calls):
        start = time.perf_counter()
        function()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


rng = np.random.default_rng(0)
tiny_angles = np.linspace(0, np.pi, 8, endpoint=False)
tiny = rng.random((1, 8, 16), dtype=np.float32)
tiny_plan = tomows.Plan(tiny_angles, 16, **options)
angles = np.linspace(0, np.pi, args.projections, endpoint=False)
sinograms = rng.random((args.slices, args.projections, args.size), dtype=np.float32)
plan = tomows.Plan(angles, args.size, **options)
plan.reconstruct(sinograms)  # warm-up, as tomo-bench's
tiny_plan.reconstruct(tiny)


def one_batch():
    plan.set_sinograms(sinograms)
    plan.backproject()


comparisons = {  # name: (C++ side, module side)
    "fixed cost (tiny call)": (lambda: bench_seconds(16, 8, 1, args.calls),
                               lambda: timed(lambda: tiny_plan.reconstruct(tiny), args.calls)),
    "in memory, Plan.reconstruct": (lambda: bench_seconds(args.size, args.projections, args.slices, 1),
                                    lambda: timed(lambda: plan.reconstruct(sinograms))),
    "in memory, one batch": (None, lambda: timed(one_batch)),
}
if args.cuda_array:
    if args.cuda_array == "cupy":
        import cupy

        device_sinograms = cupy.asarray(sinograms)
        synchronize = cupy.cuda.get_current_stream().synchronize
    else:
        import torch

        device_sinograms = torch.from_numpy(sinograms).cuda()
        synchronize = torch.cuda.synchronize
    plan.reconstruct(device_sinograms)
    before = tomows.host_copies()

    def on_device():
        plan.reconstruct(device_sinograms)
        synchronize()

    comparisons["in memory, %s array" % args.cuda_array] = (None, lambda: timed(on_device))

scan = args.scan
demo_folder = None
if not args.no_file:
    if scan is None:
        out = subprocess.run([recon, "--demo", "--strategy", args.strategy], check=True, capture_output=True,
                             text=True, env=env).stdout
        demo_folder = out.split("demo: scan and result kept in ")[1].split("\n")[0].strip()
        scan = os.path.join(demo_folder, "shepp_logan_dxchange.h5")
    center = tomows.find_axis(scan)["axis"]

    def recon_seconds():
        start = time.perf_counter()
        subprocess.run([recon, scan, "-o", os.path.join(work, "out.h5"), "--overwrite", "--quiet", "--strategy",
                        args.strategy, "--center", repr(center)], check=True, capture_output=True, env=env)
        return time.perf_counter() - start

    comparisons["from file"] = (recon_seconds,
                                lambda: timed(lambda: tomows.reconstruct(scan, strategy=args.strategy, center=center)))

times = {name: ([], []) for name in comparisons}
for _ in range(args.rounds):
    for name, (cpp, module) in comparisons.items():
        if cpp is not None:
            times[name][0].append(cpp())
        times[name][1].append(module())

print("%s, %d rounds; sinograms %d x %d x %d; %d tiny calls per round" % (
    args.strategy, args.rounds, args.slices, args.projections, args.size, args.calls))
reference = statistics.median(times["in memory, Plan.reconstruct"][0])
for name, (cpp, module) in times.items():
    if cpp:
        ratios = [m / c for c, m in zip(cpp, module)]
        print("  %-30s C++ median %9.6f s min %9.6f | module median %9.6f s min %9.6f | "
              "module/C++: median of rounds %+.2f %%, of minima %+.2f %%"
              % (name, statistics.median(cpp), min(cpp), statistics.median(module), min(module),
                 100 * (statistics.median(ratios) - 1), 100 * (min(module) / min(cpp) - 1)))
    else:
        print("  %-30s module median %9.6f s min %9.6f (%+.2f %% of tomo-bench's median)"
              % (name, statistics.median(module), min(module),
                 100 * (statistics.median(module) / reference - 1)))
# What grows with the size: the module returns a fresh array (its pages
# faulted in as the engine writes), tomo-bench reuses one buffer.
shape = (args.slices, args.size, args.size)
fresh = timed(lambda: np.empty(shape, np.float32).fill(0.0), 5)
print("  a fresh %s float32 result array, written once: %.2f ms (%.3f %% of tomo-bench's in-memory call)"
      % ("x".join(map(str, shape)), fresh * 1e3, 100 * fresh / reference))
fixed_cpp, fixed_module = times["fixed cost (tiny call)"]
fixed = statistics.median(fixed_module) - statistics.median(fixed_cpp)
print("  fixed cost the module adds per call: %.1f us (%.3f %% of tomo-bench's in-memory call)"
      % (fixed * 1e6, 100 * fixed / reference))
if args.cuda_array:
    print("  host copies by the module during the %s runs: %s" % (
        args.cuda_array, {k: tomows.host_copies()[k] - before[k] for k in before}))
shutil.rmtree(work)
if demo_folder:
    shutil.rmtree(demo_folder)
