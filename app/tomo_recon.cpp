// tomo-recon: batch reconstruction of a dataset (or the built-in demo
// phantom) into a volume file, with the same strategies as the workstation.
#include "axis_options.h"
#include "cli_support.h"
#include "follow.h"
#include "cone_options.h"
#include "correction_options.h"
#include "method_options.h"
#include "mpi_run.h"
#include "parallel_options.h"

#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/worker_pool.h"
#include "tomo/metrics.h"
#include "tomo/output_range.h"
#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preprocess.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <numbers>
#include <optional>
#include <sstream>

#include <chrono>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace tomo;
using namespace tomo::cli;

namespace {

constexpr const char* kProgram = "tomo-recon";


/// The built-in demo scan: a 3D Shepp-Logan phantom, 16 rows of 256 bins,
/// 360 views over 180 degrees, with flats, darks and Poisson noise.
PhantomSpec demoSpec() {
    PhantomSpec spec;
    spec.bins = 256;
    spec.rows = 16;
    return spec;
}
constexpr int kDemoAngles = 360;

/// Everything the command line can say; RunConfig fields are applied only
/// when given, so that they override --config.
struct CommandLine {
    std::string input;
    std::string output;
    bool follow = false;
    double followTimeout = 60.0;
    AxisCommandLine axis;
    std::string axisOffsets;
    std::string rows;
    std::string region;
    std::string strategy = "auto";
    std::string interp = "linear";
    std::string precision = "float32";
    int slicesPerPass = 1;
    std::string filter = "ram-lak";
    std::string padding = "edge";
    int device = 0;
    std::string openclDevice;
    std::string tuning;
    bool allowApproximate = false;
    int threads = 0;
    double memoryBudget = 0.0; // GiB, 0 = default
    std::string angles;
    std::string anglesLines;
    double angleRange = 180.0;
    std::string angleUnits = "auto";
    std::string variable;
    bool logCorrected = false;
    double maxClampedPercent = 1.0;
    std::string rawShape;
    std::string rawType = "float32";
    std::size_t rawHeader = 0;
    bool rawBigEndian = false;
    std::string outputType = "float32";
    int tiffBits = 32;
    std::string range;
    std::string reference;
    std::string config;
    bool overwrite = false;
    bool listStrategies = false;
    bool info = false;
    bool demo = false;
    bool quiet = false;
    CorrectionCommandLine corrections;
    MethodCommandLine method;
    ConeCommandLine cone;
    ParallelCommandLine parallel;
};

std::string joinNames(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

/// "cpu-reference, cpu, ...": the strategies of this build.
std::string strategyNames() {
    std::vector<std::string> names;
    for (const Backend* b : BackendRegistry::instance().backends()) names.push_back(b->name());
    return joinNames(names);
}

std::string strategyHelp() {
    return "Back-projection strategy: auto (the fastest available exact one), or one of: " + strategyNames() +
           " (see --list-strategies)";
}

void addOptions(CLI::App& app, CommandLine& c) {
    app.add_option("INPUT", c.input,
                   "Dataset: DXchange or NXtomo HDF5, HDF5 sinogram, TIFF directory or multi-page TIFF, raw "
                   "(with --raw-shape); the format is detected from the content. \"demo\" = --demo")
        ->type_name("FILE|demo");
    app.add_option("-o,--output", c.output,
                   "Output volume: .h5/.hdf5/.nxs = HDF5 (/volume [slice][row][column] of --output-type); .tif/.tiff "
                   "or a folder = TIFF stack. Required, except with --demo (then a file in the demo's temporary folder)")
        ->type_name("FILE");
    addAxisOptions(app, c.axis);
    app.add_option("--axis-offsets", c.axisOffsets,
                   "Text file of per-projection axis corrections in pixels, one per line (count = projections). "
                   "Default: none")
        ->type_name("FILE");
    app.add_option("--rows", c.rows,
                   "Detector rows to reconstruct: a:b = rows a to b-1, a: = a to the last, :b, or a single row a. "
                   "Default: all rows")
        ->type_name("A:B");
    app.add_option("--region", c.region,
                   "Part of the columns x columns slice grid to compute: x,y,width,height in pixels. Default: all")
        ->type_name("X,Y,W,H");
    app.add_option("--strategy", c.strategy, strategyHelp())->type_name("NAME")->capture_default_str();
    app.add_option("--interp", c.interp, "Interpolation of the detector values")
        ->check(CLI::IsMember({"nearest", "linear"}))
        ->capture_default_str();
    app.add_option("--precision", c.precision, "Storage of the filtered sinogram (arithmetic stays float32)")
        ->check(CLI::IsMember({"float32", "float16"}))
        ->capture_default_str();
    app.add_option("--slices-per-pass", c.slicesPerPass, "Slices back-projected together in one pass")
        ->check(integerIn(1, 4))
        ->check(CLI::IsMember({1, 2, 4}))
        ->capture_default_str();
    app.add_option("--filter", c.filter, "Ramp filter window")
        ->check(CLI::IsMember({"ram-lak", "shepp-logan", "cosine", "hamming", "hann"}))
        ->capture_default_str();
    app.add_option("--padding", c.padding,
                   "How each sinogram row is extended to the FFT length (edge reduces cupping when the object "
                   "exceeds the field of view)")
        ->check(CLI::IsMember({"zero", "edge"}))
        ->capture_default_str();
    app.add_option("--device", c.device, "GPU index for GPU strategies (0..1023)")
        ->type_name("N")
        ->check(integerIn(0, kMaxDevice))
        ->capture_default_str();
    app.add_option("--opencl-device", c.openclDevice,
                   "Device of the OpenCL strategies (ocl-*): its index or part of its device or platform name, as "
                   "--list-strategies lists them (default: $TOMO_OPENCL_DEVICE, else the first GPU, else 0)")
        ->type_name("N|NAME");
    app.add_option("--tuning", c.tuning,
                   "Kernel parameters of the alu, hybrid and oversample strategies: shape=N (a block shape "
                   "of the README's table), hybrid also share=M (texture blocks per 16); of gridrec and "
                   "cpu-gridrec: kernel=W (2..16), oversampling=S (1.25..3), band=B (1..2); comma-separated "
                   "(default: the mode's measured best; with --strategy auto, the autotuner's choice). Other "
                   "strategies refuse any tuning")
        ->type_name("K=V,...");
    app.add_flag("--allow-approximate", c.allowApproximate,
                 "With --strategy auto: let approximate strategies (gridrec, cpu-gridrec, oversample) compete too, "
                 "each only if it stays within 2 % of an exact result on the timed problem");
    app.add_option("--threads", c.threads,
                   "Worker threads of CPU strategies (0 = all hardware threads; at most " +
                       std::to_string(kMaxThreads) + ")")
        ->type_name("N")
        ->check(integerIn(0, kMaxThreads))
        ->capture_default_str();
    app.add_option("--memory-budget", c.memoryBudget,
                   "GiB of host memory for the chunks in flight (default: 1/16 of the machine's memory, 1 to 4 GiB; "
                   "at most half of it: a larger budget is capped there, with a warning)")
        ->type_name("GIB")
        ->check(numberIn(0.001, 1e6));
    app.add_option("--angles", c.angles,
                   "Text file of projection angles in degrees, one per line; overrides the file's angles "
                   "(TIFF and raw data carry none)")
        ->type_name("FILE");
    app.add_option("--angles-lines", c.anglesLines,
                   "Entries of the angles file (or of a TIFF folder's angles.txt) that belong to the projections, "
                   "counted from 0 without comments and blank lines: a:b = entries a to b-1, a: = a to the end. "
                   "Default: all, or the projections' run when the file also lists dark/flat frames at the first "
                   "and last angle")
        ->type_name("A:B");
    app.add_option("--angle-range", c.angleRange,
                   "When the data carry no angles and no --angles is given: angles spread uniformly over "
                   "[0, DEG) degrees, DEG in (0, 3600]")
        ->type_name("DEG")
        ->check(numberIn(0, 3600))
        ->capture_default_str();
    app.add_option("--angle-units", c.angleUnits,
                   "Units of the file's angles and of --angles: auto = what the file says, else degrees, refusing "
                   "angles that look like radians (all within 6.28 degrees); degrees or radians = use these units")
        ->check(CLI::IsMember({"auto", "degrees", "radians"}))
        ->capture_default_str();
    app.add_option("--variable", c.variable,
                   "MATLAB v7.3 (.mat) input: the variable holding the projections, size [angles, rows, columns] "
                   "in MATLAB, or one sinogram, [angles, columns]; NAME,ANGLES also names a vector of angles")
        ->type_name("NAME[,ANGLES]");
    app.add_flag("--log-corrected", c.logCorrected,
                 "The values of a TIFF, raw or MATLAB input are already line integrals (flat-field corrected and "
                 "-log'ed): reconstruct them as they are");
    app.add_option("--max-clamped", c.maxClampedPercent,
                   "Percentage of values without a usable transmission (raw <= dark, flat <= dark or saturated; "
                   "interpolated or clamped) beyond which the run stops with exit code 5: flats all zero or equal "
                   "to the darks, data never written. Raise it (up to 100) to accept such data")
        ->type_name("PERCENT")
        ->check(numberIn(0, 100))
        ->capture_default_str();
    app.add_option("--raw-shape", c.rawShape,
                   "Read INPUT as a headerless raw file of PROJECTIONS,ROWS,COLUMNS samples "
                   "([projection][row][column]); raw values are transmissions (-log is applied)")
        ->type_name("P,R,C");
    app.add_option("--raw-type", c.rawType, "Sample type of a raw file")
        ->check(CLI::IsMember({"uint8", "uint16", "float32", "float64"}))
        ->capture_default_str();
    app.add_option("--raw-header", c.rawHeader, "Bytes to skip at the start of a raw file")
        ->type_name("BYTES")
        ->check(integerIn(0, std::numeric_limits<std::int64_t>::max()))
        ->capture_default_str();
    app.add_flag("--raw-big-endian", c.rawBigEndian, "Raw samples are big-endian (default: little-endian)");
    app.add_option("--output-type", c.outputType,
                   "How the values are stored: float32 (as computed); float16 (11 significant bits, |values| up to "
                   "65504, larger ones clipped and counted); uint16 or uint8 (value = stored x scale_factor + "
                   "add_offset over --range; values outside clipped and counted)")
        ->check(CLI::IsMember({"float32", "float16", "uint16", "uint8"}))
        ->capture_default_str();
    app.add_option("--range", c.range,
                   "MIN,MAX: the values stored as 0 and as the largest integer of --output-type uint16/uint8. "
                   "Default: estimated from 5 rows reconstructed first (0.01 and 99.99 percentiles, widened by 5% "
                   "each side)")
        ->type_name("MIN,MAX");
    app.add_option("--tiff-bits", c.tiffBits,
                   "Deprecated, TIFF output only: 16 = --output-type uint16, 8 = uint8, 32 = float32")
        ->check(integerIn(8, 32))
        ->check(CLI::IsMember({32, 16, 8}));
    app.add_option("--reference", c.reference,
                   "A volume written earlier (by tomo-recon or the workstation) to compare the result with: prints "
                   "max abs error, RMSE, PSNR and relative error over the slices. It holds the same slices as the "
                   "output, or every row of the dataset (then the --rows range of it is used)")
        ->type_name("FILE");
    app.add_option("--config", c.config,
                   "Run-config JSON (saved by the workstation, keys as in the README); options given on the "
                   "command line override it")
        ->type_name("FILE");
    app.add_flag("--overwrite", c.overwrite, "Replace an existing output (it is never replaced otherwise)");
    app.add_flag("--list-strategies", c.listStrategies,
                 "List the strategies of this build (available or why not), the GPUs (or why there are none) and "
                 "the OpenCL devices, and exit");
    app.add_flag("--info", c.info,
                 "Describe INPUT as a run would read it (format, projections x rows x columns, sample type, flats "
                 "and darks, angles, warnings) and exit: nothing is written, -o is not needed, the reconstruction "
                 "options are not applied (a malformed one is still refused); a damaged or unreadable INPUT gives the "
                 "same error and exit code as a run");
    app.add_flag("--demo", c.demo,
                 "Reconstruct the built-in demo: a 256x256x16 Shepp-Logan phantom scan (360 views, flats, darks, "
                 "noise) written as DXchange to a temporary folder and read back; prints its error against the "
                 "true phantom");
    app.add_flag("--follow", c.follow,
                 "INPUT is a DXchange file still being written with HDF5 SWMR (tomo-stream --to): wait until its "
                 "writer closes it, printing what arrives, then reconstruct it (the same output as a run after the "
                 "scan)");
    app.add_option("--follow-timeout", c.followTimeout,
                   "With --follow: seconds without a new frame (or before the file appears) after which a writer "
                   "that never closed the file is taken for dead (an error; no output is written)")
        ->check(positiveNumber(1e6))->capture_default_str()->type_name("S");
    app.add_flag("-q,--quiet", c.quiet, "No progress bar and no informational lines; results and the summary stay");
    addCorrectionOptions(app, c.corrections);
    addMethodOptions(app, c.method);
    addConeOptions(app, c.cone);
    addParallelOptions(app, c.parallel);
    app.footer("Examples:\n"
               "  tomo-recon --demo -o demo.h5\n"
               "  tomo-recon scan.h5 -o volume.h5 --auto-tilt\n"
               "  tomo-recon scan.h5 -o sweep.h5 --center-sweep 1015:1025:0.5 --rows 1000\n"
               "  tomo-recon scan.h5 -o slices/ --rows 100:164 --center 1021.5 --output-type uint16 --range -0.001,0.01\n"
               "  tomo-recon scan.h5 -o volume.h5 --output-type float16\n"
               "  tomo-recon scan.h5 -o fast.h5 --precision float16 --reference exact.h5\n"
               "  tomo-recon scan.h5 -o tv.h5 --method tv --tv-weight 0.1 --nonnegative --init fbp\n"
               "  tomo-recon --config tuned.json -o volume.h5 --overwrite\n"
               "  tomo-recon scan.h5 --info\n"
               "  tomo-recon htc2022_ta.h5 -o disc.h5 --volume 512,512,1   (fan beam: geometry from the file)\n"
               "  tomo-recon projections/ -o volume.h5 --cone-geometry scanner.json\n\n" +
               exitCodeHelp());
}

RunConfig effectiveConfig(const CLI::App& app, const CommandLine& c) {
    RunConfig cfg = c.config.empty() ? RunConfig{} : loadRunConfig(c.config);
    auto given = [&](const char* name) { return app.count(name) > 0; };
    if (!c.input.empty()) cfg.input = c.input;
    applyAxisOptions(app, c.axis, cfg);
    if (given("--axis-offsets")) cfg.axisOffsetsFile = c.axisOffsets;
    if (given("--rows")) {
        const RowRange r = parseRows(c.rows);
        cfg.firstRow = r.first;
        cfg.rowCount = r.count;
    }
    if (given("--region")) cfg.region = parseRegion(c.region);
    ReconOptions& o = cfg.options;
    if (!c.config.empty() && !given("--strategy") && o.strategy != "auto" &&
        !BackendRegistry::instance().find(o.strategy))
        throw FormatError("run config '" + c.config + "': key 'strategy': '" + o.strategy +
                          "' is not a strategy (expected auto or one of: " + strategyNames() + ")");
    if (given("--strategy")) o.strategy = c.strategy;
    if (given("--interp")) o.interpolation = parseInterpolation(c.interp);
    if (given("--precision")) o.precision = parsePrecision(c.precision);
    if (given("--slices-per-pass")) o.slicesPerPass = c.slicesPerPass;
    if (given("--filter")) o.filter.window = parseFilterWindow(c.filter);
    if (given("--padding")) o.filter.padding = parsePadding(c.padding);
    if (given("--device")) o.device = c.device;
    if (given("--opencl-device")) o.openclDevice = c.openclDevice; // not '' (refuseEmptyValues)
    if (given("--tuning")) o.tuning = c.tuning;
    if (given("--allow-approximate")) o.allowApproximate = c.allowApproximate;
    if (given("--threads")) o.threads = c.threads;
    if (given("--gpus")) cfg.gpus = c.parallel.gpus;
    o.iterative = applyMethodOptions(app, c.method, o.iterative);
    cfg.corrections = applyCorrectionOptions(app, c.corrections, cfg.corrections);
    return cfg;
}

SampleType parseSampleType(const std::string& s) {
    for (SampleType t : {SampleType::UInt8, SampleType::UInt16, SampleType::Float32, SampleType::Float64})
        if (s == sampleTypeName(t)) return t;
    throw InvalidArgument("--raw-type " + s + ": expected uint8, uint16, float32 or float64");
}

/// The run config's open options, with those given on the command line instead.
OpenOptions openOptions(const CLI::App& app, const CommandLine& c, OpenOptions o) {
    if (app.count("--angles")) o.anglesFile = c.angles; // not '' (refuseEmptyValues)
    if (app.count("--angles-lines")) {
        const RowRange lines = parseRows(c.anglesLines, "--angles-lines");
        o.anglesLines = LineRange{lines.first, lines.count};
    }
    if (app.count("--angle-range")) {
        if (!(c.angleRange > 0.0)) throw InvalidArgument("--angle-range 0: expected a number in (0, 3600]");
        o.angleRangeDegrees = c.angleRange;
    }
    if (app.count("--angle-units"))
        o.angleUnits = c.angleUnits == "degrees"   ? AngleUnits::Degrees
                       : c.angleUnits == "radians" ? AngleUnits::Radians
                                                   : AngleUnits::Auto;
    o.variable = c.variable;
    o.logCorrected = c.logCorrected;
    o.allowDivergentBeam = true; // fan/cone-beam files take the FDK path (run())
    if (!c.rawShape.empty()) {
        const auto shape = parseInts(c.rawShape, 3, 1, "--raw-shape");
        o.raw = RawLayout{shape[0], shape[1], shape[2], parseSampleType(c.rawType), c.rawHeader, c.rawBigEndian};
    } else if (!o.raw) {
        for (const char* rawOnly : {"--raw-type", "--raw-header", "--raw-big-endian"})
            if (app.count(rawOnly)) throw InvalidArgument(std::string(rawOnly) + " needs --raw-shape");
    }
    return o;
}

/// --output-type, or the type the deprecated --tiff-bits names.
OutputType outputTypeOf(const CLI::App& app, const CommandLine& c, const fs::path& output) {
    const OutputType type = parseOutputType(c.outputType, "--output-type");
    if (!app.count("--tiff-bits")) return type;
    if (volumeFormatFor(output) != VolumeFormat::TiffStack)
        throw InvalidArgument("--tiff-bits applies only to TIFF output, but '" + output.string() +
                              "' is an HDF5 file; use --output-type");
    const OutputType bits = c.tiffBits == 16  ? OutputType::UInt16
                            : c.tiffBits == 8 ? OutputType::UInt8
                                              : OutputType::Float32;
    if (app.count("--output-type") && bits != type)
        throw InvalidArgument("--tiff-bits " + std::to_string(c.tiffBits) + " contradicts --output-type " +
                              c.outputType + "; give only --output-type");
    std::printf("warning: --tiff-bits is deprecated; use --output-type %s\n", outputTypeName(bits));
    return bits;
}

/// The output's type and, with --range, its range (without: estimated
/// later, see chooseRange).
WriteOptions writeOptions(const CLI::App& app, const CommandLine& c, const fs::path& output) {
    WriteOptions w;
    w.overwrite = c.overwrite;
    w.type = outputTypeOf(app, c, output);
    if (!c.range.empty()) {
        if (!isQuantized(w.type))
            throw InvalidArgument("--range applies to --output-type uint16 or uint8; the output type is " +
                                  std::string(outputTypeName(w.type)));
        const auto r = parseDoubles(c.range, 2, "--range");
        // The mapping is done in float: the bounds must stay apart there.
        w.rangeMin = static_cast<float>(r[0]);
        w.rangeMax = static_cast<float>(r[1]);
        try {
            quantizationFor(w.type, w.rangeMin, w.rangeMax);
        } catch (const InvalidArgument&) {
            throw InvalidArgument("--range " + c.range +
                                  ": expected MIN < MAX, both within float32's range (+-3.4e38) and further apart "
                                  "than 1e-35");
        }
    }
    return w;
}

/// `p` absolute and normalised, without a trailing separator.
fs::path normalised(const fs::path& p) {
    std::error_code ec;
    fs::path n = fs::weakly_canonical(fs::absolute(p), ec);
    if (ec) n = fs::absolute(p).lexically_normal();
    return n.has_filename() ? n : n.parent_path();
}

/// Refuses an output that exists (without --overwrite; a symbolic link to
/// nothing counts), is the input, or lies inside an input directory (a TIFF
/// stack: the new files would join the dataset).
void checkOutput(const fs::path& output, const fs::path& input, bool overwrite) {
    if (output.empty()) throw InvalidArgument("-o '': expected an output file or folder");
    volumeFormatFor(output); // throws InvalidArgument for an unknown extension
    std::error_code ec;
    if (!input.empty() && fs::is_directory(input, ec)) {
        const fs::path dir = normalised(input), out = normalised(output);
        if (std::mismatch(dir.begin(), dir.end(), out.begin(), out.end()).first == dir.end())
            throw InvalidArgument("the output '" + output.string() + "' is inside the input directory '" +
                                  input.string() + "'; choose another -o");
    }
    const fs::path target = output.has_filename() ? output : output.parent_path();
    if (!fs::exists(fs::symlink_status(target, ec))) return;
    if (!input.empty() && fs::exists(input, ec) && fs::equivalent(output, input, ec))
        throw InvalidArgument("the output '" + output.string() + "' is the input; choose another -o");
    if (!overwrite)
        throw InvalidArgument("the output '" + output.string() + "' exists" +
                              (fs::exists(target, ec) ? "" : " (a symbolic link to nothing)") +
                              "; add --overwrite to replace it");
}

void printStrategies() {
    std::printf("%-18s %-7s %-6s %s\n", "strategy", "family", "exact", "available / description");
    for (const Backend* b : BackendRegistry::instance().backends()) {
        const std::string why = b->unavailableReason();
        std::printf("%-18s %-7s %-6s %s\n", b->name().c_str(), b->family().c_str(), b->isExact() ? "yes" : "no",
                    (why.empty() ? "yes: " + b->description() : "no: " + why).c_str());
    }
    for (const std::string& line : gpuLines()) std::printf("%s\n", line.c_str());
    for (const std::string& line : openclDeviceLines()) std::printf("%s\n", line.c_str());
}

/// A temporary folder for the demo scan; removed at exit unless it also
/// holds the result.
class DemoFolder {
public:
    DemoFolder() {
        std::string pattern = (fs::temp_directory_path() / "tomo-demo-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw IoError("cannot create a temporary folder like '" + pattern + "'");
        m_path = pattern;
    }
    ~DemoFolder() {
        std::error_code ec;
        if (!m_keep) fs::remove_all(m_path, ec);
    }
    DemoFolder(const DemoFolder&) = delete;
    DemoFolder& operator=(const DemoFolder&) = delete;

    const fs::path& path() const { return m_path; }
    void keep() { m_keep = true; }

private:
    fs::path m_path;
    bool m_keep = false;
};

std::string describeOptions(const ReconOptions& o) {
    if (o.iterative.isIterative()) return describeMethod(o.iterative) + " on " + o.strategy + "'s projector pair";
    std::ostringstream s;
    s << o.strategy << " (" << interpolationName(o.interpolation) << ", " << precisionName(o.precision) << ", "
      << o.slicesPerPass << " slice" << (o.slicesPerPass > 1 ? "s" : "") << "/pass, "
      << filterWindowName(o.filter.window) << " filter, " << paddingName(o.filter.padding) << " padding)";
    return s.str();
}

std::string describeDataset(const DatasetInfo& info) {
    std::ostringstream s;
    s << info.path.string() << ": " << formatName(info.format) << ", " << info.projections << " projections x "
      << info.rows << " rows x " << info.columns << " columns, " << sampleTypeName(info.sampleType);
    if (info.divergentBeam) s << ", " << info.divergentBeam->declared;
    if (info.logCorrected)
        s << ", log-corrected";
    else
        s << ", " << info.flats << " flats, " << info.darks << " darks";
    if (!info.angles.empty()) {
        const auto [lo, hi] = std::minmax_element(info.angles.begin(), info.angles.end());
        s << ", angles " << formatNumber(*lo * 180 / std::numbers::pi, 5) << ".."
          << formatNumber(*hi * 180 / std::numbers::pi, 5) << " deg";
    }
    if (!info.anglesFile.empty()) {
        s << " from " << info.anglesFile.filename().string();
        if (info.anglesLines)
            s << " entries " << info.anglesLines->first << ".." << info.anglesLines->first + info.projections - 1;
    }
    return s.str();
}

/// Figures over all slices of `result` against `reference(slice)`, inside
/// `mask` (empty = all pixels), and the slice with the largest RMSE.
struct VolumeComparison {
    QualityMetrics all;
    int worstSlice = 0;
    double worstRmse = 0.0;
};

VolumeComparison compareVolume(const ImageStack& result, const std::function<Image(int)>& reference,
                               const std::vector<std::uint8_t>& mask) {
    // One tall image per volume gives the figures over all slices at once.
    Image tallResult(result.width, result.height * result.depth);
    Image tallReference(result.width, result.height * result.depth);
    std::vector<std::uint8_t> tallMask;
    VolumeComparison out;
    for (int z = 0; z < result.depth; ++z) {
        const Image ref = reference(z);
        const Image res = result.slice(z);
        std::copy(res.data.begin(), res.data.end(), tallResult.data.begin() + z * res.size());
        std::copy(ref.data.begin(), ref.data.end(), tallReference.data.begin() + z * ref.size());
        tallMask.insert(tallMask.end(), mask.begin(), mask.end());
        const QualityMetrics m = compareImages(res, ref, mask);
        if (z == 0 || m.rmse > out.worstRmse) {
            out.worstRmse = m.rmse;
            out.worstSlice = z;
        }
    }
    out.all = compareImages(tallResult, tallReference, tallMask);
    return out;
}

void printComparison(const std::string& what, const VolumeComparison& c, int firstRow) {
    std::printf("%s: max abs error %.4g, RMSE %.4g, PSNR %.2f dB, relative error %.3g %% (%zu pixels); "
                "worst slice: row %d (RMSE %.4g)\n",
                what.c_str(), c.all.maxAbsError, c.all.rmse, c.all.psnr, 100.0 * c.all.relativeError, c.all.pixels,
                firstRow + c.worstSlice, c.worstRmse);
}

Image crop(const Image& full, const Region& r) {
    Image out(r.width, r.height);
    for (int y = 0; y < r.height; ++y)
        for (int x = 0; x < r.width; ++x) out.at(x, y) = full.at(r.x + x, r.y + y);
    return out;
}

std::vector<std::uint8_t> cropMask(const std::vector<std::uint8_t>& mask, int width, const Region& r) {
    std::vector<std::uint8_t> out;
    out.reserve(r.pixels());
    for (int y = r.y; y < r.y + r.height; ++y)
        for (int x = r.x; x < r.x + r.width; ++x) out.push_back(mask[static_cast<std::size_t>(y) * width + x]);
    return out;
}

/// A --reference volume, loaded and checked against the output's shape
/// before anything is reconstructed: it holds the output's slices, or every
/// row of the dataset (then `offset` = the first row).
struct Reference {
    fs::path path;
    ImageStack volume;
    int offset = 0;
};

Reference loadReference(const fs::path& path, int width, int height, int firstRow, int rowCount, int datasetRows) {
    Reference ref{path, readVolume(path), 0};
    const ImageStack& v = ref.volume;
    // Checked now: a comparison that fails after the run would come after
    // the output was written.
    if (const auto bad = std::find_if(v.data.begin(), v.data.end(), [](float x) { return !std::isfinite(x); });
        bad != v.data.end()) {
        const auto index = static_cast<std::size_t>(bad - v.data.begin());
        throw DataError("--reference '" + path.string() + "' holds " + (std::isnan(*bad) ? "NaN" : "inf") +
                        " at slice " + std::to_string(index / v.imageSize()) + ", row " +
                        std::to_string(index % v.imageSize() / static_cast<std::size_t>(v.width)) + ", column " +
                        std::to_string(index % static_cast<std::size_t>(v.width)) +
                        "; expected a volume of finite values");
    }
    if (v.width != width || v.height != height)
        throw FormatError("--reference '" + path.string() + "' has slices of " + std::to_string(v.width) + "x" +
                          std::to_string(v.height) + " pixels, the output " + std::to_string(width) + "x" +
                          std::to_string(height));
    if (v.depth == datasetRows && v.depth != rowCount)
        ref.offset = firstRow;
    else if (v.depth != rowCount)
        throw FormatError("--reference '" + path.string() + "' has " + std::to_string(v.depth) + " slices; expected " +
                          std::to_string(rowCount) + " (the output's) or " + std::to_string(datasetRows) +
                          " (every row of the dataset)");
    return ref;
}

void compareWithReference(const Reference& ref, const ImageStack& result, int firstRow) {
    const VolumeComparison c = compareVolume(result, [&](int z) { return ref.volume.slice(z + ref.offset); }, {});
    printComparison("vs reference " + ref.path.string() + " (rows " + std::to_string(firstRow) + ".." +
                        std::to_string(firstRow + result.depth - 1) + ")",
                    c, firstRow);
}

/// Throws OutOfMemory naming the dataset when one row cannot be held: the
/// reconstruction keeps three sinograms of a row (the one reconstructed,
/// the next being read, the reader's staging copy) and its slice. Found
/// before anything is allocated, not after minutes of swapping.
void requireRowFitsInMemory(const DatasetInfo& info, const Region& region) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    const double sinogram = 4.0 * info.projections * info.columns;
    const double needed = 3.0 * sinogram + 4.0 * static_cast<double>(region.pixels());
    const auto memory = static_cast<double>(physicalMemoryBytes());
    if (memory > 0 && needed > memory)
        throw OutOfMemory(info.path.string() + " declares " + std::to_string(info.projections) + " projections x " +
                          std::to_string(info.columns) + " columns: one row needs " +
                          formatNumber(needed / kGiB, 3) + " GiB (three sinograms and a " +
                          std::to_string(region.width) + "x" + std::to_string(region.height) +
                          " slice) but this machine has " + formatNumber(memory / kGiB, 3) + " GiB");
}

/// Opens the input (its metadata read in a child process first, except for
/// raw files, which have none) and prints what the run works on: the
/// "input:" line (unless quiet) and the reader's warnings.
std::unique_ptr<DatasetReader> openInput(const fs::path& input, const OpenOptions& options, bool quiet) {
    probeDatasetInChildProcess(input, options, interrupted);
    std::unique_ptr<DatasetReader> reader = openDataset(input, options);
    if (!quiet) std::printf("input: %s\n", describeDataset(reader->info()).c_str());
    for (const std::string& warning : reader->info().warnings) std::printf("warning: %s\n", warning.c_str());
    return reader;
}

/// The range of an integer output and where it came from, as attributes.
void recordRange(WriteOptions& write, const std::string& source) {
    write.attributes["output_range"] = formatNumber(write.rangeMin, 9) + "," + formatNumber(write.rangeMax, 9);
    write.attributes["output_range_source"] = source;
}

/// For uint16/uint8 output: the range of --range, or else estimated from a
/// few rows reconstructed like the volume (printed unless quiet).
void chooseRange(WriteOptions& write, bool given, DatasetReader& reader, const VolumeJob& job, bool quiet) {
    if (!isQuantized(write.type)) return;
    std::string source = "--range";
    if (!given) {
        const auto t0 = std::chrono::steady_clock::now();
        const RangeEstimateOptions options;
        RangeEstimate e;
        {
            ProgressBar bar(options.rows, "rows for the range", !quiet);
            e = estimateOutputRange(reader, job, options, [&](double fraction, std::string_view) {
                throwIfInterrupted();
                bar.update(static_cast<int>(std::lround(fraction * options.rows)));
            });
        }
        write.rangeMin = e.min;
        write.rangeMax = e.max;
        std::string rows;
        for (int r : e.rows) rows += (rows.empty() ? "" : ",") + std::to_string(r);
        source = "estimated from rows " + rows + ": percentiles " + formatNumber(options.lowPercentile) + " and " +
                 formatNumber(options.highPercentile) + " (" + formatNumber(e.low) + ", " + formatNumber(e.high) +
                 ") widened by " + formatNumber(100 * options.margin) + "% each side";
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!quiet)
            std::printf("output range: [%s, %s] for %s, %s, in %s\n", formatNumber(e.min).c_str(),
                        formatNumber(e.max).c_str(), outputTypeName(write.type), source.c_str(),
                        formatSeconds(seconds).c_str());
    }
    recordRange(write, source);
}

/// One line after the run for float16 and integer outputs: how values map
/// back, and what was clipped.
void printOutputSummary(const WriteOptions& write, const ClippedValues& clipped, double values) {
    if (write.type == OutputType::Float32) return;
    std::string text = std::string("output ") + outputTypeName(write.type) + ": ";
    if (isQuantized(write.type)) {
        const Quantization q = quantizationFor(write.type, write.rangeMin, write.rangeMax);
        text += "value = stored x " + formatNumber(q.slope, 9) + (q.offset < 0 ? " - " : " + ") +
                formatNumber(std::abs(q.offset), 9) + " (range [" +
                formatNumber(write.rangeMin) + ", " + formatNumber(write.rangeMax) + "])";
    } else {
        text += "IEEE half, 11 significant bits, |values| up to 65504";
    }
    if (clipped.total() == 0) {
        text += "; no value clipped";
    } else {
        text += "; " + std::to_string(clipped.total()) + " values clipped (" +
                formatNumber(100.0 * static_cast<double>(clipped.total()) / values, 3) + " %): " +
                std::to_string(clipped.below) + " below the range, " + std::to_string(clipped.above) + " above";
        if (isQuantized(write.type)) text += ", " + std::to_string(clipped.nan) + " NaN (stored as 0)";
    }
    std::printf("%s\n", text.c_str());
}

std::string commandLineText(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) {
        if (i) s += ' ';
        s += argv[i];
    }
    return s;
}

/// A fan/cone-beam input: FDK of the whole scan (cone_options.h), written
/// like a parallel-beam volume.
int runCone(const CLI::App& app, const CommandLine& c, const RunConfig& cfg, DatasetReader& reader,
            const fs::path& output, WriteOptions write, int argc, char** argv) {
    if (!c.config.empty())
        throw InvalidArgument("--config describes parallel-beam runs; " + cfg.input.string() +
                              " is fan/cone-beam data (give its options on the command line)");
    write.attributes = {{"software", std::string(kProgram) + " " + TOMO_VERSION},
                        {"command_line", commandLineText(argc, argv)},
                        {"input", fs::absolute(cfg.input).string()},
                        {"input_format", formatName(reader.info().format)},
                        {"projections", std::to_string(reader.info().projections)}};
    const ImageStack volume = reconstructCone(app, c.cone, cfg.options, reader, write.attributes, c.quiet);
    if (isQuantized(write.type)) {
        std::string source = "--range";
        if (c.range.empty()) {
            const RangeEstimateOptions options;
            const RangeEstimate e = robustRange(volume.data, options);
            write.rangeMin = e.min;
            write.rangeMax = e.max;
            source = "percentiles " + formatNumber(options.lowPercentile) + " and " +
                     formatNumber(options.highPercentile) + " of the volume widened by " +
                     formatNumber(100 * options.margin) + "% each side";
        }
        recordRange(write, source);
    }
    auto writer = createVolumeWriter(output, volume.width, volume.height, volume.depth, write);
    writer->writeSlices(0, volume.depth, volume.data);
    writer->commit();
    printOutputSummary(write, writer->clipped(), static_cast<double>(volume.data.size()));
    std::printf("output: %s\n", fs::absolute(output).c_str());
    return kExitOk;
}

int run(const CLI::App& app, const CommandLine& c, int argc, char** argv) {
    refuseEmptyValues(app);
    if (c.listStrategies) {
        printStrategies();
        return kExitOk;
    }
    installInterruptHandler();
    installCrashHandler(kProgram, c.input.empty() ? c.config : c.input);
    checkResume(c.parallel);
    std::unique_ptr<Cluster> cluster; // --mpi: the ranks; the others only take part in rank 0's run
    if (c.parallel.mpi) cluster = joinForMpi(kProgram);
    if (cluster && cluster->rank() > 0) {
        takePart(*cluster);
        return kExitOk;
    }

    std::error_code ec;
    const bool demo = c.demo || (c.input == "demo" && !fs::exists("demo", ec));
    if (c.demo && !c.input.empty()) throw InvalidArgument("--demo takes no INPUT (got '" + c.input + "')");
    RunConfig cfg = effectiveConfig(app, c);
    if (demo) cfg.input.clear();
    installCrashHandler(kProgram, demo ? "the demo" : cfg.input.string());
    if (!demo && cfg.input.empty()) throw InvalidArgument("no INPUT given (a dataset, or --demo)");
    if (app.count("--follow-timeout") && !c.follow) throw InvalidArgument("--follow-timeout needs --follow");
    if (c.follow && demo) throw InvalidArgument("--follow follows a growing INPUT file; the demo has none (drop --demo)");
    if (c.follow && c.info) throw InvalidArgument("--follow reconstructs; --info only describes (drop one)");
    if (c.info) {
        if (demo) throw InvalidArgument("--info describes an INPUT file; the demo has none (drop --demo)");
        openInput(cfg.input, openOptions(app, c, cfg.open), /*quiet=*/false);
        return kExitOk;
    }
    if (!demo && c.output.empty()) throw InvalidArgument("no output given: add -o OUTPUT (e.g. -o volume.h5)");
    if (!c.output.empty()) {
        checkOutput(c.output, cfg.input, c.overwrite);
        for (const StaleTemporary& t : removeStaleTemporaries(c.output))
            std::printf("removed %s: the hidden temporary of an earlier run writing this output that never finished "
                        "(its process %ld is gone)\n",
                        t.path.c_str(), t.process);
    }
    cfg.open = openOptions(app, c, cfg.open);
    const OpenOptions& open = cfg.open;
    if (demo && (open.raw || open.anglesFile))
        throw InvalidArgument("--demo reads its own DXchange file: --raw-shape and --angles do not apply");

    // The demo scan goes through the real DXchange writer and reader.
    std::optional<DemoFolder> demoFolder;
    const PhantomSpec spec = demoSpec();
    fs::path output = c.output;
    const bool resultInDemoFolder = demo && output.empty();
    if (demo) {
        demoFolder.emplace();
        cfg.input = demoFolder->path() / "shepp_logan_dxchange.h5";
        if (resultInDemoFolder) output = demoFolder->path() / "shepp_logan_recon.h5";
    }
    const WriteOptions writeBase = writeOptions(app, c, output);
    if (demo) {
        if (!c.quiet) std::printf("demo: writing a Shepp-Logan phantom scan to %s\n", cfg.input.c_str());
        writePhantomDXchange(cfg.input, spec, uniformAngles(kDemoAngles), ScanSimulation{});
    }
    throwIfInterrupted();

    if (c.follow) followUntilClosed(cfg.input, c.followTimeout, c.quiet);
    std::unique_ptr<DatasetReader> reader = openInput(cfg.input, open, c.quiet);
    const DatasetInfo& info = reader->info();
    // The record names the angles file and entries found, so a replay does not depend on finding them again.
    if (!info.anglesFile.empty()) cfg.open.anglesFile = info.anglesFile;
    if (info.anglesLines) cfg.open.anglesLines = info.anglesLines;

    if (cluster && (isConeRun(app, info, c.cone) || sweepRequested(c.axis)))
        throw InvalidArgument("--mpi reconstructs parallel-beam volumes; not fan/cone-beam data or --center-sweep");
    if (isConeRun(app, info, c.cone)) return runCone(app, c, cfg, *reader, output, writeBase, argc, argv);

    RowRange rows{cfg.firstRow, cfg.rowCount};
    checkRows(rows, info.rows, (c.config.empty() || app.count("--rows")) ? "--rows" : "rows of --config");
    const int rowCount = rows.count == 0 ? info.rows - rows.first : rows.count;

    // The corrections decide the sinograms' shape (360-degree stitching
    // doubles the width); a 360-degree axis found here is kept in cfg.
    PreprocessingStage stage(*reader, cfg.corrections);
    cfg.corrections = stage.options();
    if (!c.quiet) printCorrectionSetup(stage);

    Geometry geometry;
    geometry.angles = stage.outputAngles();
    geometry.bins = stage.outputColumns();
    const bool sweep = sweepRequested(c.axis);
    AxisChoice axis;
    if (stage.outputAxis() && !cfg.axis) {
        // 360-degree stitching puts the rotation axis at the stitched sinogram's centre.
        axis.line.axis = *stage.outputAxis();
        axis.attributes = {{"axis", formatNumber(axis.line.axis)}, {"axis_source", "stitched sinogram centre"}};
        cfg.axis = axis.line.axis;
    } else if (!sweep) {
        axis = chooseAxis(app, c.axis, cfg, *reader, {rows.first, rowCount}, c.quiet);
    }
    geometry.axis = axis.line.at(rows.first);
    if (!cfg.axisOffsetsFile.empty()) geometry.axisOffsets = readAxisOffsetsFile(cfg.axisOffsetsFile, info.projections, info.columns);
    throwIfInterrupted();

    ReconGeometry recon = ReconGeometry::fullSlice(geometry);
    if (cfg.region) recon.region = *cfg.region;
    geometry.validate();
    recon.validate();
    requireRowFitsInMemory(info, recon.region);

    // Resolve the strategy now, so a bad one fails before any output exists
    // and the record names the one that ran.
    const std::string requested = cfg.options.strategy;
    ReconOptions requestedOptions = cfg.options;
    // `auto` chooses the slices per pass too, unless given (here or in --config).
    if (requestedOptions.strategy == "auto" && !app.count("--slices-per-pass") && c.config.empty())
        requestedOptions.slicesPerPass = 0;
    ParallelCommandLine parallel = c.parallel; // --gpus, or the run config's GPUs
    parallel.gpus = cfg.gpus;
    const GpuChoice gpus = chooseGpus(app, parallel, requestedOptions, recon);
    cfg.options = gpus.options;
    checkMethodRuns(cfg.options, recon);

    const MemoryBudget budget = memoryBudget(c.memoryBudget);
    WriteOptions write = writeBase;
    write.attributes = {
        {"software", std::string(kProgram) + " " + TOMO_VERSION},
        {"command_line", commandLineText(argc, argv)},
        {"input", fs::absolute(cfg.input).string()},
        {"input_format", formatName(info.format)},
        {"projections", std::to_string(info.projections)},
        {"angles_file", info.anglesFile.string()},
        {"first_row", std::to_string(rows.first)},
        {"row_count", std::to_string(rowCount)},
        {"axis_offsets_file", cfg.axisOffsetsFile.string()},
        {"region", std::to_string(recon.region.x) + "," + std::to_string(recon.region.y) + "," +
                       std::to_string(recon.region.width) + "," + std::to_string(recon.region.height)},
        {"slice_grid", std::to_string(recon.sliceWidth) + "x" + std::to_string(recon.sliceHeight)},
        {"strategy", cfg.options.strategy},
        {"strategy_requested", requested},
        {"tuning", cfg.options.tuning},
        {"interpolation", std::string(interpolationName(cfg.options.interpolation))},
        {"precision", std::string(precisionName(cfg.options.precision))},
        {"slices_per_pass", std::to_string(cfg.options.slicesPerPass)},
        {"filter", std::string(filterWindowName(cfg.options.filter.window))},
        {"padding", std::string(paddingName(cfg.options.filter.padding))},
        {"device", std::to_string(cfg.options.device)},
        {"threads", std::to_string(cfg.options.threads)},
        {"memory_budget", budget.text},
        {"units", "attenuation per pixel"},
        {"run_config", toJson(cfg)},
    };
    write.attributes.insert(axis.attributes.begin(), axis.attributes.end());
    addCorrectionAttributes(write.attributes, stage);
    addMethodAttributes(write.attributes, cfg.options);
    if (!gpus.devices.empty()) write.attributes["gpus"] = joinIndices(gpus.devices);
    if (gpus.devices.size() > 1 && budget.bytes == 0) // the conveyor's default is per GPU
        write.attributes["memory_budget"] =
            formatNumber(static_cast<double>(defaultMemoryBudget(static_cast<int>(gpus.devices.size()))) / (1 << 30),
                         3) +
            " GiB (the default per GPU, " + std::to_string(gpus.devices.size()) + " GPUs, up to 1/4 of the memory)";
    if (!gpus.perDevice.empty()) write.attributes["strategy_per_gpu"] = gpus.perDevice;

    if (sweep) {
        if (!c.reference.empty()) throw InvalidArgument("--reference does not apply to --center-sweep");
        if (isQuantized(write.type) && c.range.empty())
            throw InvalidArgument("--center-sweep with --output-type " + std::string(outputTypeName(write.type)) +
                                  " needs --range MIN,MAX (trial slices at wrong axes give no range to estimate)");
        if (isQuantized(write.type)) recordRange(write, "--range");
        writeAxisSweep(c.axis, cfg, *reader, {rows.first, rowCount}, recon.region, output, write, c.quiet);
        if (resultInDemoFolder) demoFolder->keep();
        std::printf("output: %s\n", fs::absolute(output).c_str());
        return kExitOk;
    }

    std::optional<Reference> reference;
    if (!c.reference.empty())
        reference =
            loadReference(c.reference, recon.region.width, recon.region.height, rows.first, rowCount, info.rows);

    if (!c.quiet)
        std::printf("reconstructing rows %d..%d (%d slices of %dx%d), axis %.2f, with %s\n", rows.first,
                    rows.first + rowCount - 1, rowCount, recon.region.width, recon.region.height, geometry.axis,
                    describeOptions(cfg.options).c_str());
    std::fflush(stdout);

    VolumeJob job;
    job.firstRow = rows.first;
    job.rowCount = rowCount;
    job.geometry = recon;
    job.axisLine = axis.line;
    job.options = cfg.options;
    job.memoryBudget = budget.bytes;
    job.corrections = cfg.corrections;
    job.maxClampedFraction = c.maxClampedPercent / 100.0;
    job.gpuCorrections = !c.corrections.cpuCorrections;
    job.devices = gpus.devices;

    VolumeReport report;
    ClippedValues clipped;
    try {
        chooseRange(write, !c.range.empty(), *reader, job, c.quiet);
        if (cluster) {
            report = reconstructWithRanks(*cluster, parallel, *reader, cfg.input, cfg.open, job, output, write,
                                          clipped, c.quiet, kProgram);
        } else {
            const auto created = std::chrono::steady_clock::now();
            auto writer = createVolumeWriter(output, recon.region.width, recon.region.height, rowCount, write);
            const double createSeconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - created).count();
            ProgressBar bar(rowCount, "rows", !c.quiet);
            report = reconstructVolume(*reader, job, *writer, [&](double fraction, std::string_view) {
                throwIfInterrupted();
                bar.update(static_cast<int>(std::lround(fraction * rowCount)));
            });
            // The output's creation (its room reserved) is part of the job.
            report.secondsSetup += createSeconds;
            report.secondsTotal += createSeconds;
            clipped = writer->clipped();
        }
    } catch (const TooManyClampedValues& e) {
        throw TooManyClampedValues(std::string(e.what()) + "; --max-clamped " + formatNumber(c.maxClampedPercent) +
                                   " is the limit in percent");
    }
    if (resultInDemoFolder) demoFolder->keep(); // removed with the scan when the run fails

    // The stages overlap: each busy time is also shown as a share of the total.
    auto busy = [&](double seconds) {
        const double share = report.secondsTotal > 0.0 ? 100.0 * seconds / report.secondsTotal : 0.0;
        return formatSeconds(seconds) + " (" + std::to_string(static_cast<int>(std::lround(share))) + "%)";
    };
    std::printf("%s: %d slices of %dx%d -> %s in %s; setup %s; busy: read %s, preprocess %s (on %s), filter + "
                "back-projection %s at %.3g GU/s with %s, write %s; bottleneck: %s; chunk buffers peak %.0f MiB of a "
                "%s GiB budget\n",
                kProgram, report.slices, recon.region.width, recon.region.height, output.c_str(),
                formatSeconds(report.secondsTotal).c_str(), busy(report.secondsSetup).c_str(), busy(report.secondsRead).c_str(),
                busy(report.secondsPreprocess).c_str(), report.correctedOn.c_str(),
                busy(report.secondsReconstruct).c_str(), report.gups, report.strategy.c_str(), busy(report.secondsWrite).c_str(), report.bottleneck().c_str(),
                static_cast<double>(report.peakBufferBytes) / (1 << 20),
                formatNumber(static_cast<double>(report.memoryBudget) / (1 << 30), 3).c_str());
    if (report.lanes.size() > 1) std::printf("%s: per device: %s\n", kProgram, laneSummary(report).c_str());
    if (!report.preprocessSteps.empty())
        std::printf("%s: preprocessing on %s, busy per step: %s\n", kProgram, report.correctedOn.c_str(),
                    formatSteps(report.preprocessSteps).c_str());
    printOutputSummary(write, clipped, static_cast<double>(recon.region.pixels()) * rowCount);
    // The setup stage's warnings too (the open-beam columns it found: the run's own stage is given them).
    std::vector<std::string> warnings = stage.warnings();
    for (const std::string& w : report.warnings)
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    printCorrectionReport(report.preprocess, warnings, c.corrections.listBadPixels);

    if (demo || reference) {
        const ImageStack result = readVolume(output);
        if (demo) {
            const double radius = spec.radiusFraction * spec.bins / 2.0;
            const auto fullMask = discMask(recon.sliceWidth, recon.sliceHeight, radius);
            const auto mask = cropMask(fullMask, recon.sliceWidth, recon.region);
            const VolumeComparison cmp = compareVolume(
                result,
                [&](int z) {
                    return crop(rasterizePhantom(spec, rows.first + z, recon.sliceWidth, recon.sliceHeight),
                                recon.region);
                },
                mask);
            printComparison("demo quality vs the true phantom (inside the object disc)", cmp, rows.first);
            if (resultInDemoFolder)
                std::printf("demo: scan and result kept in %s\n", demoFolder->path().c_str());
        }
        if (reference) compareWithReference(*reference, result, rows.first);
    }
    std::printf("output: %s\n", fs::absolute(output).c_str());
    return kExitOk;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"tomo-recon: parallel-beam FBP reconstruction of a tomography dataset into a volume file "
                 "(HDF5 or TIFF stack), with the workstation's back-projection strategies.",
                 kProgram};
    CommandLine c;
    try {
        addOptions(app, c);
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e); // --help
        std::cerr << kProgram << ": error: " << e.what() << " (see --help)" << std::endl;
        return kExitUsage;
    } catch (const std::exception& e) {
        return reportError(kProgram, e);
    }
    try {
        return run(app, c, argc, argv);
    } catch (const std::exception& e) {
        return reportError(kProgram, e);
    }
}
