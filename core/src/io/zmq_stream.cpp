// ZeroMQ stream receiver (PULL or SUB, on a thread of its own) and sender
// (PUSH or PUB) of the messages of tomo/live.h.
#include "tomo/error.h"
#include "tomo/live.h"

#include <string>
#include <string_view>

#if TOMO_WITH_ZMQ
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
/// for ever in its destructor for I/O threads it does not have.
zmq::context_t& context() {
    static auto* c = new zmq::context_t;
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
        const std::lock_guard lock(m_mutex);
        stopRecording();
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
        const std::lock_guard lock(m_mutex);
        stopRecording();
        if (!sink) return;
        m_store.replay(*sink);
        m_recorder = std::move(sink);
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
                const auto bytes = [](const zmq::message_t& m) {
                    return std::span(static_cast<const std::byte*>(m.data()), m.size());
                };
                Frame frame;
                const bool isFrame = parseFrameMessage(bytes(parts[0]), parts.size() > 1 ? bytes(parts[1]) : std::span<const std::byte>{},
                                                       m_options.limits, m_options.defaults, frame);
                const std::size_t size = frame.values.size();
                const std::lock_guard lock(m_mutex);
                if (!isFrame) {
                    if (frame.scanId == m_store.scanId()) m_state.finished = true;
                } else {
                    const bool fresh = m_meter.counters().frames == 0;
                    m_store.check(frame);
                    const bool held = m_store.projections() + m_store.flats() + m_store.darks() > 0;
                    if (m_recorder && held && frame.scanId != m_store.scanId()) stopRecording(); // one scan per recording
                    // Recorded before it is stored: the recording is never behind the display.
                    if (m_recorder) writeRecording(frame);
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
                }
                ++m_state.version;
            } catch (const DataError& e) {
                reject(e.what());
                continue;
            }
            m_changed.notify_all();
        }
    }

    /// Called with m_mutex held.
    void writeRecording(const Frame& frame) {
        try {
            m_recorder->send(frame);
        } catch (const std::exception& e) {
            m_recorder.reset();
            if (m_options.log) m_options.log(std::string("recording stopped: ") + e.what());
        }
    }
    /// Called with m_mutex held.
    void stopRecording() {
        if (!m_recorder) return;
        auto recorder = std::move(m_recorder);
        try {
            recorder->finish(m_store.scanId());
        } catch (const std::exception& e) {
            if (m_options.log) m_options.log(std::string("recording could not be finished: ") + e.what());
        }
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
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    FrameStore m_store;
    std::unique_ptr<FrameSink> m_recorder; ///< Record's sink, if recording
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
        m_socket.send(zmq::buffer(header), zmq::send_flags::sndmore);
        m_socket.send(zmq::buffer(frame.values.data(), frame.values.size()), zmq::send_flags::none);
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
