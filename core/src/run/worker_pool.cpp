#include "tomo/worker_pool.h"

#include "tomo/error.h"

#include <algorithm>
#include <string>
#include <system_error>
#include <utility>

#include <unistd.h>

namespace tomo {

std::size_t physicalMemoryBytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(pageSize) : 0;
}

WorkerPool::WorkerPool(int threads) {
    m_workers.reserve(static_cast<std::size_t>(std::max(threads, 1) - 1));
    try {
        for (int t = 1; t < std::max(threads, 1); ++t) m_workers.emplace_back([this, t] { workerLoop(t); });
    } catch (const std::system_error& e) {
        // The destructor does not run for a half-built pool: stop the threads
        // already started, or they would wait on members about to be destroyed.
        const std::size_t started = m_workers.size() + 1; // the caller's thread counts
        stopWorkers();
        throw OutOfMemory("CPU worker pool: cannot start thread " + std::to_string(started + 1) + " of " +
                          std::to_string(threads) + " (" + e.what() + "); use fewer threads");
    }
}

WorkerPool::~WorkerPool() {
    stopWorkers();
}

void WorkerPool::stopWorkers() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& w : m_workers) w.join();
    m_workers.clear();
}

void WorkerPool::parallelFor(int count, const std::function<void(int, int)>& task) {
    if (count <= 0) return;
    const std::lock_guard turn(m_turn);
    {
        std::lock_guard lock(m_mutex);
        m_task = &task;
        m_count = count;
        m_next = 0;
        m_error = nullptr;
        m_running = static_cast<int>(m_workers.size());
        ++m_job;
    }
    m_wake.notify_all();
    runTasks(0);
    std::exception_ptr error;
    {
        std::unique_lock lock(m_mutex);
        m_finished.wait(lock, [this] { return m_running == 0; });
        m_task = nullptr;
        error = std::exchange(m_error, nullptr);
    }
    if (error) std::rethrow_exception(error);
}

void WorkerPool::workerLoop(int thread) {
    std::uint64_t seen = 0;
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [&] { return m_stop || m_job != seen; });
        if (m_stop) return;
        seen = m_job;
        lock.unlock();
        runTasks(thread);
        lock.lock();
        if (--m_running == 0) m_finished.notify_one();
    }
}

void WorkerPool::runTasks(int thread) {
    for (;;) {
        int index = 0;
        {
            std::lock_guard lock(m_mutex);
            if (m_next >= m_count || m_error) return;
            index = m_next++;
        }
        try {
            (*m_task)(index, thread);
        } catch (...) {
            std::lock_guard lock(m_mutex);
            if (!m_error) m_error = std::current_exception();
        }
    }
}

} // namespace tomo
