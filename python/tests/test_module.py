"""tomows against tomo-recon and the files themselves: the same options on the
same file give the same volume (bit for bit: the module runs tomo-recon's
path), readers return what the file holds, errors are exceptions with the
engine's messages, progress and cancel."""

import os
import pathlib
import signal
import sys
import threading
import time

import h5py
import numpy as np
import pytest

import tomows
from conftest import read_volume, real_scan, run_recon


# ------------------------------------------------------------------ readers


def test_open_reads_what_the_file_holds(demo_scan):
    ds = tomows.open(demo_scan)
    with h5py.File(demo_scan, "r") as f:
        data = f["/exchange/data"][...]  # [projection, row, column]
        flats = f["/exchange/data_white"][...]
        darks = f["/exchange/data_dark"][...]
        theta = f["/exchange/theta"][...]
    assert ds.shape == data.shape
    assert ds.dtype == str(data.dtype)
    assert (ds.flats, ds.darks) == (flats.shape[0], darks.shape[0])
    assert ds.format.startswith("DXchange")
    np.testing.assert_allclose(ds.angles, np.deg2rad(theta), rtol=0, atol=1e-12)
    rows = ds.rows(3, 7)  # sinogram order [row, angle, column], float32
    assert rows.dtype == np.float32 and rows.flags.c_contiguous
    assert np.array_equal(rows, data[:, 3:7, :].transpose(1, 0, 2).astype(np.float32))
    assert np.array_equal(ds.flat(3, 7), flats[:, 3:7, :].astype(np.float64).mean(axis=0).astype(np.float32))
    assert np.array_equal(ds.dark(3, 7), darks[:, 3:7, :].astype(np.float64).mean(axis=0).astype(np.float32))
    assert "256 columns" in repr(ds)


def test_from_array_has_no_flats_and_reads_back_the_array(phantom_sinograms):
    sinograms, angles, _ = phantom_sinograms
    ds = tomows.from_array(sinograms, angles)
    assert ds.shape == (180, 2, 96) and ds.log_corrected
    assert ds.flat(0, 2) is None
    assert np.array_equal(ds.rows(0, 2), sinograms)


# ------------------------------------------------- the same as tomo-recon


OPTION_SETS = [
    # (tomows keyword arguments, the same for tomo-recon)
    ({"strategy": "cpu"}, ["--strategy", "cpu"]),
    (
        {"strategy": "cpu-reference", "center": 126.75, "rows": (5, 9), "region": (20, 30, 150, 100),
         "interpolation": "nearest", "filter": "hann", "padding": "zero"},
        ["--strategy", "cpu-reference", "--center", "126.75", "--rows", "5:9", "--region", "20,30,150,100",
         "--interp", "nearest", "--filter", "hann", "--padding", "zero"],
    ),
    (
        {"strategy": "cpu", "center": "detector", "rows": (0, 3),
         "corrections": {"zingers": {"enabled": True}, "rings": {"method": "wavelet"}}},
        ["--strategy", "cpu", "--detector-center", "--rows", "0:3", "--zingers", "--rings", "wavelet"],
    ),
    (
        {"strategy": "cpu", "center": "detector", "rows": (7, 9), "method": "sirt", "iterations": 4,
         "bounds": [0, 1]},
        ["--strategy", "cpu", "--detector-center", "--rows", "7:9", "--method", "sirt", "--iterations", "4",
         "--bounds", "0,1"],
    ),
    (
        {"strategy": "cpu", "center": "detector", "rows": (4, 6), "method": "cgls", "iterations": 3,
         "projector": "fourier"},
        ["--strategy", "cpu", "--detector-center", "--rows", "4:6", "--method", "cgls", "--iterations", "3",
         "--projector", "fourier"],
    ),
]


@pytest.mark.parametrize("options,cli", OPTION_SETS, ids=["defaults", "options", "corrections", "sirt", "fourier"])
def test_reconstruct_equals_tomo_recon(demo_scan, tmp_path, options, cli):
    out = tmp_path / "cli.h5"
    run_recon(demo_scan, "-o", out, *cli)
    expected, attrs = read_volume(out)
    volume, details = tomows.reconstruct(demo_scan, details=True, **options)
    assert volume.dtype == np.float32 and volume.shape == expected.shape
    assert np.array_equal(volume, expected), "largest difference %g" % np.abs(volume - expected).max()
    assert details["axis"] == pytest.approx(float(attrs["axis"]), abs=1e-9)
    assert details["options"]["strategy"] == attrs["strategy"]


def test_the_tooth_equals_tomo_recon(tmp_path):
    tooth = real_scan("real/aps_tooth/tooth.h5")
    out = tmp_path / "tooth.h5"
    run_recon(tooth, "-o", out, "--strategy", "cpu")
    expected, attrs = read_volume(out)
    volume, details = tomows.reconstruct(tooth, strategy="cpu", details=True)
    assert np.array_equal(volume, expected)
    assert details["axis_source"] == "found automatically"
    assert details["axis"] == pytest.approx(float(attrs["axis"]), abs=1e-9)


def test_a_fan_beam_scan_equals_tomo_recon(tmp_path):
    # HTC2022's fan-beam scan (its geometry in its attributes): FDK and SIRT
    # of the whole slice, as tomo-recon makes them.
    htc = real_scan("real/helsinki_htc2022_fanbeam/htc2022_ta.h5")
    runs = [
        ({"strategy": "cpu"}, ["--strategy", "cpu"]),
        ({"strategy": "cpu", "method": "sirt", "iterations": 5, "volume": (96, 96, 1), "voxel_size": 0.8},
         ["--strategy", "cpu", "--method", "sirt", "--iterations", "5", "--volume", "96,96,1", "--voxel-size", "0.8"]),
    ]
    for n, (options, cli) in enumerate(runs):
        out = tmp_path / ("fan%d.h5" % n)
        run_recon(htc, "-o", out, *cli)
        expected, attrs = read_volume(out)
        volume, details = tomows.reconstruct(htc, details=True, **options)
        assert volume.dtype == np.float32 and volume.shape == expected.shape
        assert np.array_equal(volume, expected), "largest difference %g" % np.abs(volume - expected).max()
        assert details["method"] == attrs["reconstruction"]
        assert details["volume"] == tuple(reversed(expected.shape))
    assert details["iterations"] == 5 and 0 < details["residual"] < 1
    ds = tomows.open(htc)
    assert ds.shape == (721, 1, 560)
    for call, what in [(lambda: tomows.find_axis(ds), "find_axis"), (lambda: tomows.preprocess(ds), "preprocess"),
                       (lambda: tomows.reconstruct(ds, center=280.0), "center"),
                       (lambda: tomows.reconstruct(ds, interpolation="nearest"), "interpolation")]:
        with pytest.raises(tomows.InvalidArgument, match=what + ".*fan/cone-beam"):
            call()
    with pytest.raises(tomows.InvalidArgument, match="volume is"):
        tomows.reconstruct(ds, volume=(0, 96, 1))
    # Progress at the start, after each iteration and at the end; an
    # exception the callback raises stops the run and comes out as it is.
    calls = []
    small = {"strategy": "cpu", "method": "sirt", "iterations": 3, "volume": (32, 32, 1)}
    tomows.reconstruct(ds, progress=lambda f, stage: calls.append((f, stage)), **small)
    assert [f for f, _ in calls] == pytest.approx([0, 1 / 3, 2 / 3, 1, 1])
    assert {stage for _, stage in calls} == {"reconstructing"}

    class Stop(Exception):
        pass

    def stop(fraction, stage):
        if fraction > 0:
            raise Stop()

    with pytest.raises(Stop):
        tomows.reconstruct(ds, progress=stop, **small)


def test_fan_beam_options_are_refused_for_parallel_beam_data(demo_scan):
    with pytest.raises(tomows.InvalidArgument, match="volume applies to fan/cone-beam data only"):
        tomows.reconstruct(demo_scan, volume=(8, 8, 1))


def test_find_axis_equals_tomo_recon_and_the_sinogram_finder(demo_scan, tmp_path):
    out = tmp_path / "cli.h5"
    run_recon(demo_scan, "-o", out, "--strategy", "cpu", "--rows", "0:1")
    _, attrs = read_volume(out)
    found = tomows.find_axis(demo_scan)
    assert found["axis"] == float(attrs["axis"])
    assert [r["row"] for r in found["rows"]] == [1, 4, 8, 11, 14]  # tomo-recon's five rows
    assert found["confidence"] >= 0.5


def test_find_axis_of_a_sinogram_finds_the_true_axis(phantom_sinograms):
    sinograms, angles, axis = phantom_sinograms
    for row in sinograms:
        found = tomows.find_axis(row, angles)
        assert found["axis"] == pytest.approx(axis, abs=0.05)  # measured: 50.25 exactly
    stack = tomows.find_axis(sinograms, angles)  # a stack: each row, then the consensus
    assert stack["axis"] == pytest.approx(axis, abs=0.1)
    assert len(stack["rows"]) == 2


def test_array_path_equals_the_dataset_path(demo_scan):
    # The corrected sinograms reconstructed as an array equal the conveyor's run on the file.
    ds = tomows.open(demo_scan)
    sinograms, info = tomows.preprocess(ds, rows=(4, 8), details=True)
    assert sinograms.shape == (4, 360, 256)
    np.testing.assert_array_equal(info["angles"], ds.angles)
    from_file = tomows.reconstruct(ds, rows=(4, 8), center=128.25, strategy="cpu")
    from_array = tomows.reconstruct(sinograms, ds.angles, center=128.25, strategy="cpu")
    assert np.array_equal(from_file, from_array)
    single = tomows.reconstruct(sinograms[1], ds.angles, center=128.25, strategy="cpu")
    assert single.shape == (256, 256) and np.array_equal(single, from_file[1])


def test_reconstruction_of_a_phantom_is_right(phantom_sinograms):
    # Two discs (values 1 and 2 per pixel): the FBP inside each is the value.
    sinograms, angles, axis = phantom_sinograms
    volume = tomows.reconstruct(sinograms, angles, center=axis, strategy="cpu-reference")
    y, x = np.mgrid[0:96, 0:96]
    cx, cy = 47.5 + 6, 47.5 - 4  # the disc centre (6, -4): x = ix - 47.5, y = iy - 47.5 (geometry.h)
    inner = (x - cx) ** 2 + (y - cy) ** 2 < 8**2
    assert np.abs(volume[0][inner] - 1.0).max() < 5e-3  # 10x the measured 5.1e-4
    assert np.abs(volume[1][inner] - 2.0).max() < 5e-2  # 10x the measured 5.0e-3


def test_a_non_float32_or_strided_array_is_taken(phantom_sinograms):
    sinograms, angles, axis = phantom_sinograms
    expected = tomows.reconstruct(sinograms, angles, center=axis, strategy="cpu")
    as_double = tomows.reconstruct(sinograms.astype(np.float64), angles, center=axis, strategy="cpu")
    fortran = tomows.reconstruct(np.asfortranarray(sinograms), angles, center=axis, strategy="cpu")
    assert np.array_equal(as_double, expected) and np.array_equal(fortran, expected)


def test_plan_filters_once_and_back_projects_at_any_axis(phantom_sinograms):
    sinograms, angles, axis = phantom_sinograms
    plan = tomows.Plan(angles, 96, center=axis, strategy="cpu")
    assert plan.strategy == "cpu" and plan.center == axis and plan.max_slices >= 1
    plan.set_sinograms(sinograms)
    at_axis = plan.backproject()
    plan.set_axis(axis + 1.5)
    moved = plan.backproject()
    assert np.array_equal(at_axis, tomows.reconstruct(sinograms, angles, center=axis, strategy="cpu"))
    assert np.array_equal(moved, tomows.reconstruct(sinograms, angles, center=axis + 1.5, strategy="cpu"))
    plan.set_region((10, 20, 30, 40))
    assert plan.backproject().shape == (2, 40, 30)


def test_bench_times_the_strategy_asked_for():
    result = tomows.bench(size=64, projections=90, slices=2, repeat=3, strategy="cpu", interpolation="nearest")
    assert result["strategy"] == "cpu" and result["options"]["interpolation"] == "nearest"
    assert len(result["runs_seconds"]) == 3 and result["seconds"] in result["runs_seconds"]
    assert result["gups"] == pytest.approx(64 * 64 * 90 * 2 / result["seconds"] / 1e9)


def test_strategies_lists_the_registry():
    strategies = {s["name"]: s for s in tomows.strategies()}
    assert strategies["cpu-reference"]["available"] and strategies["cpu-reference"]["exact"]
    assert strategies["cpu"]["family"] == "cpu"
    for s in strategies.values():
        assert s["available"] == (s["unavailable_reason"] == "")


# ------------------------------------------------------------------ errors


def cli_error(*args):
    code, _, err = run_recon(*args, check=False)
    assert code != 0
    return err.strip()


def test_a_missing_file_is_an_io_error_with_tomo_recons_message(tmp_path):
    missing = tmp_path / "missing.h5"
    with pytest.raises(tomows.IoError) as e:
        tomows.open(str(missing))
    assert isinstance(e.value, OSError) and isinstance(e.value, tomows.Error)
    assert str(e.value) in cli_error(missing, "-o", tmp_path / "out.h5")


def test_a_volume_is_not_a_scan(demo_scan, tmp_path):
    out = tmp_path / "v.h5"
    run_recon(demo_scan, "-o", out, "--strategy", "cpu", "--rows", "0:1", "--detector-center")
    with pytest.raises(tomows.FormatError) as e:
        tomows.open(out)
    assert str(e.value) in cli_error(out, "-o", tmp_path / "out2.h5")


def test_files_that_crash_hdf5_raise_format_error_and_python_goes_on(tmp_path, monkeypatch):
    # libhdf5 1.10 faults, loops or allocates without end on these (found by
    # fuzzing): open reads the metadata in a child process first, as
    # tomo-recon does, and raises its error instead of ending Python.
    monkeypatch.setenv("TOMO_METADATA_TIMEOUT", "3")
    upstream = sorted((pathlib.Path(os.environ["TOMO_SOURCE_DIR"]) / "tests" / "fuzz" / "upstream").iterdir())
    assert len(upstream) >= 4
    for path in upstream:
        with pytest.raises(tomows.FormatError) as e:
            tomows.open(path)
        assert str(e.value).startswith(f"{path}: "), str(e.value)
        assert str(e.value) in cli_error(path, "-o", tmp_path / "out.h5")


def test_bad_options_are_invalid_arguments(demo_scan, phantom_sinograms):
    sinograms, angles, axis = phantom_sinograms
    with pytest.raises(tomows.InvalidArgument, match="no-such-strategy"):
        tomows.reconstruct(sinograms, angles, strategy="no-such-strategy")
    with pytest.raises(ValueError, match="interpolation"):
        tomows.reconstruct(sinograms, angles, interpolation="cubic")
    with pytest.raises(tomows.InvalidArgument, match="unexpected option 'strategi'"):
        tomows.reconstruct(sinograms, angles, strategi="cpu")
    with pytest.raises(tomows.InvalidArgument, match="angles"):
        tomows.reconstruct(sinograms, angles[:-1])
    with pytest.raises(tomows.InvalidArgument, match="rows 10..19"):
        tomows.reconstruct(demo_scan, rows=(10, 20))
    with pytest.raises(tomows.InvalidArgument, match="zingers"):
        tomows.preprocess(demo_scan, rows=(0, 1), corrections={"zingers": {"enabled": True, "threshold": -1}})
    with pytest.raises(tomows.InvalidArgument, match="region"):
        tomows.reconstruct(sinograms, angles, region=(90, 0, 20, 20))


def test_nan_in_the_data_is_a_data_error(phantom_sinograms):
    sinograms, angles, _ = phantom_sinograms
    bad = sinograms.copy()
    bad[1, 17, 40] = np.nan
    with pytest.raises(tomows.DataError, match="NaN"):
        tomows.reconstruct(tomows.from_array(bad, angles), center="detector", strategy="cpu")


# ------------------------------------------------------- progress, cancel


def test_progress_reaches_one(demo_scan):
    seen = {}
    tomows.reconstruct(demo_scan, strategy="cpu", progress=lambda f, stage: seen.setdefault(stage, []).append(f))
    # The conveyor's last call says "written" when the writer has finished
    # by then (its threads decide), else "reconstructing".
    assert list(seen) in (["finding the axis", "reconstructing"], ["finding the axis", "reconstructing", "written"])
    for fractions in seen.values():
        assert fractions == sorted(fractions)
    assert seen["finding the axis"][-1] == pytest.approx(1.0)
    assert list(seen.values())[-1][-1] == pytest.approx(1.0)


def test_an_exception_in_the_progress_callback_stops_the_work(demo_scan):
    class Stop(Exception):
        pass

    calls = []

    def stop(fraction, stage):
        calls.append(fraction)
        raise Stop("enough")

    with pytest.raises(Stop, match="enough"):
        tomows.reconstruct(demo_scan, strategy="cpu", center="detector", progress=stop)
    assert len(calls) == 1


def test_ctrl_c_cancels_a_long_reconstruction():
    # SIGINT is sent once the main thread is inside the engine (its Python
    # frame waits on the call); the engine runs no Python code (the progress
    # callback is a dict's __setitem__, a C function), so only the module's
    # check between batches (PyErr_CheckSignals) can see it: it raises
    # KeyboardInterrupt and stops the work before the last of eight batches.
    angles = np.linspace(0, np.pi, 360, endpoint=False)
    sinograms = np.random.default_rng(1).random((16, 360, 256), dtype=np.float32)
    plan = tomows.Plan(angles, 256, strategy="cpu-reference")
    fractions = {}
    main = threading.main_thread().ident
    stop = threading.Event()

    def interrupt_inside_the_engine():
        while not stop.is_set():
            frame = sys._current_frames().get(main)
            if frame is not None and frame.f_code.co_name == "_plan_reconstruct_any":
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.001)

    sender = threading.Thread(target=interrupt_inside_the_engine)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            plan.reconstruct(sinograms, progress=fractions.__setitem__)
    finally:
        stop.set()
        sender.join()
    assert max(fractions, default=0.0) < 1.0  # stopped before the last batch


def test_the_gil_is_released_while_the_engine_works():
    # Another Python thread runs while a reconstruction is in the engine.
    angles = np.linspace(0, np.pi, 360, endpoint=False)
    sinograms = np.random.default_rng(1).random((2, 360, 256), dtype=np.float32)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        # Half a second in the engine at least, however fast the machine
        # (one call: 0.95 s on 2 cores, a tenth of that on 16).
        before = len(ticks)
        start = time.monotonic()
        calls = 0
        while time.monotonic() - start < 0.5:
            tomows.reconstruct(sinograms, angles, strategy="cpu-reference")
            calls += 1
        elapsed = time.monotonic() - start
        during = len(ticks) - before
    finally:
        done.set()
        t.join()
    # The ticker wakes every millisecond while the GIL is free; with the GIL
    # held inside each call it could tick only between calls (about once
    # per call).
    assert during > max(2 * calls, 0.1 * elapsed * 1000)  # measured: 325 ticks in 0.95 s (1 call)
