#include "work/thread_priority.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tomo::ui {

void lowerThreadPriority(int nice) {
#if defined(__linux__)
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    (void)::setpriority(PRIO_PROCESS, tid, nice);
#else
    (void)nice;
#endif
}

} // namespace tomo::ui
