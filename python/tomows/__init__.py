"""Tomo Workstation's reconstruction engine from Python.

    import tomows
    scan = tomows.open("tooth.h5")                  # DXchange/NXtomo HDF5, TIFF, raw
    axis = tomows.find_axis(scan)["axis"]           # Vo et al.'s finder on 5 rows
    volume = tomows.reconstruct(scan, rows=(100, 110), center=axis)   # numpy [slice, y, x]

Arrays in: numpy (float32 C-ordered arrays are used in place, others are
converted once), anything numpy.asarray takes, CPU DLPack arrays, and CUDA
arrays of CuPy or PyTorch (``__cuda_array_interface__`` / DLPack): these are
copied to the host for the engine and the result is returned on their device
(the engine's plans take host memory; see the README, "Python"). CuPy and
PyTorch are optional.

Options are the keys of tomo-recon's run config (``--config``): strategy,
interpolation, precision, slices_per_pass, filter, padding, device,
opencl_device, tuning, threads, method, iterations, tv_weight, bounds, init,
tolerance; ``corrections`` is its "corrections" object.

Errors are raised as the engine reports them, same message:
    Error                 base of all (an Exception)
    IoError               (Error, OSError)     a file cannot be read or written
    FormatError           (Error, ValueError)  a file's content is not what was expected
    InvalidArgument       (Error, ValueError)  a bad option or argument
    DataError             (Error, ValueError)  NaN/inf in the data, too many clamped values
    DeviceError           (Error)              no such GPU, a device failed
    OutOfMemory           (Error, MemoryError)
    Cancelled             (Error)              the progress callback stopped the work
Ctrl-C during a long call stops the engine and raises KeyboardInterrupt; an
exception raised by the progress callback stops it and is raised as it is.
"""

import functools as _functools

import numpy as _np

from ._tomows import (  # noqa: F401
    Cancelled,
    DataError,
    Dataset,
    DeviceError,
    Error,
    FormatError,
    InvalidArgument,
    IoError,
    OutOfMemory,
    Plan,
    __version__,
    gpu_devices,
    open,
    preprocess,
    strategies,
)
from . import _tomows

__all__ = [
    "open", "from_array", "preprocess", "find_axis", "reconstruct", "Plan", "Dataset",
    "strategies", "gpu_devices", "bench", "Error", "IoError", "FormatError", "InvalidArgument",
    "DataError", "DeviceError", "OutOfMemory", "Cancelled",
]

_DLPACK_CPU = 1
_DLPACK_CUDA = 2


def _device_kind(a):
    """'cupy' or 'torch' for a CUDA array of those libraries, else None."""
    module = type(a).__module__.split(".")[0]
    if module in ("cupy", "torch") and (
        hasattr(a, "__cuda_array_interface__")
        or (hasattr(a, "__dlpack_device__") and a.__dlpack_device__()[0] == _DLPACK_CUDA)
    ):
        return module
    return None


def _host(a):
    """(numpy view or copy of a, how to give a result back on a's device)."""
    kind = _device_kind(a)
    if kind == "cupy":
        import cupy

        device = a.device
        return cupy.asnumpy(a), lambda r: _on_cupy(cupy, device, r)
    if kind == "torch":
        device = a.device
        host = a.detach().to("cpu").contiguous().numpy()
        return host, lambda r: _on_torch(device, r)
    if hasattr(a, "__cuda_array_interface__") or (
        hasattr(a, "__dlpack_device__") and a.__dlpack_device__()[0] == _DLPACK_CUDA
    ):
        raise InvalidArgument(
            "a CUDA array of %s: tomows takes CUDA arrays of CuPy and PyTorch (or numpy arrays)"
            % type(a).__module__
        )
    if not isinstance(a, _np.ndarray) and hasattr(a, "__dlpack__"):
        return _np.from_dlpack(a), None
    return a, None


def _on_cupy(cupy, device, r):
    with device:
        return cupy.asarray(r)


def _on_torch(device, r):
    import torch

    return torch.from_numpy(r).to(device)


def _back(result, restore):
    if restore is None:
        return result
    if isinstance(result, tuple):  # (array, details)
        return (restore(result[0]),) + result[1:]
    return restore(result)


def _array_first(function):
    """function(data, ...) taking GPU and DLPack arrays as data."""

    @_functools.wraps(function)
    def wrapper(data, *args, **kwargs):
        host, restore = _host(data) if not isinstance(data, (str, Dataset)) else (data, None)
        return _back(function(host, *args, **kwargs), restore)

    return wrapper


@_array_first
def from_array(sinograms, angles, name="array"):
    """A dataset of log-corrected sinograms [rows, angles, bins] (or one
    [angles, bins]) with their angles in radians, held in memory (copied
    once): for preprocess(), find_axis() and reconstruct() with corrections."""
    return _tomows.from_array(sinograms, angles, name)


@_array_first
def find_axis(data, angles=None, rows=None, tilt=False, search_radius=None, progress=None):
    """The rotation axis (detector column) and its confidence.

    data: a Dataset or a path (the finder on `rows`, five spread over the
    detector by default, flat/dark + log only, their consensus; tilt=True
    fits a line), or a log-corrected sinogram [angles, bins] with `angles`
    (radians). Returns a dict: axis, confidence (< 0.2 doubtful), and for a
    dataset tilt, reference_row, residual and each row's estimate."""
    return _tomows.find_axis(data, angles, rows, tilt, search_radius, progress)


@_array_first
def reconstruct(data, angles=None, center=None, rows=None, region=None, corrections=None,
                progress=None, details=False, allow_approximate=False, **options):
    """FBP of a dataset or of sinograms; a float32 volume [slice, y, x].

    data: a Dataset or a path: tomo-recon's path (the corrections, the axis
    found on five rows unless `center` is a column or "detector", the
    strategy resolved, the conveyor), rows=(start, stop). Or log-corrected
    sinograms [rows, angles, bins] / [angles, bins] with their `angles`
    (radians) and `center` (default: the detector centre).
    region=(x, y, width, height) of the slice grid (bins x bins);
    corrections: the run config's "corrections" dict, "default" or "none";
    progress(fraction, stage) is called as slices are done (raise to stop);
    details=True returns (volume, dict of what ran: strategy, axis, times).
    options: strategy ("auto"), interpolation, precision, slices_per_pass,
    filter, padding, device, opencl_device, tuning, threads; the iterative
    methods' method, iterations, tv_weight, bounds, init, tolerance."""
    return _tomows.reconstruct(data, angles, center, rows, region, corrections, progress, details,
                               allow_approximate, **options)


_plan_reconstruct = Plan.reconstruct
_plan_set_sinograms = Plan.set_sinograms


def _plan_reconstruct_any(self, sinograms, progress=None):
    host, restore = _host(sinograms)
    return _back(_plan_reconstruct(self, host, progress), restore)


def _plan_set_sinograms_any(self, sinograms):
    host, _ = _host(sinograms)
    _plan_set_sinograms(self, host)


_plan_reconstruct_any.__doc__ = "Filters and back-projects sinograms [rows, angles, bins] (or [angles, bins])."
_plan_set_sinograms_any.__doc__ = "Filters sinograms (at most max_slices) and keeps them for backproject()."
Plan.reconstruct = _plan_reconstruct_any
Plan.set_sinograms = _plan_set_sinograms_any


def bench(size=512, projections=512, slices=8, repeat=3, warmup=1, **options):
    """Back-projection speed of a strategy here: a Plan of `slices` sinograms
    of `projections` x `size` (random values: the time does not depend on
    them) reconstructed `warmup` + `repeat` times, as tomo-bench times one
    plan call end to end. Returns a dict: strategy and options that ran,
    seconds (the median), gups (size^2 x projections x slices / seconds /
    1e9), stage_times of the last run, every run's seconds."""
    import statistics
    import time

    angles = _np.linspace(0, _np.pi, projections, endpoint=False)
    sinograms = _np.random.default_rng(0).random((slices, projections, size), dtype=_np.float32)
    plan = Plan(angles, size, **options)
    for _ in range(warmup):
        plan.reconstruct(sinograms)
    runs = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        plan.reconstruct(sinograms)
        runs.append(time.perf_counter() - start)
    seconds = statistics.median(runs)
    return {
        "strategy": plan.strategy,
        "options": plan.options,
        "seconds": seconds,
        "gups": float(size) * size * projections * slices / seconds / 1e9,
        "stage_times": plan.stage_times,
        "runs_seconds": runs,
    }
