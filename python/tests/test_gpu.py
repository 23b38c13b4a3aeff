"""GPU arrays: a CuPy (or PyTorch) CUDA array in gives the numpy path's
volume, returned on the same device. Skips without CuPy/PyTorch or a GPU
(CTest then reports the file as skipped)."""

import numpy as np
import pytest

import tomows


def cuda_libraries():
    found = []
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append("cupy")
    except Exception:  # not installed, or no driver/device
        pass
    try:
        import torch

        if torch.cuda.is_available():
            found.append("torch")
    except Exception:
        pass
    return found


LIBRARIES = cuda_libraries()


def sinograms():
    angles = np.linspace(0, np.pi, 180, endpoint=False)
    rng = np.random.default_rng(7)
    return rng.random((3, 180, 128), dtype=np.float32), angles


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_a_cuda_array_gives_the_numpy_result_on_its_device(library):
    if library not in LIBRARIES:
        pytest.skip("%s with a CUDA device is not available" % library)
    host, angles = sinograms()
    expected = tomows.reconstruct(host, angles, center=63.0, strategy="cpu")
    if library == "cupy":
        import cupy

        device_array = cupy.asarray(host)
        result = tomows.reconstruct(device_array, angles, center=63.0, strategy="cpu")
        assert isinstance(result, cupy.ndarray)
        back = cupy.asnumpy(result)
    else:
        import torch

        device_array = torch.from_numpy(host).to("cuda")
        result = tomows.reconstruct(device_array, angles, center=63.0, strategy="cpu")
        assert result.is_cuda
        back = result.cpu().numpy()
    assert np.array_equal(back, expected)


def test_a_gpu_strategy_matches_the_cpu_reference():
    if not tomows.gpu_devices():
        pytest.skip("no CUDA device")
    host, angles = sinograms()
    reference = tomows.reconstruct(host, angles, center=63.0, strategy="cpu-reference")
    gpu = tomows.reconstruct(host, angles, center=63.0, strategy="alu")
    scale = np.abs(reference).max()
    assert np.abs(gpu - reference).max() <= 1e-5 * scale  # alu linear equals cpu-reference to 1e-6 (README)
