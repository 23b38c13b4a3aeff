// ZeroMQ stream receiver (PULL or SUB, on a thread of its own) and sender
// (PUSH or PUB) of the messages of tomo/live.h.
#include "tomo/error.h"
#include "tomo/live.h"

#include <string>
#include <string_view>

#if TOMO_WITH_ZMQ
#include "io/record_queue.h"
#include "run/live_meter.h"

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

namespace tomo {

bool zmqAvailable() { return TOMO_WITH_ZMQ != 0; }

StreamOptions streamOptionsFor(const std::string& text) {
    StreamOptions options;
    constexpr std::string_view sub = "sub+";
    if (text.starts_with(sub)) {
        options.endpoint = text.substr(sub.size());
        options.subscribe = true;
        options.bind = false;
    } else {
        options.endpoint = text;
    }
    return options;
}

#if TOMO_WITH_ZMQ

namespace {

/// One context per process, so inproc:// endpoints join senders and receivers.
/// Never destroyed: a forked child that calls exit() would otherwise wait
/// for ever in its destructor for I/O threads it does not have. Two I/O
/// threads: a receiver and a sender of ipc:// or tcp:// in one process
/// (tomo-bench --stream) each copy on their own (with one, that thread made
/// both copies of every frame and was the busiest in a profile).
zmq::context_t& context() {
    static auto* c = new zmq::context_t(2);
    return *c;
}

void checkEndpoint(const std::string& endpoint, bool allowAllInterfaces) {
    const bool known = endpoint.starts_with("tcp://") || endpoint.starts_with("ipc://") ||
                       endpoint.starts_with("inproc://");
    if (!known)
        throw InvalidArgument("stream endpoint '" + endpoint.substr(0, 200) +
                              "': expected tcp://HOST:PORT, ipc://PATH or inproc://NAME");
    const bool everywhere = endpoint.starts_with("tcp://*") || endpoint.starts_with("tcp://0.0.0.0") ||
                            endpoint.starts_with("tcp://[::]");
    if (everywhere && !allowAllInterfaces)
        throw InvalidArgument("stream endpoint '" + endpoint.substr(0, 200) +
                              "' listens on every network interface; name one (e.g. tcp://127.0.0.1:5555) or allow "
                              "all interfaces explicitly");
}

void attach(zmq::socket_t& socket, const std::string& endpoint, bool bind) {
    try {
        if (bind) socket.bind(endpoint);
        else socket.connect(endpoint);
    } catch (const zmq::error_t& e) {
        throw IoError("stream endpoint '" + endpoint.substr(0, 200) + "': cannot " + (bind ? "bind" : "connect") +
                      ": " + e.what());
    }
}

class ZmqSource final : public LiveSource {
public:
    explicit ZmqSource(StreamOptions options)
        : m_options(std::move(options)),
          m_socket(context(), m_options.subscribe ? zmq::socket_type::sub : zmq::socket_type::pull) {
        checkEndpoint(m_options.endpoint, m_options.allowAllInterfaces);
        if (m_options.subscribe) m_socket.set(zmq::sockopt::subscribe, ""); // every message
        const auto& l = m_options.limits;
        // Larger parts are dropped by ZeroMQ before any allocation of ours.
        const auto largest = static_cast<std::int64_t>(l.maxRows) * l.maxColumns * 8 +
                             static_cast<std::int64_t>(l.maxHeaderBytes);
        m_socket.set(zmq::sockopt::maxmsgsize, largest);
        m_socket.set(zmq::sockopt::rcvtimeo, 50);
        m_socket.set(zmq::sockopt::linger, 0);
        attach(m_socket, m_options.endpoint, m_options.bind);
        m_thread = std::thread([this] { receive(); });
    }

    ~ZmqSource() override {
        m_stop = true;
        m_thread.join();
        const std::lock_guard lock(m_recordMutex);
        m_recorder.reset(); // writes what is queued, finishes the sink
    }

    std::string describe() const override {
        return std::string(m_options.subscribe ? "ZeroMQ SUB " : "ZeroMQ PULL ") + (m_options.bind ? "bound to " : "connected to ") + m_options.endpoint;
    }

    LiveState wait(long long seenVersion, std::chrono::milliseconds timeout) override {
        std::unique_lock lock(m_mutex);
        m_changed.wait_for(lock, timeout, [&] { return m_state.version != seenVersion || m_state.finished; });
        return m_state;
    }

    std::shared_ptr<DatasetReader> snapshot() override {
        const std::lock_guard lock(m_mutex);
        return m_store.snapshot("stream " + m_options.endpoint + " scan '" + m_store.scanId() + "'");
    }

    LiveCounters counters() const override {
        const std::lock_guard lock(m_mutex);
        return m_meter.counters();
    }

    void record(std::unique_ptr<FrameSink> sink) override {
        const std::lock_guard recording(m_recordMutex);
        m_recorder.reset(); // writes what is queued, finishes the sink
        if (!sink) return;
        auto queue = std::make_unique<detail::RecordQueue>(std::move(sink), m_options.recordQueueBytes, m_options.log);
        {
            const std::lock_guard lock(m_mutex);
            queue->backlog(m_store);
        }
        m_recorder = std::move(queue);
    }

private:
    void receive() {
        std::vector<zmq::message_t> parts;
        while (!m_stop) {
            parts.clear();
            try {
                if (!zmq::recv_multipart(m_socket, std::back_inserter(parts))) continue; // timeout
            } catch (const zmq::error_t& e) {
                reject(std::string("receiving failed: ") + e.what());
                continue;
            }
            try {
                if (parts.size() > 2)
                    throw DataError("stream message refused: " + std::to_string(parts.size()) +
                                    " parts; expected a header and a frame");
                Frame frame;
                const bool isFrame = parseFrameMessage(
                    std::span(static_cast<const std::byte*>(parts[0].data()), parts[0].size()),
                    parts.size() > 1 ? kept(std::move(parts[1])) : FramePixels{}, m_options.limits,
                    m_options.defaults, frame);
                if (isFrame) add(std::move(frame));
                else {
                    const std::lock_guard lock(m_mutex);
                    if (frame.scanId == m_store.scanId()) m_state.finished = true;
                    ++m_state.version;
                }
            } catch (const DataError& e) {
                reject(e.what());
                continue;
            }
            m_changed.notify_all();
        }
    }

    /// The message's bytes as a frame's, without a copy: the message itself
    /// is kept (for inproc://, the very bytes the sender handed to ZeroMQ).
    static FramePixels kept(zmq::message_t message) {
        auto held = std::make_shared<zmq::message_t>(std::move(message));
        const std::span bytes(static_cast<const std::byte*>(held->data()), held->size());
        return FramePixels(std::move(held), bytes);
    }

    /// Records (when recording) and stores a valid frame. Record's queue may
    /// make this wait (back-pressure); the store's lock is not held then, so
    /// the display goes on reading. Throws DataError as FrameStore::check.
    void add(Frame frame) {
        const std::size_t size = frame.values.size();
        bool otherScan = false;
        {
            const std::lock_guard lock(m_mutex);
            m_store.check(frame);
            const bool held = m_store.projections() + m_store.flats() + m_store.darks() > 0;
            otherScan = held && frame.scanId != m_store.scanId();
        }
        // Only this thread changes the store: what was checked stays true.
        const std::lock_guard recording(m_recordMutex);
        if (m_recorder && otherScan) m_recorder.reset(); // one scan per recording: written out and finished
        // Queued for Record before it is stored: a frame on display is never missing from the recording.
        if (m_recorder) m_recorder->push(frame);
        const std::lock_guard lock(m_mutex);
        const bool fresh = m_meter.counters().frames == 0;
        if (m_store.add(std::move(frame)) || fresh) {
            m_meter.scan();
            ++m_state.scan;
            m_state.finished = false;
        }
        m_meter.frame(size);
        m_state.scanId = m_store.scanId();
        m_state.projections = m_store.projections();
        m_state.flats = m_store.flats();
        m_state.darks = m_store.darks();
        ++m_state.version;
    }

    void reject(const std::string& why) {
        {
            const std::lock_guard lock(m_mutex);
            m_meter.rejected();
        }
        if (m_options.log) m_options.log(why);
    }

    StreamOptions m_options;
    zmq::socket_t m_socket; ///< used by the receiving thread only (after construction)
    /// Lock order: m_recordMutex, then m_mutex. The receiver holds
    /// m_recordMutex from queuing a frame for Record until it is stored, so
    /// record() sees each frame either in the store or still to come.
    std::mutex m_recordMutex;
    std::unique_ptr<detail::RecordQueue> m_recorder; ///< Record, if recording
    mutable std::mutex m_mutex; ///< the store, the state, the meter
    std::condition_variable m_changed;
    FrameStore m_store;
    LiveState m_state;
    mutable detail::LiveMeter m_meter;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

class ZmqSender final : public FrameSink {
public:
    ZmqSender(const std::string& endpoint, bool bind, bool allowAllInterfaces, bool publish)
        : m_socket(context(), publish ? zmq::socket_type::pub : zmq::socket_type::push) {
        checkEndpoint(endpoint, allowAllInterfaces);
        m_socket.set(zmq::sockopt::linger, -1); // deliver everything before closing
        attach(m_socket, endpoint, bind);
    }

    void send(const Frame& frame) override {
        const std::string header = frameHeader(frame);
        // The frame's bytes go out as they are, not copied into the message:
        // it keeps their owner alive until ZeroMQ lets go of it (for
        // inproc://, when the receiver's store drops the frame).
        using Owner = std::shared_ptr<const void>;
        auto owner = std::make_unique<Owner>(frame.values.owner());
        zmq::message_t payload(const_cast<std::byte*>(frame.values.data()), frame.values.size(),
                               [](void*, void* hint) { delete static_cast<Owner*>(hint); }, owner.get());
        static_cast<void>(owner.release()); // the message's now
        m_socket.send(zmq::buffer(header), zmq::send_flags::sndmore);
        m_socket.send(std::move(payload), zmq::send_flags::none);
    }

    void finish(const std::string& scanId) override {
        Frame end;
        end.scanId = scanId;
        const std::string header = frameHeader(end, /*end=*/true);
        m_socket.send(zmq::buffer(header), zmq::send_flags::none);
    }

private:
    zmq::socket_t m_socket;
};

} // namespace

std::unique_ptr<LiveSource> openZmqStream(StreamOptions options) {
    return std::make_unique<ZmqSource>(std::move(options));
}

std::unique_ptr<FrameSink> createZmqSender(const std::string& endpoint, bool bind, bool allowAllInterfaces,
                                           bool publish) {
    return std::make_unique<ZmqSender>(endpoint, bind, allowAllInterfaces, publish);
}

#else

namespace {
[[noreturn]] void noZmq(const std::string& endpoint) {
    throw InvalidArgument("stream endpoint '" + endpoint.substr(0, 200) +
                          "': this build has no ZeroMQ (install libzmq3-dev and cppzmq-dev, rebuild with "
                          "TOMO_WITH_ZMQ)");
}
} // namespace

std::unique_ptr<LiveSource> openZmqStream(StreamOptions options) { noZmq(options.endpoint); }
std::unique_ptr<FrameSink> createZmqSender(const std::string& endpoint, bool, bool, bool) { noZmq(endpoint); }

#endif

} // namespace tomo
