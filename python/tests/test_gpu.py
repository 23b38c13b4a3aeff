"""GPU arrays: a CuPy or PyTorch CUDA array in gives the numpy path's volume
as an array of the same library on the same GPU. The CUDA texture strategies
use it where it lies: no copy through the host by the module
(tomows.host_copies()) or by the engine (the plan's upload stage does not
run); the other strategies get the module's explicit, counted copies.
The tests that need CuPy/PyTorch and a GPU skip, saying which is missing."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tomows


def cuda_libraries():
    found = {}
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found["cupy"] = cupy
    except Exception:  # not installed, or no driver/device
        pass
    try:
        import torch

        if torch.cuda.is_available():
            found["torch"] = torch
    except Exception:
        pass
    return found


LIBRARIES = cuda_libraries()
# A CUDA texture strategy (Plan.takes_device_arrays) and a host-memory one.
DEVICE_STRATEGY = "tex-optimized"
HOST_STRATEGY = "cpu"


def need(library):
    if library not in LIBRARIES:
        pytest.skip("%s with a CUDA device is not available here" % library)
    if not tomows.gpu_devices():
        pytest.skip("tomows sees no CUDA device (built without CUDA, or no GPU)")
    return LIBRARIES[library]


def sinograms():
    angles = np.linspace(0, np.pi, 180, endpoint=False)
    rng = np.random.default_rng(7)
    return rng.random((3, 180, 128), dtype=np.float32), angles


def on_device(library, host):
    lib = LIBRARIES[library]
    return lib.asarray(host) if library == "cupy" else lib.from_numpy(host).to("cuda")


def on_host(library, a):
    if library == "cupy":
        assert isinstance(a, LIBRARIES["cupy"].ndarray)
        return LIBRARIES["cupy"].asnumpy(a)
    assert isinstance(a, LIBRARIES["torch"].Tensor) and a.is_cuda
    return a.cpu().numpy()


def assert_close(result, expected):
    # The same kernels on the same filtered data: the C++ test
    # (tests/cuda/test_cuda_device_memory.cpp) finds them bit-identical;
    # 1e-6 of the peak is the bound.
    assert result.shape == expected.shape
    assert np.abs(result - expected).max() <= 1e-6 * np.abs(expected).max()


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_a_cuda_strategy_reconstructs_a_cuda_array_where_it_lies(library):
    need(library)
    host, angles = sinograms()
    expected = tomows.reconstruct(host, angles, center=63.0, strategy=DEVICE_STRATEGY)
    before = tomows.host_copies()
    result = tomows.reconstruct(on_device(library, host), angles, center=63.0, strategy=DEVICE_STRATEGY)
    assert tomows.host_copies() == before, "the module copied a GPU array through the host"
    assert_close(on_host(library, result), expected)
    # rows= slices the array on the GPU
    part = tomows.reconstruct(on_device(library, host), angles, center=63.0, strategy=DEVICE_STRATEGY, rows=(1, 3))
    assert_close(on_host(library, part), expected[1:3])


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_a_plan_keeps_cuda_arrays_on_the_gpu(library):
    need(library)
    host, angles = sinograms()
    plan = tomows.Plan(angles, 128, center=63.0, strategy=DEVICE_STRATEGY)
    assert plan.takes_device_arrays
    expected = plan.reconstruct(host)
    assert plan.stage_times["upload"] > 0  # numpy sinograms go up
    before = tomows.host_copies()
    result = plan.reconstruct(on_device(library, host))
    assert plan.stage_times["upload"] == 0, "the engine uploaded sinograms that were on the GPU"
    assert_close(on_host(library, result), expected)
    one = plan.reconstruct(on_device(library, host[1]))  # one sinogram: one slice
    assert_close(on_host(library, one), expected[1])
    # the live-preview pattern: filter once, back-project at another axis
    plan.set_sinograms(on_device(library, host))
    plan.set_axis(64.5)
    moved = plan.backproject()
    assert tomows.host_copies() == before, "the module copied a GPU array through the host"
    reference = tomows.Plan(angles, 128, center=64.5, strategy=DEVICE_STRATEGY).reconstruct(host)
    assert_close(on_host(library, moved), reference)


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_a_host_strategy_copies_a_cuda_array_explicitly_and_counts_it(library):
    need(library)
    host, angles = sinograms()
    expected = tomows.reconstruct(host, angles, center=63.0, strategy=HOST_STRATEGY)
    before = tomows.host_copies()
    result = tomows.reconstruct(on_device(library, host), angles, center=63.0, strategy=HOST_STRATEGY)
    after = tomows.host_copies()
    assert after["arrays"] - before["arrays"] == 2  # the sinograms down, the volume up
    assert after["bytes"] - before["bytes"] == host.nbytes + expected.nbytes
    assert np.array_equal(on_host(library, result), expected)  # the same CPU computation
    assert not tomows.Plan(angles, 128, strategy=HOST_STRATEGY).takes_device_arrays


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_other_dtypes_and_layouts_are_converted_on_the_gpu(library):
    lib = need(library)
    host, angles = sinograms()
    wide = np.asfortranarray(host.astype(np.float64))  # float64, not C-contiguous
    expected = tomows.reconstruct(wide, angles, center=63.0, strategy=DEVICE_STRATEGY)
    if library == "cupy":
        device = lib.asarray(wide)
    else:  # a permuted view of a [bins, angles, rows] tensor
        device = lib.from_numpy(np.ascontiguousarray(wide.transpose(2, 1, 0))).cuda().permute(2, 1, 0)
        assert not device.is_contiguous() and device.shape == host.shape
    before = tomows.host_copies()
    result = tomows.reconstruct(device, angles, center=63.0, strategy=DEVICE_STRATEGY)
    assert tomows.host_copies() == before
    assert_close(on_host(library, result), expected)


def test_a_gpu_strategy_matches_the_cpu_reference():
    if not tomows.gpu_devices():
        pytest.skip("no CUDA device")
    host, angles = sinograms()
    reference = tomows.reconstruct(host, angles, center=63.0, strategy="cpu-reference")
    gpu = tomows.reconstruct(host, angles, center=63.0, strategy="alu")
    scale = np.abs(reference).max()
    assert np.abs(gpu - reference).max() <= 1e-5 * scale  # alu linear equals cpu-reference to 1e-6 (README)


# These run everywhere (no GPU needed).


class ForeignCudaArray:
    """A CUDA array of a library tomows does not know (e.g. Numba's)."""

    __cuda_array_interface__ = {"shape": (2, 4, 4), "typestr": "<f4", "data": (1 << 40, False), "version": 3}


def test_a_cuda_array_of_another_library_is_refused_by_name():
    with pytest.raises(tomows.InvalidArgument, match="tomows takes CUDA arrays of CuPy and PyTorch"):
        tomows.reconstruct(ForeignCudaArray(), np.linspace(0, np.pi, 4, endpoint=False))


@pytest.mark.parametrize("typestr,strides,message", [
    ("<f8", None, r"got typestr '<f8', strides None"),
    ("<f4", (4, 32, 4), r"got typestr '<f4', strides \(4, 32, 4\)"),
])
def test_the_engine_takes_c_contiguous_float32_device_memory_only(typestr, strides, message):
    # What _CudaArray hands the engine, wrong: the engine refuses it before
    # touching the pointer (a made-up one here).
    class Wrong:
        __cuda_array_interface__ = {"shape": (2, 4, 8), "typestr": typestr, "strides": strides,
                                    "data": (1 << 40, False), "version": 3}

    class Handed:
        _tomows_cuda_array = True
        array = Wrong()
        device = 0

    with pytest.raises(tomows.InvalidArgument, match="reconstruct: a CUDA array must be C-contiguous float32 \\(" +
                       message):
        tomows._tomows.reconstruct(Handed(), np.linspace(0, np.pi, 4, endpoint=False), None, None, None, None,
                                   None, False, False)


def test_the_module_works_without_cupy_and_torch_and_imports_neither():
    code = ("import sys, numpy as np, tomows\n"
            "tomows.reconstruct(np.ones((2, 8, 16), np.float32), np.linspace(0, np.pi, 8), strategy='cpu')\n"
            "tomows.Plan(np.linspace(0, np.pi, 8), 16, strategy='cpu').reconstruct(np.ones((8, 16), np.float32))\n"
            "print(sorted(m for m in ('cupy', 'torch') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True)
    assert out.stdout.strip() == "[]"
