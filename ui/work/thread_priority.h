// Scheduling priority of the workstation's worker threads, so that the UI
// thread wins the CPU when it needs it, even with every core busy
// reconstructing, and a background view yields to the slice on screen.
#pragma once

namespace tomo::ui {

/// The controller's preview and job threads.
inline constexpr int kWorkerNice = 2;
/// Live mode's coarse volume: below the slice at the user's row.
inline constexpr int kBackgroundNice = 4;

/// Sets the calling thread's nice value to `nice` (on Linux, where nice is
/// per thread and inherited by the threads it creates: the CPU backends'
/// worker pools); elsewhere nothing.
void lowerThreadPriority(int nice);

} // namespace tomo::ui
