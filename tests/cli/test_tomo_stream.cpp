// tomo-stream (the sender) and tomo-recon --follow (a growing SWMR file
// reconstructed once its writer closes it), as separate processes.
#include "cli_runner.h"

#include "tomo/live.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <thread>

namespace tomo {
namespace {

using namespace std::chrono_literals;
using test::quoted;
using test::runTool;
using test::ToolRun;

/// A --follow run while tomo-stream writes the file, then a run on the
/// finished file with the same options: the volumes are equal bit for bit.
void followEqualsFinished(const std::string& sourceArgs, const std::string& reconArgs) {
    test::TempDir dir;
    test::TempDir senderDir; // runTool's captured output files, apart from the follower's
    const auto live = dir / "live.h5";
    ToolRun sender;
    // The follower starts first: the file appears while it waits.
    std::thread play([&] {
        std::this_thread::sleep_for(300ms);
        sender = runTool(TOMO_STREAM_EXE, sourceArgs + " --to " + quoted(live), senderDir.path());
    });
    const ToolRun follow =
        runTool(TOMO_RECON_EXE, quoted(live) + " --follow --follow-timeout 60 -o " + quoted(dir / "follow.h5") + reconArgs,
                dir.path());
    play.join();
    ASSERT_EQ(sender.exitCode, 0) << sender.err;
    ASSERT_EQ(follow.exitCode, 0) << follow.err;
    EXPECT_NE(follow.out.find("follow: "), std::string::npos) << follow.out;
    EXPECT_NE(follow.out.find("the writer closed"), std::string::npos) << follow.out;
    const ToolRun after = runTool(TOMO_RECON_EXE, quoted(live) + " -o " + quoted(dir / "after.h5") + reconArgs, dir.path());
    ASSERT_EQ(after.exitCode, 0) << after.err;
    const ImageStack a = readVolume(dir / "follow.h5"), b = readVolume(dir / "after.h5");
    ASSERT_EQ(a.data.size(), b.data.size());
    EXPECT_EQ(0, std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)));
}

TEST(TomoStream, FollowOfTheRealToothEqualsTheRunOnTheFinishedFile) {
    const auto tooth = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(tooth);
    followEqualsFinished(quoted(tooth) + " --rate 200", " --center 296 --strategy cpu");
}

TEST(TomoStream, FollowOfThePhantomEqualsTheRunOnTheFinishedFile) {
    followEqualsFinished("--phantom 64 --phantom-rows 3 --rate 400", " --strategy cpu");
}

TEST(TomoStream, FollowOfAGrowingNXtomoFileEqualsTheRunOnTheFinishedFile) {
    followEqualsFinished("--phantom 64 --phantom-rows 3 --rate 400 --nxtomo", " --strategy cpu");
}

TEST(TomoStream, AWriterThatDiesEndsTheFollowWithAnErrorAndNoOutput) {
    test::TempDir dir;
    const auto live = dir / "dead.h5";
    const ToolRun sender = runTool(TOMO_STREAM_EXE, "--phantom 32 --to " + quoted(live) + " --stop-after 10", dir.path());
    ASSERT_EQ(sender.exitCode, 0) << sender.err;
    EXPECT_NE(sender.out.find("stopped after"), std::string::npos);
    const ToolRun follow = runTool(TOMO_RECON_EXE,
                                   quoted(live) + " --follow --follow-timeout 1 -o " + quoted(dir / "out.h5"), dir.path());
    EXPECT_EQ(follow.exitCode, 5) << follow.err; // DataError
    ASSERT_EQ(follow.errLines().size(), 1u) << follow.err;
    EXPECT_NE(follow.err.find("has not closed the file"), std::string::npos) << follow.err;
    EXPECT_NE(follow.err.find("10 projections"), std::string::npos) << follow.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.h5"));
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().find("out.h5"), std::string::npos) << entry.path();
}

TEST(TomoStream, BadCommandLinesAreOneLineErrors) {
    test::TempDir dir;
    test::expectOneLineError(TOMO_STREAM_EXE, "tomo-stream", "--phantom 32", dir.path(), 2, "either --to");
    test::expectOneLineError(TOMO_STREAM_EXE, "tomo-stream", "--to a.h5", dir.path(), 2, "either an INPUT");
    test::expectOneLineError(TOMO_STREAM_EXE, "tomo-stream", "--phantom 32 --zmq tcp://*:5555", dir.path(), 2,
                             "every network interface");
    test::expectOneLineError(TOMO_STREAM_EXE, "tomo-stream", "--phantom 32 --zmq ipc://x --nxtomo", dir.path(), 2,
                             "--nxtomo");
    test::expectOneLineError(TOMO_STREAM_EXE, "tomo-stream", "--phantom 32 --to a.h5 --pub", dir.path(), 2, "--pub");
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon", "--demo --follow", dir.path(), 2, "--follow");
}

#if TOMO_WITH_ZMQ
TEST(TomoStream, SendsAPhantomToAZeroMqReceiver) {
    test::TempDir dir;
    const std::string endpoint = "ipc://" + (dir / "s.sock").string();
    StreamOptions options;
    options.endpoint = endpoint;
    // What the receiver refused, said if the scan does not arrive (once, under
    // load in CI, nothing was received: this says why next time).
    auto refused = std::make_shared<std::vector<std::string>>();
    auto refusedMutex = std::make_shared<std::mutex>();
    options.log = [refused, refusedMutex](const std::string& line) {
        const std::lock_guard lock(*refusedMutex);
        refused->push_back(line);
    };
    auto stream = openZmqStream(options);
    const ToolRun sender = runTool(TOMO_STREAM_EXE, "--phantom 32 --phantom-rows 2 --zmq " + endpoint, dir.path());
    ASSERT_EQ(sender.exitCode, 0) << sender.err;
    LiveState state;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!state.finished && std::chrono::steady_clock::now() < deadline) state = stream->wait(state.version, 100ms);
    {
        const std::lock_guard lock(*refusedMutex);
        EXPECT_TRUE(state.finished) << "received " << state.projections << " projections, "
                                    << stream->counters().rejected << " messages refused" << (refused->empty() ? "" : ", the first: ")
                                    << (refused->empty() ? "" : refused->front()) << "; the sender said: " << sender.out
                                    << sender.err;
    }
    EXPECT_EQ(state.projections, 32);
    EXPECT_EQ(state.scanId, "phantom");
    EXPECT_EQ(stream->snapshot()->info().rows, 2);
}
#endif

} // namespace
} // namespace tomo
