#include "tomo/distributed.h"

#include "tomo/error.h"
#include "tomo/run_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace tomo {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

json optionsJson(const ReconOptions& o) {
    return {{"strategy", o.strategy},
            {"interpolation", interpolationName(o.interpolation)},
            {"precision", precisionName(o.precision)},
            {"slices_per_pass", o.slicesPerPass},
            {"filter", filterWindowName(o.filter.window)},
            {"padding", paddingName(o.filter.padding)},
            {"device", o.device},
            {"opencl_device", o.openclDevice},
            {"threads", o.threads},
            {"tuning", o.tuning}};
}

ReconOptions optionsFrom(const json& j) {
    ReconOptions o;
    o.strategy = j.at("strategy").get<std::string>();
    o.interpolation = parseInterpolation(j.at("interpolation").get<std::string>());
    o.precision = parsePrecision(j.at("precision").get<std::string>());
    o.slicesPerPass = j.at("slices_per_pass").get<int>();
    o.filter.window = parseFilterWindow(j.at("filter").get<std::string>());
    o.filter.padding = parsePadding(j.at("padding").get<std::string>());
    o.device = j.at("device").get<int>();
    o.openclDevice = j.at("opencl_device").get<std::string>();
    o.threads = j.at("threads").get<int>();
    o.tuning = j.at("tuning").get<std::string>();
    return o;
}

json stageTimesJson(const StageTimes& t) {
    return {t.upload, t.filter, t.backproject, t.download, t.compute};
}
StageTimes stageTimesFrom(const json& j) {
    return {j.at(0).get<double>(), j.at(1).get<double>(), j.at(2).get<double>(), j.at(3).get<double>(),
            j.at(4).get<double>()};
}

/// Rank 0's view of the ranks' slices written, as progress.
class DealerProgress {
public:
    DealerProgress(const SliceDealer& dealer, int before, int slices) : m_dealer(dealer), m_before(before), m_slices(slices) {}
    double fraction() const {
        return m_slices > 0 ? (m_before + m_dealer.slicesWritten()) / static_cast<double>(m_slices) : 1.0;
    }

private:
    const SliceDealer& m_dealer;
    int m_before, m_slices;
};

/// The spans of `rows`, each told to the writer as the conveyor takes it
/// (VolumeWriter::expect): the place of a rank's slices in the shared output
/// is made ready while they are read and reconstructed, and only theirs.
class AnnouncedRows final : public RowSource {
public:
    AnnouncedRows(RowSource& rows, VolumeWriter& writer) : m_rows(rows), m_writer(writer) {}
    std::optional<SliceSpan> next(int most) override {
        std::optional<SliceSpan> span = m_rows.next(most);
        if (span) m_writer.expect(span->first, span->count);
        return span;
    }
    void written(const SliceSpan& span) override { m_rows.written(span); }
    double fractionWritten() const override { return m_rows.fractionWritten(); }

private:
    RowSource& m_rows;
    VolumeWriter& m_writer;
};

/// This rank's job of the order: its devices and the spans of `rows`.
VolumeReport runShare(DatasetReader& reader, const DistributedOrder& order, const std::vector<int>& devices,
                      VolumeWriter& writer, RowSource& rows, const ProgressCallback& progress) {
    VolumeJob job = order.job;
    job.devices = devices;
    AnnouncedRows announced(rows, writer);
    job.rows = &announced;
    return reconstructVolume(reader, job, writer, progress);
}

} // namespace

std::vector<int> rankDevices(const std::string& gpus, const std::string& strategy, int localRank,
                             const std::vector<GpuDevice>& present) {
    if (!gpus.empty()) return parseGpus(gpus, present);
    // auto picks a GPU strategy wherever there is a GPU: without a device
    // list every rank of a host would take the first one.
    const Backend* backend = BackendRegistry::instance().find(strategy);
    const bool onGpu = strategy == "auto" ? !present.empty() : backend && backend->family() == "cuda";
    if (!onGpu) return {};
    if (present.empty()) throw DeviceError("strategy '" + strategy + "' needs a CUDA GPU; this host has none");
    return {present[static_cast<std::size_t>(localRank) % present.size()].index};
}

std::vector<int> rankDevices(const std::string& gpus, const std::string& strategy, int localRank) {
    return rankDevices(gpus, strategy, localRank, gpuDevices());
}

std::string orderToJson(const DistributedOrder& order) {
    // The input's open options and the corrections as a run config says them.
    RunConfig config;
    config.input = order.input;
    config.open = order.open;
    config.corrections = order.job.corrections;
    const VolumeJob& job = order.job;
    const ReconGeometry& g = job.geometry;
    json j = {{"config", toJson(config)},
              {"variable", order.open.variable},
              {"log_corrected", order.open.logCorrected},
              {"allow_divergent_beam", order.open.allowDivergentBeam},
              {"first_row", job.firstRow},
              {"row_count", job.rowCount},
              {"options", optionsJson(job.options)},
              {"angles", g.geometry.angles},
              {"bins", g.geometry.bins},
              {"axis", g.geometry.axis},
              {"axis_offsets", g.geometry.axisOffsets},
              {"slice_grid", {g.sliceWidth, g.sliceHeight}},
              {"region", {g.region.x, g.region.y, g.region.width, g.region.height}},
              {"chunk_rows", job.chunkRows},
              {"memory_budget", job.memoryBudget},
              {"max_clamped_fraction", job.maxClampedFraction},
              {"gpu_corrections", job.gpuCorrections},
              {"gpus", order.gpus},
              {"output_type", outputTypeName(order.write.type)},
              {"range", {order.write.rangeMin, order.write.rangeMax}},
              {"writer_threads", order.write.threads},
              {"layout", order.layout}};
    if (job.axisLine) j["axis_line"] = {job.axisLine->axis, job.axisLine->tilt, job.axisLine->referenceRow};
    return j.dump();
}

DistributedOrder orderFromJson(const std::string& text) {
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    DistributedOrder order;
    try {
        if (!j.is_object()) throw json::type_error::create(302, "not an object", nullptr);
        const RunConfig config = runConfigFromJson(j.at("config").get<std::string>());
        order.input = config.input;
        order.open = config.open;
        order.open.variable = j.at("variable").get<std::string>();
        order.open.logCorrected = j.at("log_corrected").get<bool>();
        order.open.allowDivergentBeam = j.at("allow_divergent_beam").get<bool>();
        VolumeJob& job = order.job;
        job.corrections = config.corrections;
        job.firstRow = j.at("first_row").get<int>();
        job.rowCount = j.at("row_count").get<int>();
        job.options = optionsFrom(j.at("options"));
        ReconGeometry& g = job.geometry;
        g.geometry.angles = j.at("angles").get<std::vector<double>>();
        g.geometry.bins = j.at("bins").get<int>();
        g.geometry.axis = j.at("axis").get<double>();
        g.geometry.axisOffsets = j.at("axis_offsets").get<std::vector<double>>();
        g.sliceWidth = j.at("slice_grid").at(0).get<int>();
        g.sliceHeight = j.at("slice_grid").at(1).get<int>();
        const json& r = j.at("region");
        g.region = Region{r.at(0).get<int>(), r.at(1).get<int>(), r.at(2).get<int>(), r.at(3).get<int>()};
        if (j.contains("axis_line")) {
            const json& a = j.at("axis_line");
            job.axisLine = AxisLine{a.at(0).get<double>(), a.at(1).get<double>(), a.at(2).get<double>()};
        }
        job.chunkRows = j.at("chunk_rows").get<int>();
        job.memoryBudget = j.at("memory_budget").get<std::size_t>();
        job.maxClampedFraction = j.at("max_clamped_fraction").get<double>();
        job.gpuCorrections = j.at("gpu_corrections").get<bool>();
        order.gpus = j.at("gpus").get<std::string>();
        order.write.type = parseOutputType(j.at("output_type").get<std::string>(), "the order's output type");
        order.write.rangeMin = j.at("range").at(0).get<float>();
        order.write.rangeMax = j.at("range").at(1).get<float>();
        order.write.threads = j.at("writer_threads").get<int>();
        order.layout = j.at("layout").get<std::string>();
    } catch (const json::exception& e) {
        throw FormatError(std::string("MPI: rank 0's order is not valid: ") + e.what());
    }
    return order;
}

namespace {

/// A rank's report as JSON (sent to rank 0), and back.
std::string reportToJson(const VolumeReport& r, const ClippedValues& clipped) {
    json lanes = json::array();
    for (const LaneReport& l : r.lanes)
        lanes.push_back({{"device", l.device}, {"strategy", l.strategy}, {"tuning", l.tuning},
                         {"slices_per_pass", l.slicesPerPass}, {"corrected_on", l.correctedOn}, {"chunks", l.chunks},
                         {"slices", l.slices}, {"preprocess", l.secondsPreprocess},
                         {"reconstruct", l.secondsReconstruct}, {"plan", stageTimesJson(l.plan)}, {"gups", l.gups}});
    return json{{"strategy", r.strategy},
                {"corrected_on", r.correctedOn},
                {"slices", r.slices},
                {"chunk_rows", r.chunkRows},
                {"read", r.secondsRead},
                {"preprocess", r.secondsPreprocess},
                {"reconstruct", r.secondsReconstruct},
                {"write", r.secondsWrite},
                {"total", r.secondsTotal},
                {"setup", r.secondsSetup},
                {"plan_seconds", r.secondsPlan},
                {"lead_in", r.secondsLeadIn},
                {"tail", r.secondsTail},
                {"plan", stageTimesJson(r.plan)},
                {"peak_buffer_bytes", r.peakBufferBytes},
                {"gups", r.gups},
                {"lanes", lanes},
                {"clipped", {clipped.below, clipped.above, clipped.nan}},
                {"cores", coresOfThisProcess()}} // a launcher may bind a rank to fewer than the host has
        .dump();
}

RankReport reportFromJson(const std::string& text) {
    RankReport rank;
    VolumeReport& r = rank.report;
    try {
        const json j = json::parse(text);
        const json& c = j.at("clipped");
        rank.clipped = {c.at(0).get<std::uint64_t>(), c.at(1).get<std::uint64_t>(), c.at(2).get<std::uint64_t>()};
        rank.cores = j.at("cores").get<int>();
        r.strategy = j.at("strategy").get<std::string>();
        r.correctedOn = j.at("corrected_on").get<std::string>();
        r.slices = j.at("slices").get<int>();
        r.chunkRows = j.at("chunk_rows").get<int>();
        r.secondsRead = j.at("read").get<double>();
        r.secondsPreprocess = j.at("preprocess").get<double>();
        r.secondsReconstruct = j.at("reconstruct").get<double>();
        r.secondsWrite = j.at("write").get<double>();
        r.secondsTotal = j.at("total").get<double>();
        r.secondsSetup = j.at("setup").get<double>();
        r.secondsPlan = j.at("plan_seconds").get<double>();
        r.secondsLeadIn = j.at("lead_in").get<double>();
        r.secondsTail = j.at("tail").get<double>();
        r.plan = stageTimesFrom(j.at("plan"));
        r.peakBufferBytes = j.at("peak_buffer_bytes").get<std::size_t>();
        r.gups = j.at("gups").get<double>();
        for (const json& l : j.at("lanes")) {
            LaneReport lane;
            lane.device = l.at("device").get<int>();
            lane.strategy = l.at("strategy").get<std::string>();
            lane.tuning = l.at("tuning").get<std::string>();
            lane.slicesPerPass = l.at("slices_per_pass").get<int>();
            lane.correctedOn = l.at("corrected_on").get<std::string>();
            lane.chunks = l.at("chunks").get<int>();
            lane.slices = l.at("slices").get<int>();
            lane.secondsPreprocess = l.at("preprocess").get<double>();
            lane.secondsReconstruct = l.at("reconstruct").get<double>();
            lane.plan = stageTimesFrom(l.at("plan"));
            lane.gups = l.at("gups").get<double>();
            r.lanes.push_back(lane);
            rank.devices.push_back(lane.device);
        }
    } catch (const json::exception& e) {
        throw FormatError(std::string("MPI: a rank's report is not valid: ") + e.what());
    }
    return rank;
}

} // namespace

DistributedReport reconstructOnCluster(Cluster& cluster, DatasetReader& reader, const DistributedOrder& order,
                                       SharedVolume& output, const ProgressCallback& progress) {
    const auto tStart = Clock::now();
    cluster.start(orderToJson(order));
    // From here every rank goes through the same collectives, whatever fails.
    std::string setupError;
    std::vector<int> devices;
    std::unique_ptr<VolumeWriter> writer;
    try {
        devices = rankDevices(order.gpus, order.job.options.strategy, cluster.localRank());
        writer = output.writer(order.write, cluster.oneHost());
    } catch (const std::exception& e) {
        setupError = errorText(e);
    }
    if (const std::string verdict = cluster.agree(setupError); !verdict.empty()) rethrowError(verdict);

    DistributedReport report;
    report.slices = output.slices();
    report.slicesBefore = output.slicesWritten();
    const int pass = std::max(1, order.job.options.slicesPerPass);
    SliceDealer dealer(output.missing(), cluster.size(), pass,
                       [&output](const SliceSpan& span, int rank) { output.record(span, rank); });
    const DealerProgress share(dealer, report.slicesBefore, report.slices);
    const std::vector<RankOutcome> outcomes = cluster.distribute(&dealer, [&](RowSource& rows) {
        const ProgressCallback whole = [&](double, std::string_view stage) {
            if (progress) progress(share.fraction(), stage);
        };
        const VolumeReport own = runShare(reader, order, devices, *writer, rows, whole);
        return reportToJson(own, writer->clipped());
    });

    // The verdict: the first failure, else the commit's.
    std::string verdict;
    for (const RankOutcome& o : outcomes)
        if (verdict.empty() && !o.error.empty())
            verdict = (o.rank == 0 ? "" : std::to_string(o.rank)) + "\n" + o.host + "\n" + o.error;
    if (verdict.empty()) {
        try {
            output.commit();
        } catch (const std::exception& e) {
            verdict = "\n\n" + errorText(e);
        }
    }
    cluster.broadcast(verdict.empty() ? "ok" : "failed");
    if (!verdict.empty()) {
        const std::size_t a = verdict.find('\n'), b = verdict.find('\n', a + 1);
        const std::string rank = verdict.substr(0, a), host = verdict.substr(a + 1, b - a - 1);
        std::string error = verdict.substr(b + 1);
        const int kept = output.slicesWritten();
        if (kept > 0)
            error += " (the " + std::to_string(kept) + " of " + std::to_string(output.slices()) +
                     " slices written are kept in " + output.temporary().string() + ": run again with --resume to finish)";
        rethrowError(error, rank.empty() ? std::string() : Cluster::rankPrefix(std::stoi(rank), host));
    }
    for (const RankOutcome& o : outcomes) {
        RankReport r = reportFromJson(o.report);
        r.rank = o.rank;
        r.host = o.host;
        report.ranks.push_back(std::move(r));
    }
    report.secondsTotal = std::chrono::duration<double>(Clock::now() - tStart).count();
    return report;
}

bool takePartInCluster(Cluster& cluster, const ProgressCallback& progress) {
    const std::string text = cluster.awaitStart();
    if (text.empty()) return false; // rank 0 stopped before a run (it says why), or has none left
    std::string setupError;
    DistributedOrder order;
    std::unique_ptr<DatasetReader> reader;
    std::vector<int> devices;
    std::unique_ptr<VolumeWriter> writer;
    try {
        order = orderFromJson(text);
        reader = openDataset(order.input, order.open);
        devices = rankDevices(order.gpus, order.job.options.strategy, cluster.localRank());
        writer = SharedVolume::fromLayout(order.layout).writer(order.write, cluster.oneHost());
    } catch (const std::exception& e) {
        setupError = errorText(e);
    }
    if (!cluster.agree(setupError).empty()) return true; // rank 0 reports it
    cluster.distribute(nullptr, [&](RowSource& rows) {
        const VolumeReport own = runShare(*reader, order, devices, *writer, rows, progress);
        return reportToJson(own, writer->clipped());
    });
    cluster.broadcast({}); // rank 0's verdict: it reports a failure
    return true;
}

VolumeReport combinedReport(const DistributedReport& distributed, const ReconGeometry& geometry) {
    VolumeReport report;
    for (const RankReport& r : distributed.ranks) {
        const VolumeReport& v = r.report;
        report.slices += v.slices;
        report.secondsRead = std::max(report.secondsRead, v.secondsRead);
        report.secondsPreprocess = std::max(report.secondsPreprocess, v.secondsPreprocess);
        report.secondsWrite = std::max(report.secondsWrite, v.secondsWrite);
        if (v.secondsReconstruct >= report.secondsReconstruct) {
            report.secondsReconstruct = v.secondsReconstruct;
            report.plan = v.plan;
        }
        report.peakBufferBytes = std::max(report.peakBufferBytes, v.peakBufferBytes);
    }
    if (distributed.ranks.empty()) return report;
    const VolumeReport& own = distributed.ranks.front().report;
    report.strategy = own.strategy;
    report.correctedOn = own.correctedOn;
    report.chunkRows = own.chunkRows;
    report.warnings = own.warnings;
    report.secondsPlan = own.secondsPlan;
    report.secondsSetup = own.secondsSetup;
    report.secondsLeadIn = own.secondsLeadIn;
    report.secondsTail = own.secondsTail;
    report.secondsTotal = distributed.secondsTotal;
    if (report.secondsReconstruct > 0.0)
        report.gups = static_cast<double>(geometry.region.pixels()) * report.slices *
                      geometry.geometry.projections() / report.secondsReconstruct / 1e9;
    return report;
}

} // namespace tomo
