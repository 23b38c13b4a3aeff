// Internal: a cap on the memory the process may take from now on.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <string>

#include <sys/resource.h>

namespace tomo::detail {

/// While it lives, allocations beyond `extraBytes` more than the process
/// uses now fail (RLIMIT_DATA, which covers malloc's mmaps; measured from
/// VmData, so a process that already maps much is not refused at once).
/// Process-wide: meant for short windows and for a probing child process.
class MemoryCeiling {
public:
    explicit MemoryCeiling(std::size_t extraBytes) {
        if (::getrlimit(RLIMIT_DATA, &m_saved) != 0) return;
        std::ifstream status("/proc/self/status");
        std::string line;
        std::size_t dataKiB = 0;
        while (std::getline(status, line))
            if (line.rfind("VmData:", 0) == 0) dataKiB = std::strtoull(line.c_str() + 7, nullptr, 10);
        if (dataKiB == 0) return;
        rlimit ceiling = m_saved;
        ceiling.rlim_cur = std::min<rlim_t>(m_saved.rlim_cur, dataKiB * rlim_t{1024} + extraBytes);
        m_active = ::setrlimit(RLIMIT_DATA, &ceiling) == 0;
    }
    ~MemoryCeiling() {
        if (m_active) ::setrlimit(RLIMIT_DATA, &m_saved);
    }
    MemoryCeiling(const MemoryCeiling&) = delete;
    MemoryCeiling& operator=(const MemoryCeiling&) = delete;

private:
    rlimit m_saved{};
    bool m_active = false;
};

} // namespace tomo::detail
