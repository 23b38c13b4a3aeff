"""Fixtures of the tomows tests: tomo-recon (the reference the module must
equal), the demo scan it writes, the real scans of ../shared/data.

CTest sets TOMO_RECON_EXE, TOMO_SHARED_DATA_DIR, TOMO_REQUIRE_REAL_DATA and
PYTHONPATH (python/CMakeLists.txt). A test file whose tests all skipped exits
77, which CTest reports as skipped, not passed."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    passed = len(reporter.stats.get("passed", []))
    skipped = len(reporter.stats.get("skipped", []))
    if passed == 0 and skipped > 0:
        session.exitstatus = 77


def recon_exe():
    exe = os.environ.get("TOMO_RECON_EXE")
    if not exe or not os.path.exists(exe):
        pytest.fail("TOMO_RECON_EXE does not name the built tomo-recon (run the tests through ctest)")
    return exe


def run_recon(*args, check=True):
    """tomo-recon with these arguments: (exit code, stdout, stderr)."""
    env = dict(os.environ, TOMO_AUTOTUNE="off")
    p = subprocess.run([recon_exe(), *map(str, args)], capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError("tomo-recon %s failed (%d): %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p.returncode, p.stdout, p.stderr


def read_volume(path):
    import h5py  # here: test_gpu.py runs where h5py is not installed

    with h5py.File(path, "r") as f:
        return f["/volume"][...], dict(f["/volume"].attrs)


@pytest.fixture(scope="session")
def demo_scan(tmp_path_factory):
    """The DXchange scan of tomo-recon --demo (Shepp-Logan, 360 views x 16 rows
    x 256 columns, flats, darks, Poisson noise), kept in a session folder."""
    _, out, _ = run_recon("--demo", "--strategy", "cpu")
    folder = re.search(r"demo: scan and result kept in (.*)", out).group(1).strip()
    target = tmp_path_factory.mktemp("demo") / "shepp_logan_dxchange.h5"
    shutil.copy(os.path.join(folder, "shepp_logan_dxchange.h5"), target)
    shutil.rmtree(folder)
    return str(target)


def real_scan(relative):
    """The path of a real scan, or a skip (a failure when TOMO_REQUIRE_REAL_DATA)."""
    root = os.environ.get("TOMO_SHARED_DATA_DIR", os.path.join(os.path.dirname(__file__), "../../../shared/data"))
    path = os.path.join(root, relative)
    if not os.path.exists(path):
        message = "real scan %s not found (TOMO_SHARED_DATA_DIR=%s)" % (relative, root)
        if os.environ.get("TOMO_REQUIRE_REAL_DATA") in ("1", "ON", "TRUE", "true"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def phantom_sinograms():
    """Log-corrected sinograms of two rows of a disc and a square, 180 views x
    96 bins, axis at 50.25 (off the centre 47.5): (sinograms, angles, axis)."""
    angles = np.linspace(0, np.pi, 180, endpoint=False)
    axis = 50.25
    bins = np.arange(96, dtype=np.float64)
    rows = []
    for radius, value in ((20.0, 1.0), (12.0, 2.0)):
        sino = np.zeros((180, 96))
        # a disc of `radius` centred at (6, -4) in slice units: its chord length at each bin
        for a, theta in enumerate(angles):
            centre = 6 * np.cos(theta) + 4 * np.sin(theta) + axis
            d = bins - centre
            sino[a] = value * 2 * np.sqrt(np.clip(radius**2 - d**2, 0, None))
        rows.append(sino)
    return np.asarray(rows, dtype=np.float32), angles, axis
