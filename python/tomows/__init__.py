"""Tomo Workstation's reconstruction engine from Python.

    import tomows
    scan = tomows.open("tooth.h5")                  # DXchange/NXtomo HDF5, TIFF, raw
    axis = tomows.find_axis(scan)["axis"]           # Vo et al.'s finder on 5 rows
    volume = tomows.reconstruct(scan, rows=(100, 110), center=axis)   # numpy [slice, y, x]

Arrays in: numpy (float32 C-ordered arrays are used in place, others are
converted once), anything numpy.asarray takes, CPU DLPack arrays, and CUDA
arrays of CuPy or PyTorch (read through ``__cuda_array_interface__``; other
dtypes and layouts are first made C-contiguous float32 on their GPU by their
library). reconstruct() and Plan return a CUDA array's result as an array of
the same library on the same GPU. The CUDA texture strategies (tex-standard,
tex-optimized, alu, hybrid, oversample; Plan.takes_device_arrays) filter the
sinograms where they lie and write the slices there: nothing passes through
the host. The other strategies (cpu*, gridrec, OpenCL, the iterative
methods) take host memory: the module then copies the array to the host and
the result back, explicitly, and counts it (host_copies()); so do
find_axis() and from_array(). The library's current stream is synchronised
before the engine reads; the call returns when the result is written.
CuPy and PyTorch are imported only when such an array is given.

Options are the keys of tomo-recon's run config (``--config``): strategy,
interpolation, precision, slices_per_pass, filter, padding, device,
opencl_device, tuning, threads, method, iterations, tv_weight, bounds, init,
tolerance, projector; ``corrections`` is its "corrections" object.

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
    "strategies", "gpu_devices", "bench", "host_copies", "Error", "IoError", "FormatError", "InvalidArgument",
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


_copies = {"arrays": 0, "bytes": 0}


def host_copies():
    """GPU arrays the module copied to the host, and results it copied back
    to a GPU, since import: {"arrays": n, "bytes": b}. Stays unchanged while
    a CUDA texture strategy reconstructs CUDA arrays."""
    return dict(_copies)


def _count(nbytes):
    _copies["arrays"] += 1
    _copies["bytes"] += int(nbytes)


class _CudaArray:
    """A CuPy or PyTorch CUDA array for the engine (python/src/module.cpp):
    `array`, C-contiguous float32 on GPU `device`, and what the engine needs
    of its library."""

    _tomows_cuda_array = True

    def __init__(self, a, kind):
        self.kind = kind
        if kind == "cupy":
            import cupy

            self.device = a.device.id
            with a.device:
                self.array = cupy.ascontiguousarray(a, dtype=cupy.float32)
        else:
            import torch

            self.device = a.device.index if a.device.index is not None else torch.cuda.current_device()
            self.array = a.detach().to(dtype=torch.float32).contiguous()

    def rows(self, first, count):
        """Rows [first, first + count) (contiguous: a view)."""
        part = object.__new__(_CudaArray)
        part.kind, part.device, part.array = self.kind, self.device, self.array[first:first + count]
        return part

    def empty(self, shape):
        if self.kind == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return cupy.empty(tuple(shape), dtype=cupy.float32)
        import torch

        return torch.empty(tuple(shape), dtype=torch.float32, device=torch.device("cuda", self.device))

    def synchronize(self):
        """Waits for the work queued on the library's current stream (the
        input's writes, earlier users of the result's memory)."""
        if self.kind == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                cupy.cuda.get_current_stream().synchronize()
        else:
            import torch

            torch.cuda.current_stream(self.device).synchronize()

    def host(self):
        _count(self.array.nbytes if self.kind == "cupy" else self.array.numel() * 4)
        if self.kind == "cupy":
            import cupy

            return cupy.asnumpy(self.array)
        return self.array.cpu().numpy()

    def to_device(self, result):
        _count(result.nbytes)
        if self.kind == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return cupy.asarray(result)
        import torch

        return torch.from_numpy(result).to(torch.device("cuda", self.device))


def _cuda(a):
    """A _CudaArray of a CuPy/PyTorch CUDA array, None for other arrays."""
    kind = _device_kind(a)
    if kind is not None:
        return _CudaArray(a, kind)
    if hasattr(a, "__cuda_array_interface__") or (
        hasattr(a, "__dlpack_device__") and a.__dlpack_device__()[0] == _DLPACK_CUDA
    ):
        raise InvalidArgument(
            "a CUDA array of %s: tomows takes CUDA arrays of CuPy and PyTorch (or numpy arrays)"
            % type(a).__module__
        )
    return None


def _engine_array(a):
    """What the engine takes for an array argument: a _CudaArray, a numpy
    array of a CPU DLPack array, or `a` as it is."""
    if isinstance(a, (str, Dataset)):
        return a
    cuda = _cuda(a)
    if cuda is not None:
        return cuda
    if not isinstance(a, _np.ndarray) and hasattr(a, "__dlpack__"):
        return _np.from_dlpack(a)
    return a


def _host_first(function):
    """function(data, ...) taking host memory, given CUDA (copied, counted)
    and DLPack arrays as data too."""

    @_functools.wraps(function)
    def wrapper(data, *args, **kwargs):
        data = _engine_array(data)
        return function(data.host() if isinstance(data, _CudaArray) else data, *args, **kwargs)

    return wrapper


@_host_first
def from_array(sinograms, angles, name="array"):
    """A dataset of log-corrected sinograms [rows, angles, bins] (or one
    [angles, bins]) with their angles in radians, held in memory (copied
    once): for preprocess(), find_axis() and reconstruct() with corrections."""
    return _tomows.from_array(sinograms, angles, name)


@_host_first
def find_axis(data, angles=None, rows=None, tilt=False, search_radius=None, progress=None):
    """The rotation axis (detector column) and its confidence.

    data: a Dataset or a path (the finder on `rows`, five spread over the
    detector by default, flat/dark + log only, their consensus; tilt=True
    fits a line), or a log-corrected sinogram [angles, bins] with `angles`
    (radians). Returns a dict: axis, confidence (< 0.2 doubtful), and for a
    dataset tilt, reference_row, residual and each row's estimate."""
    return _tomows.find_axis(data, angles, rows, tilt, search_radius, progress)


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
    methods' method, iterations, tv_weight, bounds, init, tolerance,
    projector (joseph or fourier). A fan/cone-beam dataset: the whole
    volume [z, y, x] with FDK or `method` (tomo-recon's path); volume=(nx,
    ny, nz) and voxel_size= set its grid; center, rows, region and
    corrections do not apply."""
    return _tomows.reconstruct(_engine_array(data), angles, center, rows, region, corrections, progress, details,
                               allow_approximate, **options)


_plan_reconstruct = Plan.reconstruct
_plan_set_sinograms = Plan.set_sinograms


def _plan_reconstruct_any(self, sinograms, progress=None):
    return _plan_reconstruct(self, _engine_array(sinograms), progress)


def _plan_set_sinograms_any(self, sinograms):
    a = _engine_array(sinograms)
    _plan_set_sinograms(self, a)
    if isinstance(a, _CudaArray):
        a.array = None  # the plan keeps the filtered sinograms, `a` where backproject()'s result goes


_plan_reconstruct_any.__doc__ = ("Filters and back-projects sinograms [rows, angles, bins] (or [angles, bins]); "
                                  "a CUDA array's result is an array of its library on its GPU.")
_plan_set_sinograms_any.__doc__ = ("Filters sinograms (at most max_slices) and keeps them for backproject() (which "
                                   "returns a CUDA array's result as an array of its library on its GPU).")
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
