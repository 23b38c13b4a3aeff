// tomo-bench --pipeline: writes a simulated uint16 DXchange scan to a folder,
// measures the storage floor of that folder in the same run (sequential read
// of the scan's bytes with the page cache dropped and warm, sequential write
// of the output's bytes), then runs tomo-recon's path (openDataset ->
// reconstructVolume -> volume writer) with the input cold and warm, and
// reports each stage's busy time and the ratio
//   total / max(read floor, write floor, compute),
// where compute is the time in which the plan filtered or back-projected
// (GPU; the two overlap) or the reconstruct stage's busy time (CPU). 1.0 = as fast as the slowest of
// storage and compute allows.
#include "bench_pipeline.h"

#include "cli_support.h"

#include "tomo/cluster.h"
#include "tomo/dataset.h"
#include "tomo/distributed.h"
#include "tomo/error.h"
#include "tomo/gpu_list.h"
#include "tomo/output_range.h"
#include "tomo/phantom.h"
#include "tomo/pipeline.h"
#include "tomo/preview.h"
#include "tomo/registry.h"
#include "tomo/run_config.h"
#include "tomo/scan_writer.h"
#include "tomo/shared_volume.h"
#include "tomo/volume_io.h"
#include "tomo/worker_pool.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace tomo::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr float kFlatCounts = 20000.0f;
constexpr float kDarkCounts = 100.0f;
constexpr std::size_t kIoPiece = std::size_t{16} << 20;

double gib(double bytes) { return bytes / double(1u << 30); }

/// The middle slice of the 3D Shepp-Logan phantom as line integrals
/// [angle][column], scaled per detector row so that rows differ.
class SimulatedScan {
public:
    SimulatedScan(int projections, int rows, int columns)
        : m_rows(rows), m_columns(columns), m_angles(uniformAngles(projections)) {
        PhantomSpec spec;
        spec.bins = columns;
        spec.rows = 3;
        spec.attenuationScale = 2.0 / columns; // transmissions of a few percent at the thickest
        const ImageStack integrals = projectPhantom(spec, m_angles);
        m_lines.assign(integrals.image(1).begin(), integrals.image(1).end());
    }

    const std::vector<double>& angles() const { return m_angles; }

    /// Counts of `count` projections from `first`, [projection][row][column].
    void fill(int first, int count, std::span<std::uint16_t> out, WorkerPool& pool) const {
        const std::size_t image = static_cast<std::size_t>(m_rows) * m_columns;
        pool.parallelFor(count * m_rows, [&](int index, int) {
            const int p = index / m_rows, r = index % m_rows;
            const float scale = 0.6f + 0.4f * std::cos(3.0f * (static_cast<float>(r) / m_rows - 0.5f));
            const float* line = m_lines.data() + static_cast<std::size_t>(first + p) * m_columns;
            std::uint16_t* dst = out.data() + p * image + static_cast<std::size_t>(r) * m_columns;
            for (int c = 0; c < m_columns; ++c)
                dst[c] = static_cast<std::uint16_t>(kDarkCounts + kFlatCounts * std::exp(-scale * line[c]) + 0.5f);
        });
    }

private:
    int m_rows, m_columns;
    std::vector<double> m_angles;
    std::vector<float> m_lines; // [angle][column]
};

void writeScan(const fs::path& path, const ScanLayout& layout) {
    const auto t0 = Clock::now();
    const SimulatedScan sim(layout.projections, layout.rows, layout.columns);
    std::vector<double> degrees;
    for (double a : sim.angles()) degrees.push_back(a * 180.0 / 3.14159265358979323846);
    auto writer = createDXchangeScanWriter(path, layout, degrees, /*overwrite=*/true);
    WorkerPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    const std::size_t image = static_cast<std::size_t>(layout.rows) * layout.columns;
    const int block = static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / (image * 2), 1, 64));
    std::vector<std::uint16_t> values(image * block);
    for (int first = 0; first < layout.projections; first += block) {
        throwIfInterrupted();
        const int n = std::min(block, layout.projections - first);
        const std::span<std::uint16_t> part = std::span(values).first(image * n);
        sim.fill(first, n, part, pool);
        writer->writeProjections(first, n, part);
    }
    writer->writeFlats(std::vector<std::uint16_t>(image * layout.flats, static_cast<std::uint16_t>(kFlatCounts + kDarkCounts)));
    writer->writeDarks(std::vector<std::uint16_t>(image * layout.darks, static_cast<std::uint16_t>(kDarkCounts)));
    writer->commit();
    std::printf("wrote the simulated scan %s (%.2f GiB) in %s\n", path.c_str(), gib(static_cast<double>(fs::file_size(path))),
                formatSeconds(secondsSince(t0)).c_str());
}

/// An open file descriptor, closed on scope exit.
class Fd {
public:
    Fd(const fs::path& path, int flags) : m_fd(::open(path.c_str(), flags | O_CLOEXEC, 0644)), m_path(path) {
        if (m_fd < 0) throw IoError(path.string() + ": cannot open: " + std::strerror(errno));
    }
    ~Fd() { ::close(m_fd); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
    fs::path m_path;
};

/// Drops the file's pages from the page cache (written back first), so the
/// next read comes from the disk. A no-op on tmpfs.
void evictFromCache(const fs::path& path) {
    Fd fd(path, O_RDONLY);
    ::fdatasync(fd.get());
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
}

/// Seconds to read the whole file sequentially.
double timeRead(const fs::path& path) {
    std::vector<char> buffer(kIoPiece);
    Fd fd(path, O_RDONLY);
    const auto t0 = Clock::now();
    for (;;) {
        const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
        if (n < 0) throw IoError(path.string() + ": read failed: " + std::strerror(errno));
        if (n == 0) break;
    }
    return secondsSince(t0);
}

struct WriteFloor {
    double accepted = 0.0; ///< write() calls returned (the data are in the page cache)
    double onDisk = 0.0;   ///< and fdatasync() returned
};

/// Writes `bytes` to a scratch file in `dir` sequentially, then removes it.
WriteFloor timeWrite(const fs::path& dir, std::size_t bytes) {
    const fs::path scratch = dir / ".tomo-bench-write-floor";
    std::vector<char> buffer(kIoPiece, 1);
    WriteFloor floor;
    {
        Fd fd(scratch, O_WRONLY | O_CREAT | O_TRUNC);
        const auto t0 = Clock::now();
        for (std::size_t done = 0; done < bytes;) {
            const std::size_t n = std::min(buffer.size(), bytes - done);
            const ssize_t w = ::write(fd.get(), buffer.data(), n);
            if (w <= 0) {
                const std::string why = std::strerror(errno);
                fs::remove(scratch);
                throw IoError(scratch.string() + ": write failed: " + why);
            }
            done += static_cast<std::size_t>(w);
        }
        floor.accepted = secondsSince(t0);
        ::fdatasync(fd.get());
        floor.onDisk = secondsSince(t0);
    }
    fs::remove(scratch);
    return floor;
}

struct RunResult {
    std::string input; ///< "cold" or "warm"
    std::vector<int> devices; ///< the lanes' devices (empty: --device alone)
    VolumeReport report;
    std::vector<RankReport> ranks; ///< --mpi: every rank's share
    /// seconds: GPU filtering or back-projecting (union), or the CPU
    /// reconstruct stage; of the busiest lane (of the busiest rank)
    double compute = 0.0;
    double rangeEstimate = 0.0; ///< seconds estimating an integer output's range first (not in the total)
    double createOutput = 0.0;  ///< seconds creating the output (in the setup and the total)
    ClippedValues clipped;
    double floor = 0.0;   ///< max(read floor, write floor, compute)
};

void add(ClippedValues& sum, const ClippedValues& c) {
    sum.below += c.below;
    sum.above += c.above;
    sum.nan += c.nan;
}

/// tomo-recon's job for the whole scan: full slices at the detector centre.
VolumeJob scanJob(const PipelineBenchSettings& s, const DatasetInfo& info) {
    VolumeJob job;
    job.options = s.options;
    job.corrections = s.corrections;
    job.gpuCorrections = s.gpuCorrections;
    job.memoryBudget = static_cast<std::size_t>(s.memoryBudgetGiB * double(std::size_t{1} << 30));
    Geometry g;
    g.angles = info.angles;
    g.bins = info.columns;
    g.axis = g.detectorCentre();
    job.geometry = ReconGeometry::fullSlice(g);
    return job;
}

/// Makes the runs' plan once, so that `auto`'s tuning on its first use on
/// this machine (cached afterwards) is not counted in the cold run; returns
/// the seconds it took.
double prepareStrategy(const PipelineBenchSettings& s, const fs::path& scan) {
    const auto t0 = Clock::now();
    const auto reader = openDataset(scan);
    (void)createPlan(scanJob(s, reader->info()).geometry, s.options);
    return secondsSince(t0);
}

/// A lane's compute: GPU filtering or back-projecting (their union), or its
/// reconstruct stage on the CPU.
double laneCompute(const LaneReport& lane) {
    const Backend* backend = BackendRegistry::instance().find(lane.strategy);
    const bool gpu = backend && backend->family() != "cpu";
    const StageTimes& t = lane.plan;
    return !gpu ? lane.secondsReconstruct : t.compute > 0.0 ? t.compute : t.filter + t.backproject;
}

/// One run of tomo-recon's path on `devices` (one lane each), or, with a
/// cluster, of tomo-recon --mpi's on every rank.
RunResult runOnce(const PipelineBenchSettings& s, Cluster* cluster, const std::vector<int>& devices,
                  const fs::path& scan, const fs::path& output, bool cold, double readFloor, double writeFloor) {
    if (cold) evictFromCache(scan);
    auto reader = openDataset(scan);
    const DatasetInfo& info = reader->info();
    VolumeJob job = scanJob(s, info);
    job.devices = devices;
    WriteOptions write;
    write.overwrite = true;
    write.type = s.outputType;
    RunResult r;
    r.input = cold ? "cold" : "warm";
    r.devices = devices;
    if (isQuantized(write.type)) {
        const auto t0 = Clock::now();
        const RangeEstimate range = estimateOutputRange(*reader, job);
        r.rangeEstimate = secondsSince(t0);
        write.rangeMin = range.min;
        write.rangeMax = range.max;
    }
    if (cluster) {
        const auto created = Clock::now();
        SharedVolume shared = SharedVolume::create(output, info.columns, info.columns, info.rows, write, false);
        r.createOutput = secondsSince(created);
        DistributedOrder order;
        order.input = fs::absolute(scan);
        order.job = job;
        order.job.devices.clear();
        order.job.rowCount = info.rows;
        order.gpus = s.gpus;
        order.write = write;
        order.layout = shared.layout();
        const DistributedReport distributed =
            reconstructOnCluster(*cluster, *reader, order, shared, [](double, std::string_view) { throwIfInterrupted(); });
        r.report = combinedReport(distributed, job.geometry);
        r.ranks = distributed.ranks;
        for (const RankReport& rank : r.ranks) {
            add(r.clipped, rank.clipped);
            for (const LaneReport& lane : rank.report.lanes) r.compute = std::max(r.compute, laneCompute(lane));
        }
    } else {
        const auto created = Clock::now();
        auto writer = createVolumeWriter(output, info.columns, info.columns, info.rows, write);
        r.createOutput = secondsSince(created);
        r.report = reconstructVolume(*reader, job, *writer, [](double, std::string_view) { throwIfInterrupted(); });
        r.clipped = writer->clipped();
        for (const LaneReport& lane : r.report.lanes) r.compute = std::max(r.compute, laneCompute(lane));
    }
    // As tomo-recon counts it: the output's creation (its room reserved) is setup.
    r.report.secondsSetup += r.createOutput;
    r.report.secondsTotal += r.createOutput;
    r.floor = std::max({readFloor, writeFloor, r.compute});
    return r;
}

fs::path scanName(const PipelineBenchSettings& s, int rows) {
    return "scan-" + std::to_string(s.projections) + "x" + std::to_string(rows) + "x" + std::to_string(s.columns) +
           (s.chunkedInput ? "-chunked" : "-contiguous") + (s.gzipLevel ? "-gzip" + std::to_string(s.gzipLevel) : "") +
           ".h5";
}

bool matches(const fs::path& scan, const ScanLayout& layout) {
    try {
        const auto reader = openDataset(scan);
        const DatasetInfo& i = reader->info();
        return i.projections == layout.projections && i.rows == layout.rows && i.columns == layout.columns;
    } catch (const Error&) {
        return false;
    }
}


/// The scan's folder (checked) and layout.
struct ScanPlace {
    fs::path dir;
    fs::path scan;
    ScanLayout layout;
};

ScanPlace scanPlace(const PipelineBenchSettings& s) {
    const int rows = s.rows > 0 ? s.rows : s.columns;
    if (s.projections < 2 || s.columns < 8 || rows < 1)
        throw InvalidArgument("--pipeline: --projections must be >= 2, --size >= 8 and --rows >= 1");
    ScanPlace p;
    p.dir = s.dir.empty() ? fs::temp_directory_path() : s.dir;
    std::error_code ec;
    if (!fs::is_directory(p.dir, ec)) throw IoError("--dir " + p.dir.string() + ": not a folder");
    p.layout.projections = s.projections;
    p.layout.rows = rows;
    p.layout.columns = s.columns;
    p.layout.flats = 4;
    p.layout.darks = 4;
    p.layout.chunkedPerProjection = s.chunkedInput || s.gzipLevel > 0;
    p.layout.gzipLevel = s.gzipLevel;
    p.scan = p.dir / scanName(s, rows);
    return p;
}

/// Writes the simulated scan, or reuses a kept one of the same shape.
void provideScan(const PipelineBenchSettings& s, const ScanPlace& p) {
    std::error_code ec;
    if (s.keep && fs::exists(p.scan, ec) && matches(p.scan, p.layout))
        std::printf("reusing the simulated scan %s\n", p.scan.c_str());
    else
        writeScan(p.scan, p.layout);
}

double medianOf(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

} // namespace

void writeJson(const std::string& path, const json& doc) {
    const fs::path target = path;
    fs::path tmp = target;
    tmp += ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) throw IoError("--json: cannot write '" + tmp.string() + "'");
        out << doc.dump(2) << "\n";
        if (!out.flush()) throw IoError("--json: cannot write '" + tmp.string() + "' (disk full?)");
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw IoError("--json: cannot rename the result to '" + target.string() + "'");
    }
}

int runOpenScanBenchmark(const PipelineBenchSettings& s) {
    const ScanPlace p = scanPlace(s);
    const int rows = p.layout.rows;
    std::printf("tomo-bench --pipeline --open-scan: %d projections x %d rows x %d columns uint16 (%s) in %s: open "
                "cold, first slice, row changes, axis changes\n",
                s.projections, rows, s.columns, p.layout.chunkedPerProjection ? "one projection per chunk" : "contiguous",
                p.dir.c_str());
    std::fflush(stdout);
    provideScan(s, p);
    evictFromCache(p.scan);

    auto t0 = Clock::now();
    std::shared_ptr<DatasetReader> reader = openDataset(p.scan);
    const double open = secondsSince(t0);
    PreviewSession session(reader);
    PreviewRequest request;
    request.options = s.options;
    request.corrections = s.corrections;
    request.row = rows / 2;
    t0 = Clock::now();
    const PreviewResult first = session.run(request);
    const double firstSlice = secondsSince(t0);
    // Rows not read before, spread over the detector: each is read cold.
    std::vector<double> rowChanges, rowLoads;
    for (int i = 1; i <= 8 && i < rows; ++i) {
        throwIfInterrupted();
        request.row = static_cast<int>((static_cast<long long>(rows) * i) / 9);
        if (request.row == rows / 2) continue;
        const PreviewResult r = session.run(request);
        rowChanges.push_back(r.secondsTotal);
        rowLoads.push_back(r.secondsLoad);
    }
    std::vector<double> axisChanges;
    const double centre = (s.columns - 1) / 2.0;
    for (int i = 0; i < 10; ++i) {
        throwIfInterrupted();
        request.axis = centre + 0.25 * (i + 1);
        axisChanges.push_back(session.run(request).secondsTotal);
    }
    std::error_code ec;
    if (!s.keep) fs::remove(p.scan, ec);

    const double rowChange = medianOf(rowChanges), rowLoad = medianOf(rowLoads), axisChange = medianOf(axisChanges);
    std::printf("\n%-14s %10s %12s %12s %12s %12s\n", "strategy", "open ms", "1st slice ms", "row ms", "row read ms",
                "axis ms");
    std::printf("%-14s %10.1f %12.1f %12.1f %12.1f %12.2f\n", first.strategy.c_str(), open * 1e3, firstSlice * 1e3,
                rowChange * 1e3, rowLoad * 1e3, axisChange * 1e3);
    std::printf("(open = openDataset with the page cache dropped; 1st slice = the middle row: read cold, corrected, "
                "filtered, back-projected; row = median over %zu rows not read before (row read = their reading and "
                "correction); axis = median of 10 axis changes)\n",
                rowChanges.size());
    if (!s.json.empty()) {
        writeJson(s.json, {{"mode", "open-scan"},
                           {"scan", {{"projections", s.projections}, {"rows", rows}, {"columns", s.columns},
                                     {"bytes", static_cast<double>(fs::file_size(p.scan, ec))}}},
                           {"strategy", first.strategy},
                           {"open_ms", open * 1e3},
                           {"first_slice_ms", firstSlice * 1e3},
                           {"row_change_ms", rowChange * 1e3},
                           {"row_read_ms", rowLoad * 1e3},
                           {"axis_change_ms", axisChange * 1e3}});
        std::printf("wrote %s\n", s.json.c_str());
    }
    return 0;
}

namespace {

/// --writer-threads --mpi, on every rank: the writer of a shared output (as
/// tomo-recon --mpi's ranks have it, from rank 0's `order`: the output's
/// layout and the writer threads) writes the spans of slices rank 0's
/// `dealer` (nullptr elsewhere) hands out, `values` for each (up to `chunk`
/// slices at a time, as the conveyor hands them over). Rank 0 gets every
/// rank's outcome; a failure is thrown there.
void writeShare(Cluster& cluster, SliceDealer* dealer, const std::string& order, std::span<const float> values,
                int chunk) {
    const json j = json::parse(order);
    std::unique_ptr<VolumeWriter> writer;
    std::string setupError;
    std::size_t sliceValues = 0;
    try {
        const SharedVolume shared = SharedVolume::fromLayout(j.at("layout").get<std::string>());
        WriteOptions options;
        options.threads = j.at("threads").get<int>();
        writer = shared.writer(options, cluster.oneHost());
        sliceValues = values.size() / static_cast<std::size_t>(chunk);
    } catch (const std::exception& e) {
        setupError = errorText(e);
    }
    if (const std::string verdict = cluster.agree(setupError); !verdict.empty()) {
        if (cluster.rank() == 0) rethrowError(verdict);
        return; // rank 0 reports it
    }
    const std::vector<RankOutcome> outcomes = cluster.distribute(dealer, [&](RowSource& rows) {
        while (const std::optional<SliceSpan> span = rows.next(chunk)) {
            throwIfInterrupted();
            writer->writeSlices(span->first, span->count, values.first(sliceValues * static_cast<std::size_t>(span->count)));
            rows.written(*span);
        }
        writer->commit();
        return std::string();
    });
    if (cluster.rank() != 0) return;
    for (const RankOutcome& o : outcomes)
        if (!o.error.empty()) rethrowError(o.error, o.rank == 0 ? std::string() : Cluster::rankPrefix(o.rank, o.host));
}

} // namespace

int runWriterBenchmark(const PipelineBenchSettings& s) {
    if (s.output != "h5" && s.output != "tiff")
        throw InvalidArgument("--output-format " + s.output + ": expected h5 or tiff");
    const int slices = s.rows > 0 ? s.rows : s.columns;
    const fs::path dir = s.dir.empty() ? fs::temp_directory_path() : s.dir;
    const fs::path output = dir / (s.output == "h5" ? "tomo-bench-writer.h5" : "tomo-bench-writer");
    const std::size_t sliceValues = static_cast<std::size_t>(s.columns) * s.columns;
    const double bytes = static_cast<double>(outputTypeBytes(s.outputType)) * static_cast<double>(sliceValues) * slices;
    // The conveyor hands the writer chunks of slices: 64 of them here, the
    // values made up once (a ramp, so that no encoding takes a shortcut).
    const int chunk = std::min(slices, 64);
    std::vector<float> values(sliceValues * static_cast<std::size_t>(chunk));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 4093) * 1e-3f;
    // --mpi: the output shared by the ranks as tomo-recon --mpi writes it;
    // rank 0 makes, records and commits it, the others take part.
    std::unique_ptr<Cluster> cluster;
    if (s.mpi) {
        cluster = Cluster::join();
        if (cluster->rank() > 0) {
            for (std::string order; !(order = cluster->awaitStart()).empty();) {
                writeShare(*cluster, nullptr, order, values, chunk);
                cluster->broadcast({}); // rank 0's verdict: it reports a failure
            }
            return kExitOk;
        }
        if (!cluster->mpi())
            std::printf("tomo-bench: --mpi: no MPI launcher (mpirun, srun) started this process: running as one rank\n");
    }
    const std::string by =
        cluster ? ", shared by " + std::to_string(cluster->size()) + " MPI rank" + (cluster->size() > 1 ? "s" : "") : "";
    std::printf("tomo-bench --pipeline --writer-threads: %d slices of %d^2 %s (%s, %.2f GiB) into %s%s, %d slices "
                "per call, a new output each run\n\n",
                slices, s.columns, outputTypeName(s.outputType), s.output == "h5" ? "HDF5" : "TIFF folder", gib(bytes),
                dir.c_str(), by.c_str(), chunk);
    std::printf("%8s %10s %10s %10s %10s\n", "threads", "create s", "write s", "GB/s", "vs 1st");
    json runs = json::array();
    double first = 0.0;
    for (const int threads : s.writerThreads) {
        throwIfInterrupted();
        std::error_code ec;
        fs::remove_all(output, ec);
        WriteOptions options;
        options.type = s.outputType;
        options.rangeMin = -1.0f;
        options.rangeMax = 5.0f;
        options.threads = threads;
        const auto t0 = Clock::now();
        double create = 0.0;
        if (cluster) {
            SharedVolume shared = SharedVolume::create(output, s.columns, s.columns, slices, options, false);
            create = secondsSince(t0);
            SliceDealer dealer(shared.missing(), cluster->size(), 1,
                               [&shared](const SliceSpan& span, int rank) { shared.record(span, rank); });
            const std::string order = json{{"layout", shared.layout()}, {"threads", threads}}.dump();
            cluster->start(order);
            try {
                writeShare(*cluster, &dealer, order, values, chunk);
                shared.commit();
            } catch (const std::exception&) {
                cluster->broadcast("failed");
                throw;
            }
            cluster->broadcast("ok");
        } else {
            auto writer = createVolumeWriter(output, s.columns, s.columns, slices, options);
            create = secondsSince(t0);
            for (int done = 0; done < slices; done += chunk) {
                const int n = std::min(chunk, slices - done);
                writer->writeSlices(done, n, std::span<const float>(values).first(sliceValues * static_cast<std::size_t>(n)));
            }
            writer->commit();
        }
        const double write = secondsSince(t0) - create;
        fs::remove_all(output, ec);
        const double rate = bytes / (create + write) / 1e9;
        if (first == 0.0) first = rate;
        std::printf("%8d %10.3f %10.3f %10.2f %9.2fx\n", threads, create, write, rate, rate / first);
        std::fflush(stdout);
        runs.push_back({{"threads", threads}, {"seconds_create", create}, {"seconds_write", write}, {"gb_per_s", rate}});
    }
    if (cluster) cluster->start({}); // the other ranks: no more runs
    std::printf("(create = the output made with its room checked; write = every slice written and the commit; GB/s "
                "over both%s)\n",
                cluster ? "; threads per rank" : "");
    if (!s.json.empty()) {
        writeJson(s.json, {{"mode", "writer"},
                           {"output", {{"format", s.output}, {"type", outputTypeName(s.outputType)}, {"bytes", bytes}}},
                           {"dir", dir.string()},
                           {"ranks", cluster ? cluster->size() : 1},
                           {"runs", runs}});
        std::printf("wrote %s\n", s.json.c_str());
    }
    return kExitOk;
}

namespace {

/// The devices of --gpus: GPUs of this machine; for a CPU strategy any
/// indices, which only number lanes that share the cores.
std::vector<int> benchDevices(const PipelineBenchSettings& s) {
    const Backend* backend = BackendRegistry::instance().find(s.options.strategy);
    if (!backend || backend->family() != "cpu") return parseGpus(s.gpus, gpuDevices());
    if (s.gpus == "all") throw InvalidArgument("--gpus all: strategy '" + s.options.strategy + "' runs on the CPU; number its lanes (0,1,...)");
    std::vector<GpuDevice> labels(kMaxDevice + 1);
    for (int i = 0; i <= kMaxDevice; ++i) labels[static_cast<std::size_t>(i)].index = i;
    return parseGpus(s.gpus, labels);
}

/// The lane sets of the scaling table: the first 1, 2, 4, ... of `devices`,
/// and all of them.
std::vector<std::vector<int>> scalingSets(const std::vector<int>& devices) {
    std::vector<std::vector<int>> sets;
    for (std::size_t n = 1; n < devices.size(); n *= 2) sets.emplace_back(devices.begin(), devices.begin() + n);
    sets.push_back(devices);
    return sets;
}

/// "0:4.12 1:4.05" (device: the busy seconds of its lane's reconstruct
/// stage; with ranks "r1/0:..." ), and the chunks each took.
std::string laneBusy(const RunResult& r) {
    std::string text;
    const auto addLanes = [&](const std::vector<LaneReport>& lanes, const std::string& prefix) {
        for (const LaneReport& l : lanes)
            text += (text.empty() ? "" : " ") + prefix + std::to_string(l.device) + ":" +
                    formatNumber(l.secondsReconstruct, 3) + "s/" + std::to_string(l.chunks) + "ch";
    };
    if (r.ranks.empty()) addLanes(r.report.lanes, "");
    for (const RankReport& rank : r.ranks) addLanes(rank.report.lanes, "r" + std::to_string(rank.rank) + "/");
    for (const RankReport& rank : r.ranks)
        text += (rank.rank == 0 ? "; cores per rank: " : ", ") + std::to_string(rank.cores);
    return text;
}

} // namespace

int runPipelineBenchmark(const PipelineBenchSettings& s) {
    if (s.output != "h5" && s.output != "tiff")
        throw InvalidArgument("--output-format " + s.output + ": expected h5 or tiff");
    // --mpi: rank 0 runs the benchmark; the other ranks take part in each run.
    std::unique_ptr<Cluster> cluster;
    if (s.mpi) {
        cluster = Cluster::join();
        if (cluster->rank() > 0) {
            while (takePartInCluster(*cluster, [](double, std::string_view) { throwIfInterrupted(); })) {
            }
            return kExitOk;
        }
        if (!cluster->mpi())
            std::printf("tomo-bench: --mpi: no MPI launcher (mpirun, srun) started this process: running as one rank\n");
    }
    const std::vector<std::vector<int>> laneSets =
        s.gpus.empty() || cluster ? std::vector<std::vector<int>>{{}} : scalingSets(benchDevices(s));
    const ScanPlace place = scanPlace(s);
    const fs::path& dir = place.dir;
    const ScanLayout& layout = place.layout;
    const int rows = layout.rows;
    const fs::path& scan = place.scan;
    std::error_code ec;
    const fs::path output = dir / (s.output == "h5" ? "tomo-bench-volume.h5" : "tomo-bench-volume");
    const double outputBytes =
        static_cast<double>(outputTypeBytes(s.outputType)) * rows * s.columns * static_cast<double>(s.columns);

    std::printf("tomo-bench --pipeline: %d projections x %d rows x %d columns uint16 (%s%s) -> %d slices of %d^2 "
                "%s (%s, %.2f GiB) in %s\n",
                s.projections, rows, s.columns, layout.chunkedPerProjection ? "one projection per chunk" : "contiguous",
                s.gzipLevel ? (", gzip " + std::to_string(s.gzipLevel)).c_str() : "", rows, s.columns,
                outputTypeName(s.outputType), s.output == "h5" ? "HDF5" : "TIFF folder", gib(outputBytes), dir.c_str());
    std::fflush(stdout);
    provideScan(s, place);
    const double inputBytes = static_cast<double>(fs::file_size(scan));

    // The storage floor of this folder, now.
    evictFromCache(scan);
    const double readCold = timeRead(scan);
    const double readWarm = timeRead(scan);
    const WriteFloor write = timeWrite(dir, static_cast<std::size_t>(outputBytes));
    std::printf("\nstorage floor in %s:\n", dir.c_str());
    std::printf("  read %.2f GiB cold  %8s (%.2f GB/s)\n", gib(inputBytes), formatSeconds(readCold).c_str(),
                inputBytes / readCold / 1e9);
    std::printf("  read %.2f GiB warm  %8s (%.2f GB/s)\n", gib(inputBytes), formatSeconds(readWarm).c_str(),
                inputBytes / readWarm / 1e9);
    std::printf("  write %.2f GiB      %8s (%.2f GB/s accepted by the OS; %s, %.2f GB/s, on disk after fdatasync)\n",
                gib(outputBytes), formatSeconds(write.accepted).c_str(), outputBytes / write.accepted / 1e9,
                formatSeconds(write.onDisk).c_str(), outputBytes / write.onDisk / 1e9);
    std::fflush(stdout);

    const double tuning = prepareStrategy(s, scan);
    std::printf("  plan made once before the runs in %s (with auto's tuning on its first use here, then cached)\n",
                formatSeconds(tuning).c_str());
    std::fflush(stdout);

    // Both runs make a new output: replacing one (kept by an earlier --keep)
    // costs more on some file systems (ext4 starts writing the new file out
    // at the rename).
    fs::remove_all(output, ec);
    std::vector<RunResult> runs;
    for (const std::vector<int>& devices : laneSets)
        for (bool cold : {true, false}) {
            throwIfInterrupted();
            runs.push_back(
                runOnce(s, cluster.get(), devices, scan, output, cold, cold ? readCold : readWarm, write.accepted));
            if (!s.keep || cold || &devices != &laneSets.back()) fs::remove_all(output, ec);
        }
    if (cluster) cluster->start({}); // the other ranks: no more runs
    if (!s.keep) fs::remove(scan, ec);

    // The speed-up of each run over the run with the first lane set (one
    // device) and the same input state.
    const auto speedup = [&](const RunResult& r) {
        for (const RunResult& first : runs)
            if (first.input == r.input) return first.report.secondsTotal / r.report.secondsTotal;
        return 1.0;
    };
    const std::string lanesHead = cluster ? "ranks" : "lanes";
    std::printf("\n%-5s %-5s %-14s %9s %9s %9s %9s %9s %9s %9s %-12s %9s %7s %7s\n", lanesHead.c_str(), "input",
                "strategy", "total", "setup", "read", "preproc", "recon", "write", "compute", "bottleneck", "floor",
                "ratio", "vs 1st");
    for (const RunResult& r : runs) {
        const VolumeReport& v = r.report;
        const std::size_t width = cluster ? r.ranks.size() : std::max<std::size_t>(1, r.devices.size());
        std::printf("%-5zu %-5s %-14s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %-12s %9.2f %7.2f %6.2fx\n", width,
                    r.input.c_str(), v.strategy.c_str(), v.secondsTotal, v.secondsSetup, v.secondsRead,
                    v.secondsPreprocess, v.secondsReconstruct, v.secondsWrite, r.compute, v.bottleneck().c_str(),
                    r.floor, v.secondsTotal / r.floor, speedup(r));
    }
    std::printf("(seconds; setup = before the stages start (output created, plan, tuning on the strategy's first use); "
                "read/preproc/recon/write = busy time of each conveyor stage, overlapping (with several lanes or "
                "ranks, the busiest one's); compute = GPU filtering or back-projecting (overlaps once), or the "
                "reconstruct stage on the CPU, of the busiest lane; floor = max(read floor of the same cache state, "
                "write floor, compute); ratio = total / floor; vs 1st = the first row's total of the same input over "
                "this one)\n");
    for (const RunResult& r : runs)
        if (r.report.lanes.size() > 1 || !r.ranks.empty())
            std::printf("%zu %s, %s input: busy per device (reconstruct seconds / chunks): %s\n",
                        cluster ? r.ranks.size() : r.devices.size(), lanesHead.c_str(), r.input.c_str(),
                        laneBusy(r).c_str());
    for (const RunResult& r : runs) {
        std::printf("%s input: preprocessing on %s; chunk %d rows, chunk buffers peak %.0f MiB; plan split upload "
                    "%.2f, filter %.2f, back-projection %.2f, download %.2f s; %.0f GU/s over the reconstruct stage\n",
                    r.input.c_str(), r.report.correctedOn.c_str(), r.report.chunkRows,
                    static_cast<double>(r.report.peakBufferBytes) / (1 << 20),
                    r.report.plan.upload, r.report.plan.filter, r.report.plan.backproject, r.report.plan.download,
                    r.report.gups);
        std::printf("%s input: not overlapped: setup %.3f s (plan %.3f, output %.3f), lead-in %.3f s (the first "
                    "chunk read and preprocessed), tail %.3f s (the last writes and the commit)\n",
                    r.input.c_str(), r.report.secondsSetup, r.report.secondsPlan, r.createOutput,
                    r.report.secondsLeadIn, r.report.secondsTail);
        if (!r.report.preprocessSteps.empty())
            std::printf("%s input: preprocessing busy per step: %s\n", r.input.c_str(),
                        formatSteps(r.report.preprocessSteps).c_str());
        if (s.outputType != OutputType::Float32)
            std::printf("%s input: %s output, %llu values clipped%s\n", r.input.c_str(), outputTypeName(s.outputType),
                        static_cast<unsigned long long>(r.clipped.total()),
                        isQuantized(s.outputType) ? ("; range estimated before the run in " +
                                                     formatSeconds(r.rangeEstimate) + " (not in the total)")
                                                        .c_str()
                                                  : "");
    }

    if (!s.json.empty()) {
        json results = json::array();
        for (const RunResult& r : runs) {
            const VolumeReport& v = r.report;
            json lanes = json::array();
            const auto addLanes = [&](const std::vector<LaneReport>& list, int rank) {
                for (const LaneReport& l : list)
                    lanes.push_back({{"rank", rank},
                                     {"device", l.device},
                                     {"strategy", l.strategy},
                                     {"slices_per_pass", l.slicesPerPass},
                                     {"chunks", l.chunks},
                                     {"slices", l.slices},
                                     {"busy_reconstruct", l.secondsReconstruct},
                                     {"busy_preprocess", l.secondsPreprocess},
                                     {"compute_seconds", laneCompute(l)},
                                     {"gups", l.gups}});
            };
            if (r.ranks.empty()) addLanes(v.lanes, 0);
            json cores = json::array();
            for (const RankReport& rank : r.ranks) {
                addLanes(rank.report.lanes, rank.rank);
                cores.push_back(rank.cores);
            }
            results.push_back({{"input", r.input},
                               {"devices", r.devices},
                               {"ranks", std::max<std::size_t>(1, r.ranks.size())},
                               {"cores_per_rank", cores},
                               {"lanes", lanes},
                               {"speedup_vs_first", speedup(r)},
                               {"strategy", v.strategy},
                               {"preprocessing_on", v.correctedOn},
                               {"preprocessing_step_seconds",
                                [&] {
                                    json steps = json::object();
                                    for (const auto& [name, seconds] : v.preprocessSteps) steps[name] = seconds;
                                    return steps;
                                }()},
                               {"seconds_total", v.secondsTotal},
                               {"seconds_setup", v.secondsSetup},
                               {"seconds_setup_plan", v.secondsPlan},
                               {"seconds_setup_output", r.createOutput},
                               {"seconds_lead_in", v.secondsLeadIn},
                               {"seconds_tail", v.secondsTail},
                               {"busy_seconds",
                                {{"read", v.secondsRead},
                                 {"preprocess", v.secondsPreprocess},
                                 {"reconstruct", v.secondsReconstruct},
                                 {"write", v.secondsWrite}}},
                               {"plan_seconds",
                                {{"upload", v.plan.upload},
                                 {"filter", v.plan.filter},
                                 {"backproject", v.plan.backproject},
                                 {"download", v.plan.download}}},
                               {"compute_seconds", r.compute},
                               {"floor_seconds", r.floor},
                               {"ratio", v.secondsTotal / r.floor},
                               {"bottleneck", v.bottleneck()},
                               {"chunk_rows", v.chunkRows},
                               {"range_estimate_seconds", r.rangeEstimate},
                               {"clipped_values", r.clipped.total()},
                               {"peak_buffer_bytes", v.peakBufferBytes}});
        }
        const json doc = {{"mode", "pipeline"},
                          {"scan",
                           {{"projections", s.projections},
                            {"rows", rows},
                            {"columns", s.columns},
                            {"chunked", layout.chunkedPerProjection},
                            {"gzip", s.gzipLevel},
                            {"bytes", inputBytes}}},
                          {"output",
                           {{"format", s.output}, {"type", outputTypeName(s.outputType)}, {"bytes", outputBytes}}},
                          {"storage_floor_seconds",
                           {{"read_cold", readCold},
                            {"read_warm", readWarm},
                            {"write_accepted", write.accepted},
                            {"write_on_disk", write.onDisk}}},
                          {"plan_seconds_before_runs", tuning},
                          {"runs", results}};
        writeJson(s.json, doc);
        std::printf("wrote %s\n", s.json.c_str());
    }
    return kExitOk;
}

} // namespace tomo::cli
