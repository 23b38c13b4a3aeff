// Internal: Record on a thread of its own (tomo/live.h, LiveSource::record).
// The receiving thread queues each frame and goes on receiving; the queue's
// thread writes the frames to the sink in the order they were queued.
//
//   receiver ──push()──► [frames, at most capacityBytes] ──► writer thread ──► sink (e.g. a growing DXchange file)
//               waits while full: back-pressure on the receiver (and, through
//               ZeroMQ's high-water mark, on the sender); never a frame dropped
//
// Frames share their pixels with the frame store (FramePixels): the queue
// copies none, so it costs no memory; its bound is how far the recording
// may lag behind what is displayed. A sink that throws stops the recording
// (logged once); what was queued after it is let go.
#pragma once

#include "tomo/live.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace tomo::detail {

class RecordQueue {
public:
    using Log = std::function<void(const std::string&)>;

    /// Starts the writer thread. A capacity below one frame holds one frame.
    RecordQueue(std::unique_ptr<FrameSink> sink, std::size_t capacityBytes, Log log);
    /// As finish().
    ~RecordQueue();
    RecordQueue(const RecordQueue&) = delete;
    RecordQueue& operator=(const RecordQueue&) = delete;

    /// Queues the store's frames (darks, flats, projections by index)
    /// without waiting for room: the scan so far when Record starts.
    void backlog(const FrameStore& store);
    /// Queues `frame`, first waiting while the queue is full. Returns at
    /// once, queuing nothing, once the sink has failed.
    void push(const Frame& frame);
    /// Waits until every queued frame is written, then finishes the sink
    /// with the scan id of the frames recorded (a failure is logged). Once.
    void finish();

private:
    void enqueue(const Frame& frame, bool waitForRoom);
    void write();
    void log(const std::string& line) const;

    std::unique_ptr<FrameSink> m_sink; ///< used by the writer thread, then by finish()
    const std::size_t m_capacity;
    const Log m_log;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Frame> m_frames;  ///< queued, oldest first; the front is being written
    std::size_t m_bytes = 0;     ///< their pixel bytes
    std::string m_scanId;        ///< of the frames recorded
    bool m_closing = false;      ///< finish() called: write what is queued, then end
    bool m_failed = false;       ///< the sink threw: recording stopped
    bool m_finished = false;
    std::thread m_thread;
};

} // namespace tomo::detail
