// A small fixed thread pool for data-parallel loops (CPU back-projection,
// filtering, host-side staging copies of the GPU plans), and the machine's
// memory that sizes the work given to it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tomo {

/// The machine's physical memory in bytes; 0 when the system does not say.
std::size_t physicalMemoryBytes();

/// A fixed set of threads that run index ranges; the calling thread takes
/// part, so a pool of 1 runs everything on the caller.
class WorkerPool {
public:
    /// `threads` >= 1 in all, the caller included. Throws OutOfMemory when
    /// the system cannot start that many threads.
    explicit WorkerPool(int threads);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    int threads() const { return static_cast<int>(m_workers.size()) + 1; }

    /// Calls task(index, thread) for every index in [0, count), spread over
    /// the threads (thread in [0, threads())), and returns when all are done.
    /// Rethrows the first exception a task threw. Callers on several threads
    /// take turns (one loop runs at a time: each already uses every thread);
    /// not reentrant (a task must not call it on the same pool).
    void parallelFor(int count, const std::function<void(int index, int thread)>& task);

private:
    /// Wakes the workers to exit and joins them.
    void stopWorkers();
    void workerLoop(int thread);
    void runTasks(int thread);

    std::vector<std::thread> m_workers;
    std::mutex m_turn; // one parallelFor at a time
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_finished;
    const std::function<void(int, int)>* m_task = nullptr;
    int m_count = 0;
    int m_next = 0;    // next index to hand out (guarded by m_mutex)
    int m_running = 0; // workers still inside the current job
    std::uint64_t m_job = 0;
    bool m_stop = false;
    std::exception_ptr m_error;
};

} // namespace tomo
