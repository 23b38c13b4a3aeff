// tomo-stream: plays a recorded scan (or the demo phantom) as a detector
// would, at a chosen frame rate, into a growing SWMR file or a ZeroMQ
// socket, so live acquisition can be tried without a detector (tomo/live.h).
#include "cli_support.h"
#include "tomo/error.h"
#include "tomo/live.h"
#include "tomo/phantom.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>
#include <unistd.h>

using namespace tomo;
using namespace tomo::cli;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kProgram = "tomo-stream";

struct CommandLine {
    std::string input;
    int phantom = 0;
    int phantomRows = 4;
    std::string file;
    std::string zmq;
    bool bind = false;
    bool publish = false;
    bool nxtomo = false;
    bool allowAllInterfaces = false;
    double rate = 0.0;
    std::string scanId;
    int stopAfter = -1;
    bool overwrite = false;
    bool quiet = false;
};

/// A temporary folder removed at exit, for the phantom's scan.
struct TemporaryFolder {
    fs::path path;
    TemporaryFolder() {
        path = fs::temp_directory_path() / ("tomo-stream-" + std::to_string(::getpid()));
        fs::create_directories(path);
    }
    ~TemporaryFolder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

int run(const CommandLine& c) {
    installInterruptHandler();
    if (c.input.empty() == (c.phantom == 0))
        throw InvalidArgument("give either an INPUT scan or --phantom N (not both, not neither)");
    if (c.file.empty() == c.zmq.empty())
        throw InvalidArgument("give either --to FILE.h5 (a growing SWMR file) or --zmq ENDPOINT (not both)");
    if (c.nxtomo && c.file.empty()) throw InvalidArgument("--nxtomo: the layout of a --to file; give --to FILE.h5");
    if (c.publish && c.zmq.empty()) throw InvalidArgument("--pub: publishes to a ZeroMQ socket; give --zmq ENDPOINT");
    std::optional<TemporaryFolder> temporary;
    fs::path input = c.input;
    if (c.phantom > 0) {
        temporary.emplace();
        input = temporary->path / "phantom.h5";
        PhantomSpec spec;
        spec.bins = c.phantom;
        spec.rows = c.phantomRows;
        writePhantomDXchange(input, spec, uniformAngles(c.phantom), ScanSimulation{});
    }
    const auto reader = openDataset(input);
    const DatasetInfo& info = reader->info();
    std::unique_ptr<FrameSink> sink =
        c.file.empty() ? createZmqSender(c.zmq, c.bind, c.allowAllInterfaces, c.publish)
                       : createGrowingScanWriter(c.file, info.rows, info.columns, info.sampleType, c.overwrite,
                                                 c.nxtomo ? GrowingLayout::NXtomo : GrowingLayout::DXchange);
    PlayOptions play;
    play.framesPerSecond = c.rate;
    play.scanId = c.scanId.empty() ? (c.phantom > 0 ? "phantom" : input.filename().string()) : c.scanId;
    play.stopAfter = c.stopAfter;
    play.cancelled = [] { return interrupted(); };
    if (!c.quiet)
        std::printf("streaming %s (%d projections of %d x %d %s) to %s%s\n", c.phantom > 0 ? "the phantom" : input.c_str(),
                    info.projections, info.rows, info.columns, sampleTypeName(info.sampleType),
                    c.file.empty() ? c.zmq.c_str() : c.file.c_str(),
                    c.rate > 0 ? (" at " + formatNumber(c.rate) + " frames/s").c_str() : "");
    std::fflush(stdout);
    if (c.publish) // subscribers that connect as the socket appears miss what is published before they subscribe
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto t0 = std::chrono::steady_clock::now();
    const long long sent = playScan(*reader, *sink, play);
    throwIfInterrupted();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (c.stopAfter >= 0) {
        // A writer that dies: the file stays marked open, no end message.
        std::printf("stopped after %lld frames without finishing the scan (--stop-after)\n", sent);
        std::fflush(stdout);
        ::_exit(kExitOk);
    }
    if (!c.quiet)
        std::printf("sent %lld frames in %s (%s frames/s)\n", sent, formatSeconds(seconds).c_str(),
                    formatNumber(static_cast<double>(sent) / std::max(seconds, 1e-9), 4).c_str());
    return kExitOk;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"tomo-stream: plays a recorded scan (or the demo phantom) frame by frame into a growing HDF5 "
                 "file (SWMR) or a ZeroMQ socket, as a detector would, for trying live acquisition.",
                 std::string(kProgram)};
    CommandLine c;
    app.add_option("INPUT", c.input, "Scan to play (any format tomo-recon reads)");
    app.add_option("--phantom", c.phantom, "Play the Shepp-Logan phantom, N columns and N projections over 180 degrees")
        ->check(integerIn(2, 16384))->type_name("N");
    app.add_option("--phantom-rows", c.phantomRows, "Detector rows of --phantom")
        ->check(integerIn(1, 16384))->capture_default_str();
    app.add_option("--to", c.file, "Write a growing DXchange file with HDF5 SWMR (tomo-recon --follow reads it)")
        ->type_name("FILE.h5");
    app.add_flag("--nxtomo", c.nxtomo,
                 "Write the --to file in the NXtomo layout (one frame stack with image_key and rotation_angle) "
                 "instead of DXchange");
    app.add_option("--zmq", c.zmq, "Send to a ZeroMQ PULL socket (PUSH; connects unless --bind)")
        ->type_name("ENDPOINT");
    app.add_flag("--bind", c.bind, "Bind the PUSH (PUB) socket instead of connecting");
    app.add_flag("--pub", c.publish,
                 "Publish with a PUB socket (receivers subscribe: sub+ENDPOINT) instead of PUSH; frames a slow "
                 "receiver cannot take are dropped");
    app.add_flag("--all-interfaces", c.allowAllInterfaces, "Allow binding to tcp://* (every network interface)");
    app.add_option("--rate", c.rate, "Frames per second (0 = as fast as the receiver takes them)")
        ->check(nonNegativeNumber())->capture_default_str();
    app.add_option("--scan-id", c.scanId, "Scan id sent with every frame (default: the input's file name)");
    app.add_option("--stop-after", c.stopAfter,
                   "Stop after N projections without finishing the scan (the file stays marked open, no end "
                   "message): a writer that died, for testing followers")
        ->check(integerIn(0, 1 << 30))->type_name("N");
    app.add_flag("--overwrite", c.overwrite, "Replace an existing --to file");
    app.add_flag("-q,--quiet", c.quiet, "No informational lines");
    app.footer("Examples:\n"
               "  tomo-stream ../shared/data/real/aps_tooth/tooth.h5 --to live.h5 --rate 20 &\n"
               "  tomo-recon live.h5 --follow -o tooth.h5\n"
               "  tomo-stream --phantom 512 --zmq tcp://127.0.0.1:5555 --rate 100\n\n" +
               exitCodeHelp());
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        std::cerr << kProgram << ": error: " << e.what() << " (see --help)" << std::endl;
        return kExitUsage;
    }
    try {
        refuseEmptyValues(app);
        return run(c);
    } catch (const std::exception& e) {
        return reportError(kProgram, e);
    }
}
