// The processes of one reconstruction: this process alone, or the ranks of
// an MPI job (started by mpirun or srun, in a build with TOMO_WITH_MPI).
// Rank 0 prepares the run and hands the volume's slices out by demand; every
// rank, rank 0 included, reconstructs what it gets with its own conveyor:
//
//   Cluster::join()                         every rank (MPI_Init)
//   rank 0: prepares, start(order)          others: awaitStart() -> the order
//           (one per run; no order: the end)
//   agree(error)                            every rank's setup went well?
//   distribute(dealer, work)                rank 0's SliceDealer serves spans of
//                                           slices to every rank's RowSource;
//                                           each rank's outcome back to rank 0
//   broadcast(...)                          rank 0's verdict
//
// No MPI type appears here: a build without MPI has the one-process cluster
// only. The MPI calls are made by one thread at a time (MPI_THREAD_SERIALIZED).
#pragma once

#include "tomo/pipeline.h"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tomo {

/// Whether this build has MPI support (TOMO_WITH_MPI).
bool mpiBuilt();
/// Whether an MPI launcher started this process (mpirun, srun, mpiexec: its
/// environment says so).
bool launchedByMpiLauncher();
/// The cores this process may run on (its CPU affinity; a launcher may bind
/// it to fewer than the host has).
int coresOfThisProcess();

/// What one rank did in distribute().
struct RankOutcome {
    int rank = 0;
    std::string host;
    /// Empty on success; else the error, as errorText() writes it.
    std::string error;
    /// What `work` returned (a report).
    std::string report;
};

/// An exception as one text (its kind and message) that rethrowError()
/// throws again as the same kind, e.g. from another rank.
std::string errorText(const std::exception& e);
/// Throws the error errorText() wrote, its message prefixed by `prefix`
/// ("rank 2 on node7: "): IoError, FormatError, InvalidArgument, DataError,
/// TooManyClampedValues, DeviceError, OutOfMemory, Cancelled; Error for
/// anything else.
[[noreturn]] void rethrowError(const std::string& text, const std::string& prefix = {});

/// Rank 0's hand-out of the slices still to do: by demand, each span at
/// most what the rank asks for and at most the slices left / (2 x ranks) in
/// whole passes, so the last spans are small and the ranks end together
/// (guided self-scheduling). Spans written are passed on to `written`
/// (SharedVolume::record). Thread-safe.
class SliceDealer {
public:
    SliceDealer(std::vector<SliceSpan> todo, int ranks, int pass,
                std::function<void(const SliceSpan&, int rank)> written);

    /// The next span for `rank`, or nothing when none is left or stop()
    /// was called.
    std::optional<SliceSpan> take(int most, int rank);
    /// Rows of a span taken are written: passed on to `written`.
    void written(const SliceSpan& span, int rank);
    /// No span is handed out any more (a rank failed, or a cancel).
    void stop();
    /// The share of the slices to do written so far (0..1).
    double fractionWritten() const;
    int slicesToDo() const { return m_total; }
    int slicesWritten() const;

private:
    mutable std::mutex m_mutex;
    std::vector<SliceSpan> m_todo; // front first
    std::size_t m_next = 0;
    int m_left = 0;
    int m_ranks;
    int m_pass;
    int m_total = 0;
    int m_written = 0;
    bool m_stopped = false;
    std::function<void(const SliceSpan&, int)> m_onWritten;
};

class Cluster {
public:
    /// Joins the MPI job when an MPI launcher started this process (MPI_Init
    /// with MPI_THREAD_SERIALIZED); otherwise a cluster of this process
    /// alone. Throws InvalidArgument naming TOMO_WITH_MPI in a build without
    /// MPI, DeviceError when the MPI library gives too low a thread level.
    static std::unique_ptr<Cluster> join();
    /// This process alone, in any build (no MPI).
    static std::unique_ptr<Cluster> local();
    /// Rank 0 sends the others an empty order (they end quietly) unless its
    /// last start() sent one; then MPI_Finalize.
    virtual ~Cluster() = default;

    virtual int rank() const = 0;
    virtual int size() const = 0;
    /// Rank among the ranks on this host (0 for the first): which GPU of the
    /// host is the rank's by default.
    virtual int localRank() const = 0;
    virtual const std::string& host() const = 0;
    /// Every rank runs on this host (one page cache).
    virtual bool oneHost() const = 0;
    /// Whether an MPI job was joined (false: this process alone).
    virtual bool mpi() const = 0;

    /// Rank 0: hands every rank the order to work on (an empty one: there is
    /// no more work).
    virtual void start(const std::string& order) = 0;
    /// The other ranks: rank 0's next order; empty when there is no more work
    /// (or rank 0 failed before it had one: it reports why).
    virtual std::string awaitStart() = 0;
    /// Rank 0's text to every rank (collective).
    virtual std::string broadcast(const std::string& fromRank0) = 0;
    /// Collective: every rank gives its error (errorText(), "" = none);
    /// every rank gets the first one, its message prefixed with the rank and
    /// host it came from ("rank 1 on node7: "; not for rank 0's own), for
    /// rethrowError(), or "".
    std::string agree(const std::string& error);

    /// Collective: runs `work` on every rank with a RowSource of the spans
    /// rank 0's `dealer` (nullptr on the other ranks) hands out by demand,
    /// and its spans written reported back to it. A rank whose work fails
    /// stops the dealer: the others finish what they have and end. Returns,
    /// on rank 0, every rank's outcome in rank order; elsewhere its own.
    virtual std::vector<RankOutcome> distribute(SliceDealer* dealer,
                                                const std::function<std::string(RowSource&)>& work) = 0;

    /// "rank 2 on node7: ", how errors of other ranks are named.
    static std::string rankPrefix(int rank, const std::string& host);

protected:
    /// Gathers every rank's text at rank 0 (collective); empty elsewhere.
    virtual std::vector<std::string> gather(const std::string& mine) = 0;
    /// Runs `work` with `source`, the outcome (error or report) recorded.
    RankOutcome runWork(RowSource& source, const std::function<std::string(RowSource&)>& work) const;
};

/// The spans of rank 0's dealer, for rank 0's own conveyor.
class DealerRows final : public RowSource {
public:
    DealerRows(SliceDealer& dealer, int rank) : m_dealer(dealer), m_rank(rank) {}
    std::optional<SliceSpan> next(int most) override { return m_dealer.take(most, m_rank); }
    void written(const SliceSpan& span) override { m_dealer.written(span, m_rank); }
    double fractionWritten() const override { return m_dealer.fractionWritten(); }

private:
    SliceDealer& m_dealer;
    int m_rank;
};

} // namespace tomo
