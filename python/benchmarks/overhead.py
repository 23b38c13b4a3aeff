#!/usr/bin/env python3
"""The module's overhead against the C++ programs on the same problems
(issue 32: at most 5 %). Two comparisons, alternated round by round so that
a noisy machine loads both alike, medians reported:

  in memory:  tomo-bench's end-to-end time of one plan call (filter +
              back-projection of SLICES sinograms held in memory) against
              tomows.Plan.reconstruct of the same-sized array (wall time in
              Python: argument checks, batches, the GIL, the result array);
  from file:  tomo-recon on a DXchange scan (wall time of the process: start,
              probe, open, conveyor, HDF5 output) against
              tomows.reconstruct(path) (wall time of the call).

    PYTHONPATH=build/python python3 python/benchmarks/overhead.py [--build build] [--rounds 5]
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
parser.add_argument("--rounds", type=int, default=5)
parser.add_argument("--size", type=int, default=512)
parser.add_argument("--projections", type=int, default=512)
parser.add_argument("--slices", type=int, default=8)
parser.add_argument("--strategy", default="cpu")
parser.add_argument("--scan", help="DXchange scan for the file comparison (default: tomo-recon's demo scan)")
args = parser.parse_args()
bench = os.path.join(args.build, "app", "tomo-bench")
recon = os.path.join(args.build, "app", "tomo-recon")
env = dict(os.environ, TOMO_AUTOTUNE="off")
work = tempfile.mkdtemp(prefix="tomows-overhead-")


def bench_seconds():
    out = os.path.join(work, "bench.json")
    subprocess.run([bench, "--strategy", args.strategy, "--interp", "linear", "--precision", "float32",
                    "--slices-per-pass", "1", "--size", str(args.size), "--projections", str(args.projections),
                    "--slices", str(args.slices), "--repeat", "1", "--warmup", "1", "--json", out],
                   check=True, capture_output=True, env=env)
    with open(out) as f:
        return json.load(f)["results"][0]["seconds_end_to_end"]


angles = np.linspace(0, np.pi, args.projections, endpoint=False)
sinograms = np.random.default_rng(0).random((args.slices, args.projections, args.size), dtype=np.float32)
plan = tomows.Plan(angles, args.size, strategy=args.strategy, slices_per_pass=1)
plan.reconstruct(sinograms)  # warm-up, as tomo-bench's


def module_seconds():
    start = time.perf_counter()
    plan.reconstruct(sinograms)
    return time.perf_counter() - start


def module_one_batch_seconds():
    # one batch of every slice (Plan.reconstruct makes eight, for progress and Ctrl-C)
    start = time.perf_counter()
    plan.set_sinograms(sinograms)
    plan.backproject()
    return time.perf_counter() - start


scan = args.scan
demo_folder = None
if scan is None:
    out = subprocess.run([recon, "--demo", "--strategy", args.strategy], check=True, capture_output=True,
                         text=True, env=env).stdout
    folder = out.split("demo: scan and result kept in ")[1].split("\n")[0].strip()
    scan = os.path.join(folder, "shepp_logan_dxchange.h5")
    demo_folder = folder
center = tomows.find_axis(scan)["axis"]


def recon_seconds():
    target = os.path.join(work, "out.h5")
    start = time.perf_counter()
    subprocess.run([recon, scan, "-o", target, "--overwrite", "--quiet", "--strategy", args.strategy,
                    "--center", repr(center)], check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def module_file_seconds():
    start = time.perf_counter()
    tomows.reconstruct(scan, strategy=args.strategy, center=center)
    return time.perf_counter() - start


times = {"tomo-bench": [], "Plan.reconstruct": [], "one batch": [], "tomo-recon": [], "reconstruct(path)": []}
for _ in range(args.rounds):
    times["tomo-bench"].append(bench_seconds())
    times["Plan.reconstruct"].append(module_seconds())
    times["one batch"].append(module_one_batch_seconds())
    times["tomo-recon"].append(recon_seconds())
    times["reconstruct(path)"].append(module_file_seconds())

median = {k: statistics.median(v) for k, v in times.items()}
print("in memory: %d sinograms of %d x %d, %s, %d rounds" % (args.slices, args.projections, args.size,
                                                              args.strategy, args.rounds))
print("  tomo-bench end to end %.3f s, tomows.Plan.reconstruct %.3f s: overhead %+.1f %%"
      % (median["tomo-bench"], median["Plan.reconstruct"],
         100 * (median["Plan.reconstruct"] / median["tomo-bench"] - 1)))
print("  set_sinograms + backproject (one batch, as tomo-bench's one call) %.3f s: %+.1f %%"
      % (median["one batch"], 100 * (median["one batch"] / median["tomo-bench"] - 1)))
print("from file: %s, %s" % (scan, tomows.open(scan)))
print("  tomo-recon (process) %.3f s, tomows.reconstruct(path) %.3f s: %+.1f %%"
      % (median["tomo-recon"], median["reconstruct(path)"],
         100 * (median["reconstruct(path)"] / median["tomo-recon"] - 1)))
print("  every run (s):", {k: [round(x, 3) for x in v] for k, v in times.items()})
shutil.rmtree(work)
if demo_folder:
    shutil.rmtree(demo_folder)
