// The one-process cluster, the slice dealer, and what every cluster shares;
// the MPI cluster is in cluster_mpi.cpp.
#include "tomo/cluster.h"

#include "run/cluster_mpi.h"
#include "tomo/error.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <sched.h>
#include <unistd.h>

namespace tomo {

namespace {

/// This process alone: rank 0 of 1.
class LocalCluster final : public Cluster {
public:
    LocalCluster() {
        char name[256] = {};
        if (::gethostname(name, sizeof name - 1) == 0) m_host = name;
    }
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int localRank() const override { return 0; }
    const std::string& host() const override { return m_host; }
    bool oneHost() const override { return true; }
    bool mpi() const override { return false; }
    void start(const std::string&) override {}
    std::string awaitStart() override { return {}; }
    std::string broadcast(const std::string& fromRank0) override { return fromRank0; }
    std::vector<RankOutcome> distribute(SliceDealer* dealer,
                                        const std::function<std::string(RowSource&)>& work) override {
        DealerRows rows(*dealer, 0);
        RankOutcome outcome = runWork(rows, work);
        outcome.host = m_host;
        return {outcome};
    }

protected:
    std::vector<std::string> gather(const std::string& mine) override { return {mine}; }

private:
    std::string m_host = "localhost";
};

} // namespace

bool mpiBuilt() {
    return TOMO_WITH_MPI;
}

bool launchedByMpiLauncher() {
    // Open MPI's mpirun, PMIx launchers (srun --mpi=pmix, prterun), MPICH's
    // and Intel's Hydra (PMI), MVAPICH.
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MV2_COMM_WORLD_SIZE"})
        if (const char* value = std::getenv(name); value && *value) return true;
    return false;
}

int coresOfThisProcess() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return CPU_COUNT(&set);
}

std::unique_ptr<Cluster> Cluster::join() {
    if (!mpiBuilt())
        throw InvalidArgument("--mpi: this build has no MPI support; configure it with -DTOMO_WITH_MPI=ON (Debian: "
                              "apt-get install libopenmpi-dev openmpi-bin)");
    if (!launchedByMpiLauncher()) return local();
    return detail::joinMpiCluster();
}

std::unique_ptr<Cluster> Cluster::local() {
    return std::make_unique<LocalCluster>();
}

std::string Cluster::agree(const std::string& error) {
    const std::vector<std::string> all = gather(host() + '\n' + error);
    std::string verdict;
    for (std::size_t r = 0; r < all.size() && verdict.empty(); ++r) {
        const std::size_t cut = all[r].find('\n');
        const std::string text = all[r].substr(cut + 1);
        if (text.empty()) continue;
        // The other ranks' errors named: "KIND:rank 1 on node7: message".
        const std::size_t kind = text.find(':') + 1;
        verdict = r == 0 ? text
                         : text.substr(0, kind) + rankPrefix(static_cast<int>(r), all[r].substr(0, cut)) + text.substr(kind);
    }
    return broadcast(verdict);
}

std::string Cluster::rankPrefix(int rank, const std::string& host) {
    return "rank " + std::to_string(rank) + " on " + host + ": ";
}

RankOutcome Cluster::runWork(RowSource& source, const std::function<std::string(RowSource&)>& work) const {
    RankOutcome outcome;
    outcome.rank = rank();
    outcome.host = host();
    try {
        outcome.report = work(source);
    } catch (const std::exception& e) {
        outcome.error = errorText(e);
    }
    return outcome;
}

// ---------------------------------------------------------------- errors

namespace {

/// Kinds, most derived first (a TooManyClampedValues is a DataError).
enum class ErrorKind { TooManyClamped, Io, Format, Invalid, Data, Device, Memory, Cancel, Other };

ErrorKind kindOf(const std::exception& e) {
    if (dynamic_cast<const TooManyClampedValues*>(&e)) return ErrorKind::TooManyClamped;
    if (dynamic_cast<const IoError*>(&e)) return ErrorKind::Io;
    if (dynamic_cast<const FormatError*>(&e)) return ErrorKind::Format;
    if (dynamic_cast<const InvalidArgument*>(&e)) return ErrorKind::Invalid;
    if (dynamic_cast<const DataError*>(&e)) return ErrorKind::Data;
    if (dynamic_cast<const DeviceError*>(&e)) return ErrorKind::Device;
    if (dynamic_cast<const OutOfMemory*>(&e) || dynamic_cast<const std::bad_alloc*>(&e)) return ErrorKind::Memory;
    if (dynamic_cast<const Cancelled*>(&e)) return ErrorKind::Cancel;
    return ErrorKind::Other;
}

} // namespace

std::string errorText(const std::exception& e) {
    const char* message = dynamic_cast<const std::bad_alloc*>(&e) ? "out of host memory" : e.what();
    return std::to_string(static_cast<int>(kindOf(e))) + ":" + message;
}

void rethrowError(const std::string& text, const std::string& prefix) {
    const std::size_t colon = text.find(':');
    int kind = static_cast<int>(ErrorKind::Other);
    if (colon != std::string::npos) kind = std::atoi(text.substr(0, colon).c_str());
    const std::string message = prefix + (colon == std::string::npos ? text : text.substr(colon + 1));
    switch (static_cast<ErrorKind>(kind)) {
    case ErrorKind::TooManyClamped: throw TooManyClampedValues(message);
    case ErrorKind::Io: throw IoError(message);
    case ErrorKind::Format: throw FormatError(message);
    case ErrorKind::Invalid: throw InvalidArgument(message);
    case ErrorKind::Data: throw DataError(message);
    case ErrorKind::Device: throw DeviceError(message);
    case ErrorKind::Memory: throw OutOfMemory(message);
    case ErrorKind::Cancel: throw Cancelled();
    case ErrorKind::Other: break;
    }
    throw Error(message);
}

// ---------------------------------------------------------------- dealer

SliceDealer::SliceDealer(std::vector<SliceSpan> todo, int ranks, int pass,
                         std::function<void(const SliceSpan&, int rank)> written)
    : m_todo(std::move(todo)), m_ranks(std::max(ranks, 1)), m_pass(std::max(pass, 1)), m_onWritten(std::move(written)) {
    for (const SliceSpan& s : m_todo) m_total += s.count;
    m_left = m_total;
}

std::optional<SliceSpan> SliceDealer::take(int most, int) {
    std::lock_guard lock(m_mutex);
    if (m_stopped || m_left == 0) return std::nullopt;
    SliceSpan& front = m_todo[m_next];
    // Guided: a share of what is left, so the last spans shrink and every
    // rank finishes at about the same time; whole passes where possible.
    const int share = (m_left + 2 * m_ranks - 1) / (2 * m_ranks);
    const int guided = std::max(m_pass, share / m_pass * m_pass);
    const int count = std::min({std::max(most, 1), guided, front.count});
    const SliceSpan span{front.first, count};
    front.first += count;
    front.count -= count;
    if (front.count == 0) ++m_next;
    m_left -= count;
    return span;
}

void SliceDealer::written(const SliceSpan& span, int rank) {
    std::lock_guard lock(m_mutex); // one record line at a time
    if (m_onWritten) m_onWritten(span, rank);
    m_written += span.count;
}

void SliceDealer::stop() {
    std::lock_guard lock(m_mutex);
    m_stopped = true;
}

double SliceDealer::fractionWritten() const {
    std::lock_guard lock(m_mutex);
    return m_total > 0 ? static_cast<double>(m_written) / m_total : 1.0;
}

int SliceDealer::slicesWritten() const {
    std::lock_guard lock(m_mutex);
    return m_written;
}

} // namespace tomo
