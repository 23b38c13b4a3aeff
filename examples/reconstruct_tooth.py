#!/usr/bin/env python3
"""Reconstructs the APS tooth scan with tomows, notebook style: open, look at
the data, find the rotation axis, correct, reconstruct, compare strategies.

    PYTHONPATH=build/python python3 examples/reconstruct_tooth.py [TOOTH.h5] [OUT.png]

(installed: python3 /usr/share/doc/... or anywhere, with tomows on the path).
Writes the slice as a PNG when matplotlib is present."""

import sys
import time
from pathlib import Path

import numpy as np

import tomows

here = Path(__file__).resolve().parent
path = sys.argv[1] if len(sys.argv) > 1 else str(here / "../../shared/data/real/aps_tooth/tooth.h5")
png = sys.argv[2] if len(sys.argv) > 2 else "tooth_slice.png"

# 1. Open: the reader tells the layout, the angles, the flats and darks.
scan = tomows.open(path)
print(scan)
projections, rows, columns = scan.shape
print("angles %.2f..%.2f degrees, %d flats, %d darks"
      % (np.degrees(scan.angles[0]), np.degrees(scan.angles[-1]), scan.flats, scan.darks))

# 2. The raw sinogram of row 0 and its flat field, as numpy arrays.
raw = scan.rows(0, 1)[0]          # [angle, column], the stored counts as float32
flat = scan.flat(0, 1)[0]
print("raw counts %.0f..%.0f, mean flat %.0f" % (raw.min(), raw.max(), flat.mean()))

# 3. The rotation axis: Vo et al.'s finder on rows of the scan.
axis = tomows.find_axis(scan)
print("axis %.3f (confidence %.2f)" % (axis["axis"], axis["confidence"]))

# 4. The corrections: dead pixels (default) plus ring removal, as line integrals.
corrections = {"rings": {"method": "wavelet"}}
sinograms = tomows.preprocess(scan, corrections=corrections)
print("corrected sinograms", sinograms.shape, sinograms.dtype)

# 5. Reconstruct the whole scan (tomo-recon's path), with a progress callback.
def progress(fraction, stage):
    print("\r%s %3.0f%%" % (stage, 100 * fraction), end="", flush=True)

start = time.perf_counter()
volume, details = tomows.reconstruct(scan, center=axis["axis"], corrections=corrections,
                                     progress=progress, details=True)
print("\nvolume %s with %s in %.2f s" % (volume.shape, details["options"]["strategy"],
                                         time.perf_counter() - start))

# 6. The same sinograms as an array: filter once, move the axis without filtering again.
plan = tomows.Plan(scan.angles, columns, center=axis["axis"], strategy="cpu")
plan.set_sinograms(sinograms)
for shift in (-4.0, 0.0, 4.0):
    plan.set_axis(axis["axis"] + shift)
    slice_ = plan.backproject()[0]
    # a wrong axis draws arcs around every edge: more variation between neighbours
    print("axis %+.1f px: mean |difference of neighbours| %.3g" % (shift, np.abs(np.diff(slice_)).mean()))

# 7. An approximate mode against the exact reference.
exact = tomows.reconstruct(sinograms, scan.angles, center=axis["axis"], strategy="cpu-reference")
nearest = tomows.reconstruct(sinograms, scan.angles, center=axis["axis"], strategy="cpu",
                             interpolation="nearest")
print("nearest vs exact: max abs difference %.3g (values up to %.3g)"
      % (np.abs(nearest - exact).max(), np.abs(exact).max()))

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.imsave(png, volume[0], cmap="gray")
    print("slice written to", png)
except ImportError:
    print("(matplotlib not installed: no PNG)")
