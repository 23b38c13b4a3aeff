// The MPI cluster: the ranks of an MPI job. Collectives on the calling
// thread; in distribute(), rank 0 serves the other ranks' requests on a
// thread of its own (the only one making MPI calls meanwhile), and each
// other rank's conveyor asks for spans and reports them written through
// MpiRows, its MPI calls one at a time under a lock: MPI_THREAD_SERIALIZED
// suffices. Waits poll (MPI_Iprobe / MPI_Test, then a short sleep) rather
// than block in MPI, whose blocking calls spin on a core the conveyor needs;
// the collectives too (a rank done with its share waits for rank 0's
// verdict). Open MPI's default binding of each rank to one core (or socket)
// is undone when the command line asked for none (unbindFromLauncher).
#include "run/cluster_mpi.h"

#include "tomo/error.h"

#if TOMO_WITH_MPI

// The C interface only (Open MPI and MPICH would pull in their deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <thread>

#include <sched.h>

namespace tomo::detail {

namespace {

// Message tags of distribute().
constexpr int kRequest = 1; ///< rank -> 0: int most
constexpr int kSpan = 2;    ///< 0 -> rank: int first, count (count 0: none left)
constexpr int kWritten = 3; ///< rank -> 0: int first, count
constexpr int kDone = 4;    ///< rank -> 0: its outcome: error '\0' report

void check(int result, const char* call) {
    if (result != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING] = {};
        int length = 0;
        MPI_Error_string(result, text, &length);
        throw DeviceError(std::string("MPI: ") + call + " failed: " + text);
    }
}

/// Sleeps a little longer each time nothing came (20 us to 2 ms).
class Backoff {
public:
    void wait() {
        std::this_thread::sleep_for(m_pause);
        m_pause = std::min(m_pause * 2, std::chrono::microseconds(2000));
    }
    void reset() { m_pause = std::chrono::microseconds(20); }

private:
    std::chrono::microseconds m_pause{20};
};

/// Waits for `request` without spinning on a core (Backoff).
void await(MPI_Request& request, const char* call) {
    for (Backoff backoff;; backoff.wait()) {
        int done = 0;
        check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), call);
        if (done) return;
    }
}

/// Open MPI (4.x) binds each rank to one core when it starts two ranks or
/// fewer, and to one socket beyond, unless told otherwise: a rank's
/// conveyor (reading, preprocessing, the writer's threads, as many as the
/// host has cores) then shares that core, and two ranks of one GPU each
/// took 2.4x the time of one process on the same GPUs (H200, 32 cores).
/// That default is undone: the rank may run on every core of its host, as
/// with --bind-to none. A binding asked for (mpirun --bind-to, or the MCA
/// parameter) is kept.
void unbindFromLauncher() {
    const char* bound = std::getenv("OMPI_MCA_orte_bound_at_launch");
    if (!bound || std::string_view(bound) != "1" || std::getenv("OMPI_MCA_hwloc_base_binding_policy")) return;
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &all);
    ::sched_setaffinity(0, sizeof all, &all); // the kernel keeps the CPUs this process's cgroup allows
}

/// A worker rank's spans, asked of rank 0.
class MpiRows final : public RowSource {
public:
    MpiRows(MPI_Comm comm, std::mutex& mpi) : m_comm(comm), m_mpi(mpi) {}

    std::optional<SliceSpan> next(int most) override {
        int reply[2] = {0, 0};
        MPI_Request request{};
        {
            std::lock_guard lock(m_mpi);
            check(MPI_Send(&most, 1, MPI_INT, 0, kRequest, m_comm), "MPI_Send");
            check(MPI_Irecv(reply, 2, MPI_INT, 0, kSpan, m_comm, &request), "MPI_Irecv");
        }
        for (Backoff backoff;; backoff.wait()) {
            int done = 0;
            std::lock_guard lock(m_mpi);
            check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (done) break;
        }
        if (reply[1] <= 0) return std::nullopt;
        return SliceSpan{reply[0], reply[1]};
    }

    void written(const SliceSpan& span) override {
        const int message[2] = {span.first, span.count};
        std::lock_guard lock(m_mpi);
        check(MPI_Send(message, 2, MPI_INT, 0, kWritten, m_comm), "MPI_Send");
    }

    double fractionWritten() const override { return 0.0; } // rank 0 knows; this rank says nothing

private:
    MPI_Comm m_comm;
    std::mutex& m_mpi;
};

class MpiCluster final : public Cluster {
public:
    MpiCluster() {
        int provided = 0;
        check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
        if (provided < MPI_THREAD_SERIALIZED) {
            MPI_Finalize();
            throw DeviceError("MPI: the library gives thread level " + std::to_string(provided) +
                              "; tomo-recon needs MPI_THREAD_SERIALIZED (its conveyor's threads ask for slices)");
        }
        unbindFromLauncher(); // before any thread of the conveyor starts: they inherit it
        check(MPI_Comm_dup(MPI_COMM_WORLD, &m_comm), "MPI_Comm_dup");
        MPI_Comm_rank(m_comm, &m_rank);
        MPI_Comm_size(m_comm, &m_size);
        char name[MPI_MAX_PROCESSOR_NAME] = {};
        int length = 0;
        MPI_Get_processor_name(name, &length);
        m_host.assign(name, static_cast<std::size_t>(length));
        MPI_Comm local{};
        check(MPI_Comm_split_type(m_comm, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
        int localSize = 0;
        MPI_Comm_rank(local, &m_localRank);
        MPI_Comm_size(local, &localSize);
        MPI_Comm_free(&local);
        m_oneHost = localSize == m_size;
        // Every rank's host, for rank 0's messages about them.
        const std::vector<std::string> hosts = gather(m_host);
        if (m_rank == 0) m_hosts = hosts;
    }

    ~MpiCluster() override {
        try {
            if (m_rank == 0 && !m_ended) broadcast({}); // the others wait for an order: none comes
        } catch (...) {
        }
        MPI_Comm_free(&m_comm);
        MPI_Finalize();
    }

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    int localRank() const override { return m_localRank; }
    const std::string& host() const override { return m_host; }
    bool oneHost() const override { return m_oneHost; }
    bool mpi() const override { return true; }

    void start(const std::string& order) override {
        m_ended = order.empty();
        broadcast(order);
    }
    std::string awaitStart() override { return broadcast({}); }

    std::string broadcast(const std::string& fromRank0) override {
        std::uint64_t length = fromRank0.size();
        MPI_Request request{};
        check(MPI_Ibcast(&length, 1, MPI_UINT64_T, 0, m_comm, &request), "MPI_Ibcast");
        await(request, "MPI_Ibcast");
        std::string text = m_rank == 0 ? fromRank0 : std::string(length, '\0');
        if (length > 0) {
            check(MPI_Ibcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, m_comm, &request), "MPI_Ibcast");
            await(request, "MPI_Ibcast");
        }
        return text;
    }

    std::vector<RankOutcome> distribute(SliceDealer* dealer,
                                        const std::function<std::string(RowSource&)>& work) override {
        if (m_rank != 0) {
            MpiRows rows(m_comm, m_mpi);
            const RankOutcome outcome = runWork(rows, work);
            const std::string message = outcome.error + '\0' + outcome.report;
            std::lock_guard lock(m_mpi);
            check(MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kDone, m_comm), "MPI_Send");
            return {outcome};
        }
        std::vector<RankOutcome> outcomes(static_cast<std::size_t>(m_size));
        std::string recordError; // from the dealer's record, on the serving thread
        std::exception_ptr serveFailure;
        {
            std::jthread server([&] {
                try {
                    serve(*dealer, outcomes, recordError);
                } catch (...) {
                    serveFailure = std::current_exception();
                    dealer->stop();
                }
            });
            DealerRows rows(*dealer, 0);
            outcomes[0] = runWork(rows, work);
            if (!outcomes[0].error.empty()) dealer->stop(); // the others finish what they have
        }
        if (serveFailure) std::rethrow_exception(serveFailure);
        if (outcomes[0].error.empty() && !recordError.empty()) outcomes[0].error = recordError;
        for (int r = 0; r < m_size; ++r) {
            outcomes[static_cast<std::size_t>(r)].rank = r;
            outcomes[static_cast<std::size_t>(r)].host = m_hosts[static_cast<std::size_t>(r)];
        }
        return outcomes;
    }

protected:
    std::vector<std::string> gather(const std::string& mine) override {
        const int length = static_cast<int>(mine.size());
        std::vector<int> lengths(m_rank == 0 ? static_cast<std::size_t>(m_size) : 0);
        MPI_Request request{};
        check(MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, m_comm, &request), "MPI_Igather");
        await(request, "MPI_Igather");
        std::vector<int> offsets(lengths.size(), 0);
        for (std::size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
        std::string all(lengths.empty() ? 0 : static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
        check(MPI_Igatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                           m_comm, &request),
              "MPI_Igatherv");
        await(request, "MPI_Igatherv");
        std::vector<std::string> texts;
        for (std::size_t r = 0; r < lengths.size(); ++r)
            texts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
        return texts;
    }

private:
    /// Rank 0's serving thread: answers requests, passes spans written on to
    /// the dealer, collects each other rank's outcome; returns once every
    /// other rank has sent its outcome.
    void serve(SliceDealer& dealer, std::vector<RankOutcome>& outcomes, std::string& recordError) {
        Backoff backoff;
        for (int finished = 0; finished < m_size - 1;) {
            int pending = 0;
            MPI_Status status{};
            check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_comm, &pending, &status), "MPI_Iprobe");
            if (!pending) {
                backoff.wait();
                continue;
            }
            backoff.reset();
            const int from = status.MPI_SOURCE;
            if (status.MPI_TAG == kRequest) {
                int most = 0;
                check(MPI_Recv(&most, 1, MPI_INT, from, kRequest, m_comm, MPI_STATUS_IGNORE), "MPI_Recv");
                const std::optional<SliceSpan> span = dealer.take(most, from);
                const int reply[2] = {span ? span->first : 0, span ? span->count : 0};
                check(MPI_Send(reply, 2, MPI_INT, from, kSpan, m_comm), "MPI_Send");
            } else if (status.MPI_TAG == kWritten) {
                int span[2] = {0, 0};
                check(MPI_Recv(span, 2, MPI_INT, from, kWritten, m_comm, MPI_STATUS_IGNORE), "MPI_Recv");
                try {
                    dealer.written({span[0], span[1]}, from);
                } catch (const std::exception& e) { // the record could not be written: stop
                    if (recordError.empty()) recordError = errorText(e);
                    dealer.stop();
                }
            } else if (status.MPI_TAG == kDone) {
                int length = 0;
                MPI_Get_count(&status, MPI_CHAR, &length);
                std::string message(static_cast<std::size_t>(length), '\0');
                check(MPI_Recv(message.data(), length, MPI_CHAR, from, kDone, m_comm, MPI_STATUS_IGNORE), "MPI_Recv");
                RankOutcome& outcome = outcomes[static_cast<std::size_t>(from)];
                const std::size_t cut = message.find('\0');
                outcome.error = message.substr(0, cut);
                outcome.report = cut == std::string::npos ? std::string() : message.substr(cut + 1);
                if (!outcome.error.empty()) dealer.stop(); // the others finish what they have
                ++finished;
            } else {
                throw DeviceError("MPI: rank " + std::to_string(from) + " sent an unknown message (tag " +
                                  std::to_string(status.MPI_TAG) + ")");
            }
        }
    }

    MPI_Comm m_comm{};
    int m_rank = 0, m_size = 1, m_localRank = 0;
    std::string m_host;
    std::vector<std::string> m_hosts; // rank 0: every rank's
    bool m_oneHost = true;
    bool m_ended = false; ///< rank 0 sent the empty order: the others have stopped
    std::mutex m_mpi; // a worker's MPI calls, one at a time
};

} // namespace

std::unique_ptr<Cluster> joinMpiCluster() {
    return std::make_unique<MpiCluster>();
}

} // namespace tomo::detail

#else

namespace tomo::detail {

std::unique_ptr<Cluster> joinMpiCluster() {
    throw InvalidArgument("--mpi: this build has no MPI support; configure it with -DTOMO_WITH_MPI=ON");
}

} // namespace tomo::detail

#endif
