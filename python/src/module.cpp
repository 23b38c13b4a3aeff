// tomows._tomows: the engine from Python (pybind11). A thin layer over core:
//
//   open(path, **open_options) -> Dataset       openDataset (the file readers)
//   from_array(sinograms, angles) -> Dataset    makeMemoryDataset (log-corrected data)
//   preprocess(dataset, rows, corrections)      PreprocessingStage::load
//   find_axis(sinogram | dataset, ...)          findRotationAxis / findAxisOnRows
//   reconstruct(dataset, ...)                   tomo-recon's path: the stage, the axis,
//                                               reconstructVolume into the numpy result
//   reconstruct(sinograms, angles, ...)         a Plan over the array
//   Plan(angles, bins, ...)                     BackendRegistry::createPlan: filter once,
//                                               back-project at any axis/region
//   strategies(), gpu_devices()                 the registry
//
// Options are the keys of the run config (tomo-recon --config, run_config.h)
// and are parsed by it, so a name, a value and an error read as they do there.
// Arrays: float32 C-contiguous input is used in place (others are converted
// once); results are written straight into the numpy arrays returned. CUDA
// arrays (CuPy, PyTorch; tomows/__init__.py's _CudaArray) go to plans that
// take device memory (takesDeviceMemory) as device pointers, results into an
// array of their library; other plans get explicit host copies. The GIL
// is released while the engine works; the progress callback takes it back,
// calls the user's function and checks for Ctrl-C (PyErr_CheckSignals), and
// either stops the engine by throwing Cancelled (the Python exception is then
// raised in its place). The engine's typed errors become tomows exceptions
// with the same messages (tomows/__init__.py documents the hierarchy).
#include "tomo/axis_finder.h"
#include "tomo/backend.h"
#include "tomo/cone_run.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/preview.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <numbers>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace tomo;

namespace {

// ------------------------------------------------------------------ errors

/// The module's exception types (owned by the module; created once at import).
struct ExceptionTypes {
    PyObject* error = nullptr;
    PyObject* io = nullptr;
    PyObject* format = nullptr;
    PyObject* invalid = nullptr;
    PyObject* data = nullptr;
    PyObject* device = nullptr;
    PyObject* memory = nullptr;
    PyObject* cancelled = nullptr;
};
ExceptionTypes g_errors;

PyObject* addException(py::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc) {
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(bases.size()));
    Py_ssize_t i = 0;
    for (PyObject* base : bases) {
        Py_INCREF(base);
        PyTuple_SET_ITEM(tuple, i++, base);
    }
    const std::string qualified = std::string("tomows.") + name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, tuple, nullptr);
    Py_DECREF(tuple);
    if (!type) throw py::error_already_set();
    m.add_object(name, py::handle(type)); // the module holds a reference; ours is never released
    return type;
}

void registerExceptions(py::module_& m) {
    g_errors.error = addException(m, "Error", {PyExc_Exception}, "Base of every error the engine reports.");
    g_errors.io = addException(m, "IoError", {g_errors.error, PyExc_OSError},
                               "A file could not be opened, read, written or renamed.");
    g_errors.format = addException(m, "FormatError", {g_errors.error, PyExc_ValueError},
                                   "A file's content is not what was expected.");
    g_errors.invalid = addException(m, "InvalidArgument", {g_errors.error, PyExc_ValueError},
                                    "An option or argument is out of range or inconsistent with the data.");
    g_errors.data = addException(m, "DataError", {g_errors.error, PyExc_ValueError},
                                 "The data hold values that cannot be processed (NaN, inf, too many clamped).");
    g_errors.device = addException(m, "DeviceError", {g_errors.error},
                                   "A compute device (GPU, OpenCL platform) is missing or failed.");
    g_errors.memory = addException(m, "OutOfMemory", {g_errors.error, PyExc_MemoryError},
                                   "Host or device memory is not sufficient for the work.");
    g_errors.cancelled = addException(m, "Cancelled", {g_errors.error},
                                      "The progress callback stopped the work.");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Cancelled& e) {
            PyErr_SetString(g_errors.cancelled, e.what());
        } catch (const IoError& e) {
            PyErr_SetString(g_errors.io, e.what());
        } catch (const FormatError& e) {
            PyErr_SetString(g_errors.format, e.what());
        } catch (const InvalidArgument& e) {
            PyErr_SetString(g_errors.invalid, e.what());
        } catch (const DataError& e) {
            PyErr_SetString(g_errors.data, e.what());
        } catch (const DeviceError& e) {
            PyErr_SetString(g_errors.device, e.what());
        } catch (const OutOfMemory& e) {
            PyErr_SetString(g_errors.memory, e.what());
        } catch (const Error& e) {
            PyErr_SetString(g_errors.error, e.what());
        }
    });
}

// ---------------------------------------------------------------- progress

/// The engine's ProgressCallback for a Python callable (or None). Called on
/// the thread that released the GIL; it takes the GIL, runs pending signal
/// handlers (Ctrl-C raises KeyboardInterrupt there) and the callable, and
/// turns a Python exception into Cancelled, keeping it to be raised when the
/// engine has stopped (run()).
class Progress {
public:
    explicit Progress(py::object callable) : m_callable(std::move(callable)) {}

    ProgressCallback callback() {
        return [this](double fraction, std::string_view stage) {
            py::gil_scoped_acquire gil;
            try {
                if (PyErr_CheckSignals() != 0) throw py::error_already_set();
                if (!m_callable.is_none()) m_callable(fraction, std::string(stage));
            } catch (py::error_already_set& e) {
                m_error = std::make_unique<py::error_already_set>(std::move(e));
                throw Cancelled();
            }
        };
    }

    /// Runs `work` without the GIL; a Cancelled caused by a Python exception
    /// raises that exception instead.
    template <class Work>
    auto run(Work&& work) {
        try {
            py::gil_scoped_release release;
            return work();
        } catch (const Cancelled&) {
            if (m_error) {
                auto error = std::move(m_error);
                throw py::error_already_set(std::move(*error));
            }
            throw;
        }
    }

    /// Between steps of a loop run with the GIL held.
    void check(double fraction, std::string_view stage) {
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (!m_callable.is_none()) m_callable(fraction, std::string(stage));
    }

private:
    py::object m_callable;
    std::unique_ptr<py::error_already_set> m_error;
};

// ------------------------------------------------------------------ arrays

/// float32, C order: used in place when the input is already so.
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

/// A numpy array that owns `values` (no copy).
py::array_t<float> ownedArray(std::vector<float>&& values, std::vector<py::ssize_t> shape) {
    auto* owner = new std::vector<float>(std::move(values));
    py::capsule release(owner, [](void* p) { delete static_cast<std::vector<float>*>(p); });
    return py::array_t<float>(std::move(shape), owner->data(), release);
}

py::array_t<double> doubles(const std::vector<double>& values) {
    py::array_t<double> out(static_cast<py::ssize_t>(values.size()));
    std::copy(values.begin(), values.end(), out.mutable_data());
    return out;
}

/// Sinograms as [rows][angles][bins]: a 2D array is one row.
struct SinogramView {
    const float* data = nullptr;
    int rows = 0;
    int angles = 0;
    int bins = 0;
    bool single = false; ///< the input was 2D: results drop the slice axis
    std::size_t values() const { return static_cast<std::size_t>(rows) * angles * bins; }
};

SinogramView sinogramView(const float* data, const std::vector<py::ssize_t>& shape, const char* what) {
    SinogramView v;
    if (shape.size() == 2) {
        v.single = true;
        v.rows = 1;
        v.angles = static_cast<int>(shape[0]);
        v.bins = static_cast<int>(shape[1]);
    } else if (shape.size() == 3) {
        v.rows = static_cast<int>(shape[0]);
        v.angles = static_cast<int>(shape[1]);
        v.bins = static_cast<int>(shape[2]);
    } else {
        throw InvalidArgument(std::string(what) + ": expected a 2D sinogram [angles, bins] or a 3D stack [rows, "
                              "angles, bins], got " + std::to_string(shape.size()) + " dimensions");
    }
    if (v.rows < 1 || v.angles < 1 || v.bins < 1) throw InvalidArgument(std::string(what) + ": the array is empty");
    v.data = data;
    return v;
}

SinogramView sinogramView(const FloatArray& a, const char* what) {
    return sinogramView(a.data(), std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()), what);
}

// ------------------------------------------------------------- CUDA arrays
//
// A CUDA array of CuPy or PyTorch arrives as tomows/__init__.py's
// _CudaArray: `array` (C-contiguous float32 on GPU `device`), `empty(shape)`
// (a result of the same library on that device), `synchronize()` (the
// library's current stream there), and `host()` / `to_device(numpy)`, the
// counted copies for plans that take host memory only.

bool isCudaArray(const py::handle& data) { return py::hasattr(data, "_tomows_cuda_array"); }

/// The device pointer of a C-contiguous float32 array with __cuda_array_interface__.
float* devicePointer(const py::handle& array, std::vector<py::ssize_t>* shape, const char* what) {
    const py::dict cai = array.attr("__cuda_array_interface__");
    const std::string type = cai["typestr"].cast<std::string>();
    const auto dims = cai["shape"].cast<std::vector<py::ssize_t>>();
    bool contiguous = true;
    std::string strides = "None";
    if (cai.contains("strides") && !cai["strides"].is_none()) {
        const auto s = cai["strides"].cast<std::vector<py::ssize_t>>();
        strides = py::str(cai["strides"]);
        py::ssize_t expected = 4;
        for (std::size_t i = dims.size(); i-- > 0;) {
            if (dims[i] > 1 && s[i] != expected) contiguous = false;
            expected *= dims[i];
        }
    }
    if (type != "<f4" || !contiguous)
        throw InvalidArgument(std::string(what) + ": a CUDA array must be C-contiguous float32 (got typestr '" + type +
                              "', strides " + strides + ")");
    if (shape) *shape = dims;
    return reinterpret_cast<float*>(cai["data"].cast<py::tuple>()[0].cast<std::uintptr_t>());
}

SinogramView deviceSinograms(const py::handle& cuda, const char* what) {
    std::vector<py::ssize_t> shape;
    const float* data = devicePointer(cuda.attr("array"), &shape, what);
    return sinogramView(data, shape, what);
}

FloatArray hostArray(const py::object& data) {
    FloatArray a = FloatArray::ensure(isCudaArray(data) ? data.attr("host")() : data);
    if (!a) throw py::error_already_set();
    return a;
}

std::vector<double> anglesFrom(const py::object& angles, int expected, const char* what) {
    if (angles.is_none())
        throw InvalidArgument(std::string(what) + ": an array needs its angles (angles=..., radians, one per row "
                              "of the sinogram)");
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(angles);
    if (!a || a.ndim() != 1) throw InvalidArgument(std::string(what) + ": angles must be a 1D sequence of radians");
    std::vector<double> out(a.data(), a.data() + a.size());
    if (static_cast<int>(out.size()) != expected)
        throw InvalidArgument(std::string(what) + ": " + std::to_string(out.size()) + " angles for " +
                              std::to_string(expected) + " projections");
    return out;
}

// ----------------------------------------------------------------- options

/// A Python value as JSON (bool, int, float, str, None, sequences, dicts,
/// numpy scalars and arrays), for the run-config parser.
nlohmann::json jsonOf(const py::handle& v) {
    if (py::hasattr(v, "dtype") && py::hasattr(v, "tolist")) return jsonOf(v.attr("tolist")()); // numpy
    if (v.is_none()) return nullptr;
    if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::int_>(v)) return v.cast<long long>();
    if (py::isinstance<py::float_>(v)) return v.cast<double>();
    if (py::isinstance<py::dict>(v)) {
        nlohmann::json o = nlohmann::json::object();
        for (auto item : v.cast<py::dict>()) o[py::str(item.first).cast<std::string>()] = jsonOf(item.second);
        return o;
    }
    if (py::hasattr(v, "__fspath__")) return py::module_::import("os").attr("fspath")(v).cast<std::string>();
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v) || py::isinstance<py::sequence>(v)) {
        nlohmann::json a = nlohmann::json::array();
        for (auto item : v) a.push_back(jsonOf(item));
        return a;
    }
    throw InvalidArgument("cannot use a value of type " + py::str(v.get_type().attr("__name__")).cast<std::string>() +
                          " as an option");
}

/// The run config of these keyword arguments (run_config.h's keys, each in
/// `allowed`); a key outside `allowed` or a bad value is InvalidArgument
/// with the parser's message.
RunConfig runConfigOf(const py::dict& options, const std::set<std::string>& allowed, const char* function) {
    nlohmann::json j = nlohmann::json::object();
    for (auto item : options) {
        const std::string key = py::str(item.first);
        if (!allowed.count(key)) {
            std::string names;
            for (const std::string& k : allowed) names += (names.empty() ? "" : ", ") + k;
            throw InvalidArgument(std::string(function) + "() got an unexpected option '" + key + "' (expected " +
                                  names + ")");
        }
        j[key] = jsonOf(item.second);
    }
    try {
        return runConfigFromJson(j.dump());
    } catch (const FormatError& e) {
        throw InvalidArgument(e.what()); // the option was bad, not a file
    }
}

const std::set<std::string> kOpenKeys = {"angles_file", "angles_lines", "angle_range", "angle_units",
                                         "raw_shape",   "raw_type",     "raw_header",  "raw_big_endian"};
const std::set<std::string> kReconKeys = {"strategy", "interpolation", "precision", "slices_per_pass", "filter",
                                          "padding",  "device",        "opencl_device", "tuning", "threads",
                                          // the iterative methods (iterative.h)
                                          "method", "iterations", "tv_weight", "bounds", "init", "tolerance",
                                          "projector"};

/// Rows [first, first + count) of `available` from None (all), (start, stop),
/// a range or a slice (step 1).
std::pair<int, int> rowRange(const py::object& rows, int available, const char* what) {
    if (rows.is_none()) return {0, available};
    long long start = 0, stop = available;
    if (py::isinstance<py::slice>(rows)) {
        py::ssize_t s = 0, e = 0, step = 0, length = 0;
        if (!rows.cast<py::slice>().compute(available, &s, &e, &step, &length) || step != 1)
            throw InvalidArgument(std::string(what) + ": rows must be a slice with step 1");
        start = s;
        stop = e;
    } else if (py::isinstance(rows, py::module_::import("builtins").attr("range"))) {
        if (rows.attr("step").cast<long long>() != 1) throw InvalidArgument(std::string(what) + ": rows must be a range with step 1");
        start = rows.attr("start").cast<long long>();
        stop = rows.attr("stop").cast<long long>();
    } else {
        const auto pair = rows.cast<std::vector<long long>>();
        if (pair.size() != 2) throw InvalidArgument(std::string(what) + ": rows must be (start, stop)");
        start = pair[0];
        stop = pair[1];
    }
    if (start < 0 || stop > available || start >= stop)
        throw InvalidArgument(std::string(what) + ": rows " + std::to_string(start) + ".." + std::to_string(stop - 1) +
                              " are not inside the dataset's rows 0.." + std::to_string(available - 1) +
                              " (rows = (start, stop), stop excluded)");
    return {static_cast<int>(start), static_cast<int>(stop - start)};
}

std::optional<Region> regionOf(const py::object& region, const char* what) {
    if (region.is_none()) return std::nullopt;
    const auto r = region.cast<std::vector<int>>();
    if (r.size() != 4) throw InvalidArgument(std::string(what) + ": region must be (x, y, width, height)");
    return Region{r[0], r[1], r[2], r[3]};
}

/// `options` with the run config's defaults for "auto": slices per pass chosen too unless given.
ReconOptions requestedOptions(const RunConfig& config, const py::dict& options, bool allowApproximate) {
    ReconOptions o = config.options;
    o.allowApproximate = allowApproximate;
    if (o.strategy == "auto" && !options.contains("slices_per_pass")) o.slicesPerPass = 0;
    return o;
}

py::dict optionsDict(const ReconOptions& o) {
    py::dict d;
    d["strategy"] = o.strategy;
    d["tuning"] = o.tuning;
    d["interpolation"] = std::string(interpolationName(o.interpolation));
    d["precision"] = std::string(precisionName(o.precision));
    d["slices_per_pass"] = o.slicesPerPass;
    d["filter"] = std::string(filterWindowName(o.filter.window));
    d["padding"] = std::string(paddingName(o.filter.padding));
    d["device"] = o.device;
    d["threads"] = o.threads;
    return d;
}

py::dict statsDict(const PreprocessStats& s) {
    py::dict d;
    d["clamped"] = s.clamped;
    d["dead_pixels"] = s.deadPixelCount;
    d["bad_values"] = s.badValueCount;
    d["zingers"] = s.zingerCount;
    d["flat_zingers"] = s.flatZingerCount;
    d["clamped_by_corrections"] = s.clampedByCorrections;
    if (s.rings.rows > 0) d["ring_damage"] = s.rings.summary();
    return d;
}

// ----------------------------------------------------------------- dataset

/// A reader and the lock that keeps it to one engine call at a time (readers
/// are used from one thread).
struct Dataset {
    std::unique_ptr<DatasetReader> reader;
    std::mutex mutex;
    const DatasetInfo& info() const { return reader->info(); }
};
using DatasetPtr = std::shared_ptr<Dataset>;

DatasetPtr openFile(const py::object& pathArg, const py::kwargs& kwargs) {
    const std::string path = py::module_::import("os").attr("fspath")(pathArg).cast<std::string>();
    py::dict config;
    OpenOptions extra;
    for (auto item : kwargs) {
        const std::string key = py::str(item.first);
        if (key == "log_corrected") extra.logCorrected = item.second.cast<bool>();
        else if (key == "variable") extra.variable = item.second.cast<std::string>();
        else config[item.first] = item.second;
    }
    std::set<std::string> allowed = kOpenKeys;
    OpenOptions open = runConfigOf(config, allowed, "open").open;
    open.logCorrected = extra.logCorrected;
    open.variable = extra.variable;
    open.allowDivergentBeam = true; // reconstruct() takes fan/cone beams (FDK or an iterative method)
    auto ds = std::make_shared<Dataset>();
    // Its metadata read in a child process first, as tomo-recon does: a file
    // that crashes libhdf5 raises FormatError instead of ending Python.
    Progress progress{py::none()};
    const ProgressCallback checkSignals = progress.callback();
    const auto interrupted = [&] {
        try {
            checkSignals(0.0, "open");
            return false;
        } catch (const Cancelled&) {
            return true; // Ctrl-C: raised once the child is gone
        }
    };
    progress.run([&] {
        probeDatasetInChildProcess(path, open, interrupted);
        ds->reader = openDataset(path, open);
    });
    return ds;
}

DatasetPtr fromArray(const FloatArray& sinograms, const py::object& angles, const std::string& name) {
    const SinogramView v = sinogramView(sinograms, "from_array");
    ImageStack stack(v.bins, v.angles, v.rows);
    std::memcpy(stack.data.data(), v.data, v.values() * sizeof(float));
    auto ds = std::make_shared<Dataset>();
    ds->reader = makeMemoryDataset(std::move(stack), anglesFrom(angles, v.angles, "from_array"), name);
    return ds;
}

/// A path (str or os.PathLike) opens a file; a Dataset is used as it is.
DatasetPtr datasetOf(const py::object& data) {
    if (py::isinstance<Dataset>(data)) return data.cast<DatasetPtr>();
    return openFile(data, py::kwargs());
}

/// find_axis and preprocess work on parallel-beam data; a fan/cone-beam
/// scan's axis is in its geometry, and reconstruct() corrects its rows itself.
void refuseDivergent(const Dataset& ds, const char* what) {
    const DatasetInfo& info = ds.info();
    if (info.divergentBeam)
        throw InvalidArgument(std::string(what) + ": " + info.path.string() + " is a fan/cone-beam scan (" +
                              info.divergentBeam->declared + "); " + what +
                              " applies to parallel-beam data (reconstruct() takes this one: FDK or an iterative "
                              "method)");
}

bool isArray(const py::object& data) {
    return py::isinstance<py::array>(data) || py::isinstance<py::list>(data) || py::isinstance<py::tuple>(data) ||
           isCudaArray(data);
}

py::array_t<float> readRows(Dataset& ds, int first, int count) {
    const DatasetInfo& info = ds.info();
    std::vector<float> values(static_cast<std::size_t>(count) * info.projections * info.columns);
    {
        py::gil_scoped_release release;
        std::lock_guard lock(ds.mutex);
        ds.reader->readSinograms(first, count, values);
    }
    return ownedArray(std::move(values), {count, info.projections, info.columns});
}

py::object readField(Dataset& ds, int first, int count, bool flat) {
    const DatasetInfo& info = ds.info();
    std::vector<float> values(static_cast<std::size_t>(count) * info.columns);
    bool found = false;
    {
        py::gil_scoped_release release;
        std::lock_guard lock(ds.mutex);
        found = flat ? ds.reader->readMeanFlat(first, count, values) : ds.reader->readMeanDark(first, count, values);
    }
    if (!found) return py::none();
    return ownedArray(std::move(values), {count, info.columns});
}

CorrectionOptions correctionsOf(const py::object& corrections) {
    if (corrections.is_none()) return {};
    if (py::isinstance<py::str>(corrections)) {
        const std::string name = corrections.cast<std::string>();
        if (name == "none") return CorrectionOptions::none();
        if (name == "default") return {};
        throw InvalidArgument("corrections: expected a dict (the run config's \"corrections\" object), \"default\" "
                              "or \"none\", got '" + name + "'");
    }
    py::dict config;
    config["corrections"] = corrections;
    return runConfigOf(config, {"corrections"}, "corrections").corrections;
}

// ----------------------------------------------------------------- the axis

py::dict estimateDict(const AxisEstimate& e) {
    py::dict d;
    d["axis"] = e.axis;
    d["confidence"] = e.confidence;
    d["uniqueness"] = e.uniqueness;
    d["split_distance"] = e.splitDistance;
    d["outliers"] = e.outliers;
    d["doubt"] = e.doubt;
    d["method"] = e.method;
    return d;
}

py::dict searchDict(const AxisSearch& s) {
    py::dict d;
    d["axis"] = s.line.axis;
    d["tilt"] = s.line.tilt;
    d["reference_row"] = s.line.referenceRow;
    d["confidence"] = s.confidence;
    d["residual"] = s.residual;
    py::list rows;
    for (const AxisSearch::Row& r : s.rows) {
        py::dict row = estimateDict(r.estimate);
        row["row"] = r.row;
        row["used"] = r.used;
        rows.append(row);
    }
    d["rows"] = rows;
    return d;
}

/// Rows the finder searches: given, or five spread over the detector (tomo-recon's default).
std::vector<int> searchRows(const py::object& rows, int available) {
    if (rows.is_none()) return spreadRows(0, available, 5);
    std::vector<int> out = rows.cast<std::vector<int>>();
    for (int r : out)
        if (r < 0 || r >= available)
            throw InvalidArgument("find_axis: row " + std::to_string(r) + " is outside the dataset (rows 0.." +
                                  std::to_string(available - 1) + ")");
    return out;
}

py::dict findAxis(const py::object& data, const py::object& angles, const py::object& rows, bool tilt,
                  const py::object& searchRadius, const py::object& progress) {
    const double radius = searchRadius.is_none() ? -1.0 : searchRadius.cast<double>();
    if (isArray(data)) {
        const FloatArray a = hostArray(data);
        const SinogramView v = sinogramView(a, "find_axis");
        if (!v.single) return findAxis(py::cast(fromArray(a, angles, "array")), py::none(), rows, tilt, searchRadius, progress);
        Image sinogram(v.bins, v.angles);
        std::memcpy(sinogram.data.data(), v.data, v.values() * sizeof(float));
        const std::vector<double> a2 = anglesFrom(angles, v.angles, "find_axis");
        AxisEstimate e;
        {
            py::gil_scoped_release release;
            e = findRotationAxis(sinogram, a2, radius);
        }
        return estimateDict(e);
    }
    DatasetPtr ds = datasetOf(data);
    if (!angles.is_none()) throw InvalidArgument("find_axis: a dataset has its own angles (drop angles=)");
    refuseDivergent(*ds, "find_axis");
    const std::vector<int> searched = searchRows(rows, ds->info().rows);
    Progress bridge(progress);
    const AxisSearch s = bridge.run([&] {
        std::lock_guard lock(ds->mutex);
        return findAxisOnRows(*ds->reader, searched, tilt, radius, bridge.callback());
    });
    return searchDict(s);
}

// ------------------------------------------------------------ reconstruction

/// Writes the conveyor's slices into one array (the numpy result).
class ArrayWriter final : public VolumeWriter {
public:
    ArrayWriter(float* data, std::size_t slicePixels, int slices)
        : m_data(data), m_slicePixels(slicePixels), m_slices(slices) {}
    void writeSlices(int first, int count, std::span<const float> data) override {
        if (first < 0 || count < 0 || first + count > m_slices || data.size() != m_slicePixels * count)
            throw InvalidArgument("array writer: slices " + std::to_string(first) + "+" + std::to_string(count) +
                                  " do not fit the volume");
        std::memcpy(m_data + m_slicePixels * first, data.data(), data.size() * sizeof(float));
    }
    void commit() override {}

private:
    float* m_data;
    std::size_t m_slicePixels;
    int m_slices;
};

/// How `center` chose the axis: None/"auto" (the finder, as tomo-recon), "detector" or a column.
struct CenterChoice {
    enum Kind { Auto, Detector, Given } kind = Auto;
    double column = 0.0;
};

CenterChoice centerOf(const py::object& center) {
    if (center.is_none()) return {};
    if (py::isinstance<py::str>(center)) {
        const std::string s = center.cast<std::string>();
        if (s == "auto") return {};
        if (s == "detector") return {CenterChoice::Detector, 0.0};
        throw InvalidArgument("center: expected a detector column, \"auto\" or \"detector\", got '" + s + "'");
    }
    return {CenterChoice::Given, center.cast<double>()};
}

py::dict reportDict(const VolumeReport& r) {
    py::dict d;
    d["strategy"] = r.strategy;
    d["corrected_on"] = r.correctedOn;
    d["slices"] = r.slices;
    d["chunk_rows"] = r.chunkRows;
    d["preprocess"] = statsDict(r.preprocess);
    d["warnings"] = r.warnings;
    d["seconds_total"] = r.secondsTotal;
    d["seconds_setup"] = r.secondsSetup;
    d["seconds_read"] = r.secondsRead;
    d["seconds_preprocess"] = r.secondsPreprocess;
    d["seconds_reconstruct"] = r.secondsReconstruct;
    d["seconds_write"] = r.secondsWrite;
    d["gups"] = r.gups;
    d["bottleneck"] = r.bottleneck();
    return d;
}

/// reconstruct() of a fan/cone-beam dataset: the whole volume, as tomo-recon
/// makes it (tomo/cone_run.h). volume=(nx, ny, nz) and voxel_size= set the
/// grid (default: the geometry's).
py::object reconstructDivergent(Dataset& ds, const py::object& centerArg, const py::object& rowsArg,
                                const py::object& regionArg, const py::object& correctionsArg,
                                const py::object& progress, bool details, bool allowApproximate,
                                const py::dict& given) {
    const DatasetInfo& info = ds.info();
    py::dict options = given.attr("copy")(); // volume and voxel_size are taken out
    auto notHere = [&](const std::string& what) {
        return InvalidArgument("reconstruct: " + what + " does not apply to fan/cone-beam data (" + info.path.string() +
                               " declares " + info.divergentBeam->declared + "; the whole volume is reconstructed)");
    };
    for (const auto& [name, arg] : {std::pair<const char*, const py::object*>{"center", &centerArg},
                                    {"rows", &rowsArg}, {"region", &regionArg}, {"corrections", &correctionsArg}})
        if (!arg->is_none()) throw notHere(name);
    for (const char* key : {"interpolation", "precision", "slices_per_pass", "opencl_device", "tuning", "projector"})
        if (options.contains(key)) throw notHere(key);
    std::optional<std::vector<int>> volumeSize;
    double voxelSize = 0.0;
    if (options.contains("volume")) {
        volumeSize = options["volume"].cast<std::vector<int>>();
        if (volumeSize->size() != 3 || *std::min_element(volumeSize->begin(), volumeSize->end()) < 1)
            throw InvalidArgument("reconstruct: volume is (nx, ny, nz), each at least 1");
        PyDict_DelItemString(options.ptr(), "volume");
    }
    if (options.contains("voxel_size")) {
        voxelSize = options["voxel_size"].cast<double>();
        if (!(voxelSize > 0.0) || !std::isfinite(voxelSize))
            throw InvalidArgument("reconstruct: voxel_size must be a positive length (the geometry's unit)");
        PyDict_DelItemString(options.ptr(), "voxel_size");
    }
    const RunConfig config = runConfigOf(options, kReconKeys, "reconstruct");
    const ReconOptions requested = requestedOptions(config, options, allowApproximate);

    Progress bridge(progress);
    const ProgressCallback callback = bridge.callback();
    std::optional<DivergentReconstruction> run;
    ImageStack volume = bridge.run([&] {
        std::lock_guard lock(ds.mutex);
        ConeSetup setup = coneSetup(info);
        VolumeGrid grid = setup.grid;
        if (volumeSize) {
            grid.nx = (*volumeSize)[0];
            grid.ny = (*volumeSize)[1];
            grid.nz = (*volumeSize)[2];
        }
        if (voxelSize > 0.0) grid.voxelSize = voxelSize;
        run.emplace(info, std::move(setup), grid, requested);
        callback(0.0, "reconstructing");
        ImageStack v = run->reconstruct(*ds.reader, [&](const IterationState& s) {
            callback(static_cast<double>(s.iteration) / s.iterations, "reconstructing");
            return true;
        });
        callback(1.0, "reconstructing");
        return v;
    });
    const VolumeGrid& g = run->grid();
    py::array_t<float> result = ownedArray(std::move(volume.data), {g.nz, g.ny, g.nx});
    if (!details) return py::object(std::move(result));
    const DivergentReport& r = run->report();
    py::dict d;
    d["method"] = run->method();
    d["runs_on"] = run->runsOn();
    d["geometry"] = run->setup().description;
    d["volume"] = py::make_tuple(g.nx, g.ny, g.nz);
    d["voxel_size"] = g.voxelSize;
    d["volume_centre"] = py::make_tuple(g.centre[0], g.centre[1], g.centre[2]);
    d["seconds_read"] = r.secondsRead;
    d["seconds_filter"] = r.secondsFilter;
    d["seconds_reconstruct"] = r.secondsReconstruct;
    if (r.iterative) {
        d["iterations"] = r.iterative->iterations;
        d["residual"] = r.iterative->residuals.empty() ? 0.0 : r.iterative->residuals.front();
    } else {
        d["short_scan"] = r.coverage.shortScan;
        d["angular_span_degrees"] = r.coverage.span * 180.0 / std::numbers::pi;
    }
    return py::make_tuple(std::move(result), d);
}

/// tomo-recon's run of a dataset (app/tomo_recon.cpp, run()): the stage for
/// the corrected sinograms' geometry, the axis (given, the detector centre,
/// the stitched centre with 360° stitching, or the finder on five rows), the
/// strategy resolved, then the conveyor into the result.
py::object reconstructDataset(Dataset& ds, const py::object& centerArg, const py::object& rowsArg,
                              const py::object& regionArg, const py::object& correctionsArg,
                              const py::object& progress, bool details, bool allowApproximate, const py::dict& options) {
    const DatasetInfo& info = ds.info();
    if (info.divergentBeam)
        return reconstructDivergent(ds, centerArg, rowsArg, regionArg, correctionsArg, progress, details,
                                    allowApproximate, options);
    for (const char* key : {"volume", "voxel_size"})
        if (options.contains(key))
            throw InvalidArgument(std::string("reconstruct: ") + key + " applies to fan/cone-beam data only; " +
                                  info.path.string() + " declares no divergent beam");
    const RunConfig config = runConfigOf(options, kReconKeys, "reconstruct");
    const CorrectionOptions corrections = correctionsOf(correctionsArg);
    const auto [first, count] = rowRange(rowsArg, info.rows, "reconstruct");
    const std::optional<Region> region = regionOf(regionArg, "reconstruct");
    const CenterChoice center = centerOf(centerArg);
    const ReconOptions requested = requestedOptions(config, options, allowApproximate);

    Progress bridge(progress);
    std::vector<float> volume;
    VolumeJob job;
    std::string axisSource;
    std::optional<AxisSearch> search;
    const VolumeReport report = bridge.run([&] {
        std::lock_guard lock(ds.mutex);
        PreprocessingStage stage(*ds.reader, corrections);
        Geometry geometry;
        geometry.angles = stage.outputAngles();
        geometry.bins = stage.outputColumns();
        AxisLine line;
        if (center.kind == CenterChoice::Given) {
            line.axis = center.column;
            axisSource = "given";
        } else if (center.kind == CenterChoice::Detector) {
            line.axis = (info.columns - 1) / 2.0;
            axisSource = "detector centre";
        } else if (stage.outputAxis()) {
            line.axis = *stage.outputAxis();
            axisSource = "stitched sinogram centre";
        } else {
            search = findAxisOnRows(*ds.reader, spreadRows(0, info.rows, 5), false, -1.0, bridge.callback());
            line = search->line;
            axisSource = "found automatically";
        }
        geometry.axis = line.at(first);
        ReconGeometry recon = ReconGeometry::fullSlice(geometry);
        if (region) recon.region = *region;
        recon.validate();
        job.firstRow = first;
        job.rowCount = count;
        job.geometry = recon;
        job.axisLine = line;
        job.options = BackendRegistry::instance().resolveOptions(requested, recon);
        job.corrections = stage.options();
        volume.resize(recon.region.pixels() * static_cast<std::size_t>(count));
        ArrayWriter writer(volume.data(), recon.region.pixels(), count);
        return reconstructVolume(*ds.reader, job, writer, bridge.callback());
    });
    const Region& r = job.geometry.region;
    py::array_t<float> result = ownedArray(std::move(volume), {count, r.height, r.width});
    if (!details) return py::object(std::move(result));
    py::dict d = reportDict(report);
    d["axis"] = job.axisLine->axis;
    d["axis_source"] = axisSource;
    if (search) d["axis_search"] = searchDict(*search);
    d["options"] = optionsDict(job.options);
    d["region"] = py::make_tuple(r.x, r.y, r.width, r.height);
    d["rows"] = py::make_tuple(first, first + count);
    return py::make_tuple(result, d);
}

// -------------------------------------------------------------------- plans

/// A reconstruction plan for one geometry: the registry's strategy for these
/// options, filtering once per set of sinograms, back-projecting at any axis
/// and region (the live preview's pattern).
class Plan {
public:
    Plan(const py::object& angles, int bins, const py::object& center, const py::object& sliceShape,
         const py::object& region, bool allowApproximate, const py::kwargs& kwargs) {
        py::dict options;
        for (auto item : kwargs) options[item.first] = item.second;
        const RunConfig config = runConfigOf(options, kReconKeys, "Plan");
        const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(angles);
        if (!a || a.ndim() != 1) throw InvalidArgument("Plan: angles must be a 1D sequence of radians");
        Geometry g;
        g.angles.assign(a.data(), a.data() + a.size());
        g.bins = bins;
        g.axis = center.is_none() ? g.detectorCentre() : center.cast<double>();
        ReconGeometry recon = ReconGeometry::fullSlice(g);
        if (!sliceShape.is_none()) {
            const auto shape = sliceShape.cast<std::vector<int>>();
            if (shape.size() != 2) throw InvalidArgument("Plan: slice_shape must be (height, width)");
            recon.sliceHeight = shape[0];
            recon.sliceWidth = shape[1];
            recon.region = {0, 0, shape[1], shape[0]};
        }
        if (auto r = regionOf(region, "Plan")) recon.region = *r;
        g.validate();
        recon.validate();
        const ReconOptions requested = requestedOptions(config, options, allowApproximate);
        py::gil_scoped_release release;
        m_plan = createPlan(recon, BackendRegistry::instance().resolveOptions(requested, recon));
    }

    const ReconstructionPlan& plan() const { return *m_plan; }

    /// Filters and back-projects every slice of `sinograms` (batches of
    /// maxSlices), written straight into the returned array: numpy, or for a
    /// CUDA array one of its library on its GPU (plans that take host memory
    /// only get a counted copy each way).
    py::object reconstruct(const py::object& sinograms, const py::object& progress) {
        if (isCudaArray(sinograms) && m_plan->takesDeviceMemory()) {
            const SinogramView v = deviceSinograms(sinograms, "Plan.reconstruct");
            requireShape(v);
            requireDevice(sinograms, "Plan.reconstruct");
            py::object out = sinograms.attr("empty")(outputShape(v.single, v.rows));
            float* dst = devicePointer(out, nullptr, "Plan.reconstruct");
            sinograms.attr("synchronize")(); // the input written, the output's memory free
            run(v, dst, progress);
            return out;
        }
        const FloatArray host = hostArray(sinograms);
        const SinogramView v = sinogramView(host, "Plan.reconstruct");
        requireShape(v);
        py::array_t<float> out(outputShape(v.single, v.rows));
        run(v, out.mutable_data(), progress);
        return isCudaArray(sinograms) ? sinograms.attr("to_device")(out) : py::object(std::move(out));
    }

    /// Filters the sinograms and keeps them (and, for a CUDA array, where
    /// backproject() returns its result).
    void setSinograms(const py::object& sinograms) {
        const bool onDevice = isCudaArray(sinograms) && m_plan->takesDeviceMemory();
        FloatArray host;
        SinogramView v;
        if (onDevice) {
            v = deviceSinograms(sinograms, "Plan.set_sinograms");
            requireDevice(sinograms, "Plan.set_sinograms");
            sinograms.attr("synchronize")();
        } else {
            host = hostArray(sinograms);
            v = sinogramView(host, "Plan.set_sinograms");
        }
        requireShape(v);
        {
            py::gil_scoped_release release;
            std::lock_guard lock(m_mutex);
            m_plan->setSinograms({v.data, v.values()}, v.rows);
            m_count = v.rows;
            m_single = v.single;
        }
        m_origin = isCudaArray(sinograms) ? sinograms : py::none();
    }

    py::object backproject() {
        if (m_count == 0) throw InvalidArgument("Plan.backproject: no sinograms set (call set_sinograms first)");
        const std::size_t values = m_plan->geometry().region.pixels() * m_count;
        if (!m_origin.is_none() && m_plan->takesDeviceMemory()) {
            py::object out = m_origin.attr("empty")(outputShape(m_single, m_count));
            float* dst = devicePointer(out, nullptr, "Plan.backproject");
            m_origin.attr("synchronize")();
            {
                py::gil_scoped_release release;
                std::lock_guard lock(m_mutex);
                m_plan->backproject({dst, values});
            }
            return out;
        }
        py::array_t<float> out(outputShape(m_single, m_count));
        {
            float* dst = out.mutable_data();
            py::gil_scoped_release release;
            std::lock_guard lock(m_mutex);
            m_plan->backproject({dst, values});
        }
        return m_origin.is_none() ? py::object(std::move(out)) : m_origin.attr("to_device")(out);
    }

    void setAxis(double axis, const py::object& offsets) {
        std::vector<double> o;
        if (!offsets.is_none()) o = offsets.cast<std::vector<double>>();
        std::lock_guard lock(m_mutex);
        m_plan->setAxis(axis, o);
    }

    void setRegion(const py::object& region) {
        std::lock_guard lock(m_mutex);
        m_plan->setRegion(*regionOf(region, "Plan.set_region"));
    }

private:
    std::vector<py::ssize_t> outputShape(bool single, int rows) const {
        const Region& r = m_plan->geometry().region;
        if (single) return {r.height, r.width};
        return {rows, r.height, r.width};
    }

    void requireDevice(const py::object& cuda, const char* what) const {
        const int device = cuda.attr("device").cast<int>();
        if (device != m_plan->options().device)
            throw InvalidArgument(std::string(what) + ": the array is on GPU " + std::to_string(device) +
                                  ", the plan runs on GPU " + std::to_string(m_plan->options().device) +
                                  " (option device)");
    }

    /// The batches of reconstruct() from `v` into `dst` (host or device memory, as v's).
    void run(const SinogramView& v, float* dst, const py::object& progress) {
        const Region& r = m_plan->geometry().region;
        const std::size_t in = static_cast<std::size_t>(v.angles) * v.bins;
        Progress bridge(progress);
        // A CPU plan (its threads share each slice) takes a stack in at
        // least eight calls, so that progress and Ctrl-C are seen meanwhile,
        // whole passes each; a GPU plan takes its most per call, as tomo-bench
        // times it (it overlaps the transfers of a call's slices).
        const Backend* backend = BackendRegistry::instance().find(m_plan->options().strategy);
        const int pass = std::max(1, m_plan->options().slicesPerPass);
        const int eighth = ((v.rows + 7) / 8 + pass - 1) / pass * pass;
        const bool cpu = backend && backend->family() == "cpu";
        const int batch = std::max(1, cpu ? std::min(m_plan->maxSlices(), eighth) : m_plan->maxSlices());
        for (int s = 0; s < v.rows; s += batch) {
            const int n = std::min(batch, v.rows - s);
            bridge.run([&] {
                std::lock_guard lock(m_mutex);
                m_plan->reconstruct({v.data + in * s, in * n}, n, {dst + r.pixels() * s, r.pixels() * n});
                return 0;
            });
            bridge.check(static_cast<double>(s + n) / v.rows, "reconstruct");
        }
    }

    void requireShape(const SinogramView& v) const {
        const Geometry& g = m_plan->geometry().geometry;
        if (v.angles != g.projections() || v.bins != g.bins)
            throw InvalidArgument("Plan: sinograms of " + std::to_string(v.angles) + " angles x " +
                                  std::to_string(v.bins) + " bins for a plan of " + std::to_string(g.projections()) +
                                  " x " + std::to_string(g.bins));
    }

    std::unique_ptr<ReconstructionPlan> m_plan;
    std::mutex m_mutex;
    int m_count = 0;
    bool m_single = false;
    py::object m_origin = py::none(); ///< the _CudaArray of the kept sinograms, or None (numpy)
};

/// reconstruct() of an array: a Plan with the given center (detector centre
/// by default: an array carries no rows to search; find_axis finds one).
py::object reconstructArray(const py::object& data, const py::object& angles, const py::object& center,
                            const py::object& rowsArg, const py::object& region, const py::object& corrections,
                            const py::object& progress, bool details, bool allowApproximate, const py::dict& options) {
    if (!corrections.is_none())
        throw InvalidArgument("reconstruct: corrections need a dataset (tomows.from_array(sinograms, angles) makes "
                              "one of an array)");
    // A CUDA array stays one (_CudaArray.rows slices it on its GPU).
    const bool cuda = isCudaArray(data);
    auto viewOf = [&](const py::object& x) {
        return cuda ? deviceSinograms(x, "reconstruct") : sinogramView(x.cast<FloatArray>(), "reconstruct");
    };
    py::object a = cuda ? data : py::object(hostArray(data));
    SinogramView v = viewOf(a);
    if (!rowsArg.is_none()) {
        if (v.single) throw InvalidArgument("reconstruct: rows= needs a 3D stack of sinograms");
        const auto [first, count] = rowRange(rowsArg, v.rows, "reconstruct");
        a = cuda ? a.attr("rows")(first, count) : py::object(FloatArray::ensure(a[py::slice(first, first + count, 1)]));
        v = viewOf(a);
    }
    const CenterChoice c = centerOf(center);
    if (c.kind == CenterChoice::Auto && !center.is_none())
        throw InvalidArgument("reconstruct: center=\"auto\" needs a dataset; for an array give the column "
                              "(tomows.find_axis(sinogram, angles)['axis'])");
    py::kwargs kwargs;
    for (auto item : options) kwargs[item.first] = item.second;
    if (cuda && !kwargs.contains("device")) kwargs["device"] = data.attr("device"); // the GPU holding the array
    const py::object axis = c.kind == CenterChoice::Given ? py::cast(c.column) : py::none();
    Plan plan(py::cast(anglesFrom(angles, v.angles, "reconstruct")), v.bins, axis, py::none(), region,
              allowApproximate, kwargs);
    py::object result = plan.reconstruct(a, progress);
    if (!details) return result;
    py::dict d;
    d["axis"] = plan.plan().geometry().geometry.axis;
    d["options"] = optionsDict(plan.plan().options());
    return py::make_tuple(result, d);
}

py::object reconstruct(const py::object& data, const py::object& angles, const py::object& center,
                       const py::object& rows, const py::object& region, const py::object& corrections,
                       const py::object& progress, bool details, bool allowApproximate, const py::kwargs& kwargs) {
    py::dict options;
    for (auto item : kwargs) options[item.first] = item.second;
    if (isArray(data))
        return reconstructArray(data, angles, center, rows, region, corrections, progress, details, allowApproximate,
                                options);
    if (!angles.is_none()) throw InvalidArgument("reconstruct: a dataset has its own angles (drop angles=)");
    DatasetPtr ds = datasetOf(data);
    return reconstructDataset(*ds, center, rows, region, corrections, progress, details, allowApproximate, options);
}

py::object preprocess(const py::object& data, const py::object& rowsArg, const py::object& corrections,
                      bool details) {
    DatasetPtr ds = datasetOf(data);
    refuseDivergent(*ds, "preprocess");
    const CorrectionOptions options = correctionsOf(corrections);
    const auto [first, count] = rowRange(rowsArg, ds->info().rows, "preprocess");
    PreprocessStats stats;
    std::vector<double> angles;
    std::optional<double> axis;
    std::vector<std::string> warnings;
    ImageStack sinograms;
    {
        py::gil_scoped_release release;
        std::lock_guard lock(ds->mutex);
        PreprocessingStage stage(*ds->reader, options);
        sinograms = stage.load(first, count, &stats);
        angles = stage.outputAngles();
        axis = stage.outputAxis();
        warnings = stage.warnings();
    }
    const int w = sinograms.width, h = sinograms.height, d = sinograms.depth;
    py::array_t<float> result = ownedArray(std::move(sinograms.data), {d, h, w});
    if (!details) return py::object(std::move(result));
    py::dict info = statsDict(stats);
    info["angles"] = doubles(angles);
    info["axis"] = axis ? py::cast(*axis) : py::none();
    info["warnings"] = warnings;
    return py::make_tuple(result, info);
}

py::list strategies() {
    py::list out;
    for (const Backend* b : BackendRegistry::instance().backends()) {
        py::dict d;
        d["name"] = b->name();
        d["family"] = b->family();
        d["description"] = b->description();
        d["exact"] = b->isExact();
        const std::string reason = b->unavailableReason();
        d["available"] = reason.empty();
        d["unavailable_reason"] = reason;
        d["iterative"] = b->hasProjector();
        out.append(d);
    }
    return out;
}

py::list gpus() {
    py::list out;
    for (const GpuDevice& g : gpuDevices()) {
        py::dict d;
        d["index"] = g.index;
        d["name"] = g.name;
        d["multiprocessors"] = g.multiprocessors;
        d["memory_bytes"] = g.memoryBytes;
        d["compute_capability"] = py::make_tuple(g.computeMajor, g.computeMinor);
        out.append(d);
    }
    return out;
}

} // namespace

PYBIND11_MODULE(_tomows, m) {
    m.doc() = "Tomo Workstation's engine: readers, corrections, axis finder, back-projection strategies.";
    m.attr("__version__") = TOMO_VERSION;
    registerExceptions(m);

    py::class_<Dataset, DatasetPtr>(m, "Dataset", "A scan opened for reading (tomows.open, tomows.from_array).")
        .def_property_readonly("shape",
                               [](const Dataset& d) {
                                   return py::make_tuple(d.info().projections, d.info().rows, d.info().columns);
                               },
                               "(projections, rows, columns)")
        .def_property_readonly("dtype", [](const Dataset& d) { return std::string(sampleTypeName(d.info().sampleType)); },
                               "the stored sample type: uint8, uint16, float32 or float64")
        .def_property_readonly("angles", [](const Dataset& d) { return doubles(d.info().angles); },
                               "projection angles in radians")
        .def_property_readonly("flats", [](const Dataset& d) { return d.info().flats; }, "flat images found")
        .def_property_readonly("darks", [](const Dataset& d) { return d.info().darks; }, "dark images found")
        .def_property_readonly("flat_positions", [](const Dataset& d) { return d.info().flatPositions; },
                               "where each group of flats was taken (-1 before, p + 0.5 between p and p + 1)")
        .def_property_readonly("format", [](const Dataset& d) { return std::string(formatName(d.info().format)); })
        .def_property_readonly("path", [](const Dataset& d) { return d.info().path.string(); })
        .def_property_readonly("log_corrected", [](const Dataset& d) { return d.info().logCorrected; })
        .def_property_readonly("warnings", [](const Dataset& d) { return d.info().warnings; })
        .def(
            "rows",
            [](Dataset& d, int start, int stop) {
                const auto [first, count] = rowRange(py::make_tuple(start, stop), d.info().rows, "Dataset.rows");
                return readRows(d, first, count);
            },
            py::arg("start"), py::arg("stop"),
            "Raw values of detector rows [start, stop) as float32 sinograms [row, angle, column].")
        .def(
            "flat",
            [](Dataset& d, int start, int stop) {
                const auto [first, count] = rowRange(py::make_tuple(start, stop), d.info().rows, "Dataset.flat");
                return readField(d, first, count, true);
            },
            py::arg("start"), py::arg("stop"), "Mean flat field of rows [start, stop) [row, column], or None.")
        .def(
            "dark",
            [](Dataset& d, int start, int stop) {
                const auto [first, count] = rowRange(py::make_tuple(start, stop), d.info().rows, "Dataset.dark");
                return readField(d, first, count, false);
            },
            py::arg("start"), py::arg("stop"), "Mean dark field of rows [start, stop) [row, column], or None.")
        .def("__repr__", [](const Dataset& d) {
            const DatasetInfo& i = d.info();
            return "<tomows.Dataset " + i.path.string() + ": " + formatName(i.format) + ", " +
                   std::to_string(i.projections) + " projections x " + std::to_string(i.rows) + " rows x " +
                   std::to_string(i.columns) + " columns, " + sampleTypeName(i.sampleType) + ">";
        });

    m.def("open", &openFile, py::arg("path"),
          "Opens a scan (DXchange/NXtomo HDF5, TIFF, raw with raw_shape=...). Options are the run config's "
          "angles_file, angles_lines, angle_range, angle_units, raw_shape, raw_type, raw_header, raw_big_endian, "
          "and log_corrected, variable (MATLAB). A file declaring a fan or cone beam opens too: reconstruct() makes its "
          "volume with FDK or an iterative method.");
    m.def("from_array", &fromArray, py::arg("sinograms"), py::arg("angles"), py::arg("name") = "array",
          "A dataset of log-corrected sinograms [rows, angles, bins] (or one [angles, bins]) held in memory "
          "(copied once), for preprocess/find_axis/reconstruct.");
    m.def("preprocess", &preprocess, py::arg("dataset"), py::arg("rows") = py::none(),
          py::arg("corrections") = py::none(), py::arg("details") = false,
          "The corrected line integrals [row, angle, column] of rows (start, stop): the preprocessing stage.");
    m.def("find_axis", &findAxis, py::arg("data"), py::arg("angles") = py::none(), py::arg("rows") = py::none(),
          py::arg("tilt") = false, py::arg("search_radius") = py::none(), py::arg("progress") = py::none(),
          "The rotation axis of a sinogram [angles, bins] (with angles) or a dataset (on rows, five by default).");
    m.def("reconstruct", &reconstruct, py::arg("data"), py::arg("angles") = py::none(), py::arg("center") = py::none(),
          py::arg("rows") = py::none(), py::arg("region") = py::none(), py::arg("corrections") = py::none(),
          py::arg("progress") = py::none(), py::arg("details") = false, py::arg("allow_approximate") = false,
          "FBP of a dataset (or path; tomo-recon's path) or of log-corrected sinograms with their angles.");
    m.def("strategies", &strategies, "Every strategy of this build, available or not.");
    m.def("gpu_devices", &gpus, "The CUDA GPUs this build can use.");

    py::class_<Plan>(m, "Plan", "A reconstruction plan: filter once, back-project at any axis and region.")
        .def(py::init<const py::object&, int, const py::object&, const py::object&, const py::object&, bool,
                      const py::kwargs&>(),
             py::arg("angles"), py::arg("bins"), py::arg("center") = py::none(), py::arg("slice_shape") = py::none(),
             py::arg("region") = py::none(), py::arg("allow_approximate") = false)
        .def_property_readonly("strategy", [](const Plan& p) { return p.plan().options().strategy; })
        .def_property_readonly("options", [](const Plan& p) { return optionsDict(p.plan().options()); })
        .def_property_readonly("max_slices", [](const Plan& p) { return p.plan().maxSlices(); })
        .def_property_readonly("memory_bytes", [](const Plan& p) { return p.plan().memoryBytes(); })
        .def_property_readonly("takes_device_arrays", [](const Plan& p) { return p.plan().takesDeviceMemory(); },
                               "True when CUDA arrays on the plan's GPU are used where they lie (no host copies)")
        .def_property_readonly("center", [](const Plan& p) { return p.plan().geometry().geometry.axis; })
        .def_property_readonly("region", [](const Plan& p) {
            const Region& r = p.plan().geometry().region;
            return py::make_tuple(r.x, r.y, r.width, r.height);
        })
        .def_property_readonly("stage_times", [](const Plan& p) {
            const StageTimes t = p.plan().lastStageTimes();
            py::dict d;
            d["upload"] = t.upload;
            d["filter"] = t.filter;
            d["backproject"] = t.backproject;
            d["download"] = t.download;
            d["compute"] = t.compute;
            return d;
        })
        .def("reconstruct", &Plan::reconstruct, py::arg("sinograms"), py::arg("progress") = py::none())
        .def("set_sinograms", &Plan::setSinograms, py::arg("sinograms"))
        .def("backproject", &Plan::backproject)
        .def("set_axis", &Plan::setAxis, py::arg("center"), py::arg("offsets") = py::none())
        .def("set_region", &Plan::setRegion, py::arg("region"));
}
