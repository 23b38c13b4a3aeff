// tomo-recon: batch reconstruction of a dataset (or the built-in demo
// phantom) into a volume file, with the same strategies as the workstation.
#include "cli_support.h"

#include "tomo/axis_finder.h"
#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/metrics.h"
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
    double center = 0.0;
    bool autoCenter = false;
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
    int threads = 0;
    std::string angles;
    std::string anglesLines;
    double angleRange = 180.0;
    std::string rawShape;
    std::string rawType = "float32";
    std::size_t rawHeader = 0;
    bool rawBigEndian = false;
    int tiffBits = 32;
    std::string range;
    std::string reference;
    std::string config;
    bool overwrite = false;
    bool listStrategies = false;
    bool demo = false;
    bool quiet = false;
};

std::string joinNames(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

std::string strategyHelp() {
    std::string text = "Back-projection strategy: auto (the fastest available exact one), or one of: ";
    std::vector<std::string> names;
    for (const Backend* b : BackendRegistry::instance().backends()) names.push_back(b->name());
    return text + joinNames(names) + " (see --list-strategies)";
}

void addOptions(CLI::App& app, CommandLine& c) {
    app.add_option("INPUT", c.input,
                   "Dataset: DXchange or NXtomo HDF5, HDF5 sinogram, TIFF directory or multi-page TIFF, raw "
                   "(with --raw-shape); the format is detected from the content. \"demo\" = --demo")
        ->type_name("FILE|demo");
    app.add_option("-o,--output", c.output,
                   "Output volume: .h5/.hdf5/.nxs = HDF5 (/volume float32 [slice][row][column]); .tif/.tiff or a "
                   "folder = TIFF stack. Required, except with --demo (then a file in the demo's temporary folder)")
        ->type_name("FILE");
    auto* center = app.add_option("--center", c.center,
                                  "Rotation axis: the detector column it projects onto (sub-pixel, 0-based), "
                                  "within [-columns/2, 1.5 columns]. Default: the detector centre (columns - 1) / 2")
                       ->type_name("COLUMN");
    auto* autoCenter = app.add_flag("--auto-center", c.autoCenter,
                                    "Find the rotation axis from the middle row of the range (Vo et al. 2014, "
                                    "Fourier double-wedge metric) and print it with its confidence");
    center->excludes(autoCenter);
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
    app.add_option("--device", c.device, "GPU index for GPU strategies")
        ->type_name("N")
        ->check(CLI::Range(0, std::numeric_limits<int>::max()))
        ->capture_default_str();
    app.add_option("--threads", c.threads, "Worker threads of CPU strategies (0 = all hardware threads)")
        ->type_name("N")
        ->check(CLI::Range(0, std::numeric_limits<int>::max()))
        ->capture_default_str();
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
                   "[0, DEG) degrees")
        ->type_name("DEG")
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
        ->capture_default_str();
    app.add_flag("--raw-big-endian", c.rawBigEndian, "Raw samples are big-endian (default: little-endian)");
    app.add_option("--tiff-bits", c.tiffBits,
                   "TIFF output sample size: 32 = float32; 16 or 8 = unsigned integers mapped from --range")
        ->check(CLI::IsMember({32, 16, 8}))
        ->capture_default_str();
    app.add_option("--range", c.range, "MIN,MAX: the values mapped to 0 and the largest integer for --tiff-bits 16/8")
        ->type_name("MIN,MAX");
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
    app.add_flag("--list-strategies", c.listStrategies, "List the strategies of this build and exit");
    app.add_flag("--demo", c.demo,
                 "Reconstruct the built-in demo: a 256x256x16 Shepp-Logan phantom scan (360 views, flats, darks, "
                 "noise) written as DXchange to a temporary folder and read back; prints its error against the "
                 "true phantom");
    app.add_flag("-q,--quiet", c.quiet, "No progress bar and no informational lines; results and the summary stay");
    app.footer("Examples:\n"
               "  tomo-recon --demo -o demo.h5\n"
               "  tomo-recon scan.h5 -o volume.h5 --auto-center\n"
               "  tomo-recon scan.h5 -o slices/ --rows 100:164 --center 1021.5 --tiff-bits 16 --range -0.001,0.01\n"
               "  tomo-recon scan.h5 -o fast.h5 --precision float16 --reference exact.h5\n"
               "  tomo-recon --config tuned.json -o volume.h5 --overwrite\n\n" +
               exitCodeHelp());
}

RunConfig effectiveConfig(const CLI::App& app, const CommandLine& c) {
    RunConfig cfg = c.config.empty() ? RunConfig{} : loadRunConfig(c.config);
    auto given = [&](const char* name) { return app.count(name) > 0; };
    if (!c.input.empty()) cfg.input = c.input;
    if (given("--center")) cfg.axis = c.center;
    if (given("--axis-offsets")) cfg.axisOffsetsFile = c.axisOffsets;
    if (given("--rows")) {
        const RowRange r = parseRows(c.rows);
        cfg.firstRow = r.first;
        cfg.rowCount = r.count;
    }
    if (given("--region")) cfg.region = parseRegion(c.region);
    ReconOptions& o = cfg.options;
    if (given("--strategy")) o.strategy = c.strategy;
    if (given("--interp")) o.interpolation = parseInterpolation(c.interp);
    if (given("--precision")) o.precision = parsePrecision(c.precision);
    if (given("--slices-per-pass")) o.slicesPerPass = c.slicesPerPass;
    if (given("--filter")) o.filter.window = parseFilterWindow(c.filter);
    if (given("--padding")) o.filter.padding = parsePadding(c.padding);
    if (given("--device")) o.device = c.device;
    if (given("--threads")) o.threads = c.threads;
    return cfg;
}

SampleType parseSampleType(const std::string& s) {
    for (SampleType t : {SampleType::UInt8, SampleType::UInt16, SampleType::Float32, SampleType::Float64})
        if (s == sampleTypeName(t)) return t;
    throw InvalidArgument("--raw-type " + s + ": expected uint8, uint16, float32 or float64");
}

/// The run config's open options, with those given on the command line instead.
OpenOptions openOptions(const CLI::App& app, const CommandLine& c, OpenOptions o) {
    if (app.count("--angles")) o.anglesFile = c.angles;
    if (app.count("--angles-lines")) {
        const RowRange lines = parseRows(c.anglesLines, "--angles-lines");
        o.anglesLines = LineRange{lines.first, lines.count};
    }
    if (app.count("--angle-range")) o.angleRangeDegrees = c.angleRange;
    if (!c.rawShape.empty()) {
        const auto shape = parseInts(c.rawShape, 3, 1, "--raw-shape");
        o.raw = RawLayout{shape[0], shape[1], shape[2], parseSampleType(c.rawType), c.rawHeader, c.rawBigEndian};
    } else if (!o.raw) {
        for (const char* rawOnly : {"--raw-type", "--raw-header", "--raw-big-endian"})
            if (app.count(rawOnly)) throw InvalidArgument(std::string(rawOnly) + " needs --raw-shape");
    }
    return o;
}

WriteOptions writeOptions(const CLI::App& app, const CommandLine& c, const fs::path& output) {
    WriteOptions w;
    w.overwrite = c.overwrite;
    w.tiffBits = c.tiffBits;
    const bool tiff = volumeFormatFor(output) == VolumeFormat::TiffStack;
    if (!tiff && (app.count("--tiff-bits") || app.count("--range")))
        throw InvalidArgument("--tiff-bits and --range apply only to TIFF output, but '" + output.string() +
                              "' is an HDF5 file");
    if (c.tiffBits != 32 && c.range.empty())
        throw InvalidArgument("--tiff-bits " + std::to_string(c.tiffBits) +
                              " needs --range MIN,MAX (the values mapped to the integer range)");
    if (!c.range.empty()) {
        const auto r = parseDoubles(c.range, 2, "--range");
        if (!(r[0] < r[1])) throw InvalidArgument("--range " + c.range + ": MIN must be less than MAX");
        w.rangeMin = static_cast<float>(r[0]);
        w.rangeMax = static_cast<float>(r[1]);
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

/// Refuses an output that exists (without --overwrite), is the input, or
/// lies inside an input directory (a TIFF stack: the new files would join
/// the dataset).
void checkOutput(const fs::path& output, const fs::path& input, bool overwrite) {
    volumeFormatFor(output); // throws InvalidArgument for an unknown extension
    std::error_code ec;
    if (!input.empty() && fs::is_directory(input, ec)) {
        const fs::path dir = normalised(input), out = normalised(output);
        if (std::mismatch(dir.begin(), dir.end(), out.begin(), out.end()).first == dir.end())
            throw InvalidArgument("the output '" + output.string() + "' is inside the input directory '" +
                                  input.string() + "'; choose another -o");
    }
    if (!fs::exists(output, ec)) return;
    if (!input.empty() && fs::exists(input, ec) && fs::equivalent(output, input, ec))
        throw InvalidArgument("the output '" + output.string() + "' is the input; choose another -o");
    if (!overwrite) throw InvalidArgument("the output '" + output.string() + "' exists; add --overwrite to replace it");
}

void printStrategies() {
    std::printf("%-16s %-7s %-6s %s\n", "strategy", "family", "exact", "available / description");
    for (const Backend* b : BackendRegistry::instance().backends()) {
        const std::string why = b->unavailableReason();
        std::printf("%-16s %-7s %-6s %s\n", b->name().c_str(), b->family().c_str(), b->isExact() ? "yes" : "no",
                    (why.empty() ? "yes: " + b->description() : "no: " + why).c_str());
    }
    for (const GpuDevice& d : gpuDevices())
        std::printf("GPU %d: %s, %d SMs, %.1f GiB, compute %d.%d\n", d.index, d.name.c_str(), d.multiprocessors,
                    static_cast<double>(d.memoryBytes) / (1u << 30), d.computeMajor, d.computeMinor);
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
    std::ostringstream s;
    s << o.strategy << " (" << interpolationName(o.interpolation) << ", " << precisionName(o.precision) << ", "
      << o.slicesPerPass << " slice" << (o.slicesPerPass > 1 ? "s" : "") << "/pass, "
      << filterWindowName(o.filter.window) << " filter, " << paddingName(o.filter.padding) << " padding)";
    return s.str();
}

std::string formatNumber(double v, int precision = 6) {
    std::ostringstream s;
    s.precision(precision);
    s << v;
    return s.str();
}

std::string describeDataset(const DatasetInfo& info) {
    std::ostringstream s;
    s << info.path.string() << ": " << formatName(info.format) << ", " << info.projections << " projections x "
      << info.rows << " rows x " << info.columns << " columns, " << sampleTypeName(info.sampleType);
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

std::string commandLineText(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
    return s;
}

int run(const CLI::App& app, const CommandLine& c, int argc, char** argv) {
    if (c.listStrategies) {
        printStrategies();
        return kExitOk;
    }
    installInterruptHandler();

    std::error_code ec;
    const bool demo = c.demo || (c.input == "demo" && !fs::exists("demo", ec));
    if (c.demo && !c.input.empty()) throw InvalidArgument("--demo takes no INPUT (got '" + c.input + "')");
    RunConfig cfg = effectiveConfig(app, c);
    if (demo) cfg.input.clear();
    if (!demo && cfg.input.empty()) throw InvalidArgument("no INPUT given (a dataset, or --demo)");
    if (!demo && c.output.empty()) throw InvalidArgument("no output given: add -o OUTPUT (e.g. -o volume.h5)");
    if (!c.output.empty()) checkOutput(c.output, cfg.input, c.overwrite);
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

    std::unique_ptr<DatasetReader> reader = openDataset(cfg.input, open);
    const DatasetInfo& info = reader->info();
    if (!c.quiet) std::printf("input: %s\n", describeDataset(info).c_str());
    // The record names the angles file and entries found, so a replay does not depend on finding them again.
    if (!info.anglesFile.empty()) cfg.open.anglesFile = info.anglesFile;
    if (info.anglesLines) cfg.open.anglesLines = info.anglesLines;

    RowRange rows{cfg.firstRow, cfg.rowCount};
    checkRows(rows, info.rows, (c.config.empty() || app.count("--rows")) ? "--rows" : "rows of --config");
    const int rowCount = rows.count == 0 ? info.rows - rows.first : rows.count;

    Geometry geometry;
    geometry.angles = info.angles;
    geometry.bins = info.columns;
    geometry.axis = cfg.axis.value_or(geometry.detectorCentre());
    std::string axisSource = cfg.axis ? "given" : "detector centre";
    // The workstation's axis control spans the same range.
    if (cfg.axis && !(*cfg.axis >= -0.5 * info.columns && *cfg.axis <= 1.5 * info.columns))
        throw InvalidArgument((app.count("--center") ? "--center " : "axis of --config ") + formatNumber(*cfg.axis) +
                              ": expected a detector column in [" + formatNumber(-0.5 * info.columns) + ", " +
                              formatNumber(1.5 * info.columns) + "] (the detector has columns 0.." +
                              std::to_string(info.columns - 1) + ")");
    if (!cfg.axisOffsetsFile.empty()) geometry.axisOffsets = readAxisOffsetsFile(cfg.axisOffsetsFile, info.projections);
    if (c.autoCenter) {
        const int row = rows.first + rowCount / 2;
        if (!c.quiet) std::printf("auto-center: searching row %d...\n", row);
        const Image sinogram = loadSinograms(*reader, row, 1).slice(0);
        const AxisEstimate estimate = findRotationAxis(sinogram, info.angles);
        geometry.axis = estimate.axis;
        axisSource = "auto-center (confidence " + formatNumber(estimate.confidence, 3) + ")";
        std::printf("auto-center: axis %.2f (confidence %.2f%s; %s; detector centre %.1f)\n", estimate.axis,
                    estimate.confidence, estimate.confidence < 0.2 ? ", doubtful: check it" : "",
                    estimate.method.c_str(), geometry.detectorCentre());
        throwIfInterrupted();
    }
    cfg.axis = geometry.axis;

    ReconGeometry recon = ReconGeometry::fullSlice(geometry);
    if (cfg.region) recon.region = *cfg.region;
    geometry.validate();
    recon.validate();

    // Resolve the strategy now, so a bad one fails before any output exists
    // and the record names the one that ran.
    const std::string requested = cfg.options.strategy;
    cfg.options.strategy = BackendRegistry::instance().resolve(cfg.options, recon).name();

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
        {"axis", formatNumber(geometry.axis, 10)},
        {"axis_source", axisSource},
        {"axis_offsets_file", cfg.axisOffsetsFile.string()},
        {"region", std::to_string(recon.region.x) + "," + std::to_string(recon.region.y) + "," +
                       std::to_string(recon.region.width) + "," + std::to_string(recon.region.height)},
        {"slice_grid", std::to_string(recon.sliceWidth) + "x" + std::to_string(recon.sliceHeight)},
        {"strategy", cfg.options.strategy},
        {"strategy_requested", requested},
        {"interpolation", std::string(interpolationName(cfg.options.interpolation))},
        {"precision", std::string(precisionName(cfg.options.precision))},
        {"slices_per_pass", std::to_string(cfg.options.slicesPerPass)},
        {"filter", std::string(filterWindowName(cfg.options.filter.window))},
        {"padding", std::string(paddingName(cfg.options.filter.padding))},
        {"device", std::to_string(cfg.options.device)},
        {"threads", std::to_string(cfg.options.threads)},
        {"units", "attenuation per pixel"},
        {"run_config", toJson(cfg)},
    };

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
    job.options = cfg.options;

    VolumeReport report;
    {
        auto writer = createVolumeWriter(output, recon.region.width, recon.region.height, rowCount, write);
        ProgressBar bar(rowCount, "rows", !c.quiet);
        report = reconstructVolume(*reader, job, *writer, [&](double fraction, std::string_view) {
            throwIfInterrupted();
            bar.update(static_cast<int>(std::lround(fraction * rowCount)));
        });
    }
    if (resultInDemoFolder) demoFolder->keep(); // removed with the scan when the run fails

    std::printf("%s: %d slices of %dx%d -> %s in %s (read %s, preprocess %s, filter + back-projection %s at "
                "%.3g GU/s with %s, write %s)\n",
                kProgram, report.slices, recon.region.width, recon.region.height, output.c_str(),
                formatSeconds(report.secondsTotal).c_str(), formatSeconds(report.secondsRead).c_str(),
                formatSeconds(report.secondsPreprocess).c_str(), formatSeconds(report.secondsReconstruct).c_str(),
                report.gups, report.strategy.c_str(), formatSeconds(report.secondsWrite).c_str());
    if (report.preprocess.clamped > 0)
        std::printf("warning: %zu values had a transmission <= 0 (raw <= dark or flat <= dark) and were clamped\n",
                    report.preprocess.clamped);

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
