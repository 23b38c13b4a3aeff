// The batch conveyor's chunk schedule (small chunks at both ends, whole
// passes) and its buffer pool allocating ahead on a thread of its own (takers
// wait for those buffers instead of allocating their own).
#include "buffer_pool.h"
#include "run/chunk_schedule.h"

#include "tomo/error.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

namespace tomo::detail {
namespace {

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(ChunkSchedule, GrowsAndShrinksInWholePassesAtBothEnds) {
    // 44 rows a chunk, passes of 4: steps of 4, 8 and 20 rows.
    const std::vector<int> sizes = taperedChunks(512, 44, 4);
    EXPECT_EQ(sum(sizes), 512);
    ASSERT_GE(sizes.size(), 8u);
    EXPECT_EQ((std::vector<int>(sizes.begin(), sizes.begin() + 3)), (std::vector<int>{4, 8, 20}));
    EXPECT_EQ((std::vector<int>(sizes.end() - 3, sizes.end())), (std::vector<int>{20, 8, 4}));
    int partial = 0;
    for (int n : sizes) {
        EXPECT_GE(n, 1);
        EXPECT_LE(n, 44);
        if (n % 4 != 0) ++partial;
    }
    EXPECT_LE(partial, 1) << "only the remainder may be a partial pass";
}

TEST(ChunkSchedule, ShortJobsStillStartAndEndSmall) {
    EXPECT_EQ(taperedChunks(40, 44, 4), (std::vector<int>{4, 8, 16, 8, 4}));
    EXPECT_EQ(taperedChunks(7, 44, 4), (std::vector<int>{4, 3}));
    EXPECT_EQ(taperedChunks(1, 44, 4), (std::vector<int>{1}));
}

TEST(ChunkSchedule, StepsBelowAPassAreLeftOut) {
    // Passes of 4, chunks of 8: only the half-chunk step (4) remains.
    EXPECT_EQ(taperedChunks(32, 8, 4), (std::vector<int>{4, 8, 8, 8, 4}));
    // Chunks of one pass cannot taper.
    EXPECT_EQ(taperedChunks(10, 4, 4), (std::vector<int>{4, 4, 2}));
    EXPECT_EQ(taperedChunks(10, 4, 4), equalChunks(10, 4));
}

TEST(ChunkSchedule, EqualChunksEndWithWhatIsLeft) {
    EXPECT_EQ(equalChunks(7, 3), (std::vector<int>{3, 3, 1}));
    EXPECT_EQ(equalChunks(6, 3), (std::vector<int>{3, 3}));
    EXPECT_TRUE(equalChunks(0, 3).empty());
}

/// An allocator that takes its time and counts its calls.
struct SlowAllocator {
    std::atomic<int> calls{0};
    int failFrom = 1 << 30; // calls from this one on throw OutOfMemory
    HostBufferPool::Allocate get() {
        return [this](std::size_t bytes) {
            const int call = calls++;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (call >= failFrom) throw OutOfMemory("not enough host memory (test)");
            return HostBuffer::plain(bytes);
        };
    }
};

TEST(HostBufferPool, TakersWaitForTheBuffersAllocatedAheadInsteadOfAllocatingTheirOwn) {
    SlowAllocator allocator;
    HostBufferPool pool(allocator.get());
    pool.allocateAhead(1000, 3);
    // Smaller requests than the buffers ahead (a conveyor's first chunks):
    // each waits for one of them.
    std::vector<HostBuffer> taken;
    for (std::size_t bytes : {100u, 500u, 1000u}) {
        taken.push_back(pool.take(bytes));
        EXPECT_EQ(taken.back().size(), 1000u);
    }
    EXPECT_EQ(allocator.calls, 3);
    // All in use and none on the way: a fourth is allocated by the taker.
    EXPECT_EQ(pool.take(1000).size(), 1000u);
    EXPECT_EQ(allocator.calls, 4);
    // Given back, they are reused.
    for (HostBuffer& b : taken) pool.give(std::move(b));
    EXPECT_EQ(pool.take(10).size(), 1000u);
    EXPECT_EQ(allocator.calls, 4);
}

TEST(HostBufferPool, AFailureAheadLeavesTheTakerToAllocateAndReportIt) {
    SlowAllocator allocator;
    allocator.failFrom = 1; // the second buffer ahead cannot be had
    HostBufferPool pool(allocator.get());
    pool.allocateAhead(1000, 3);
    const HostBuffer first = pool.take(1000);
    EXPECT_EQ(first.size(), 1000u);
    // Nothing more on the way: the taker allocates, and reports the failure.
    EXPECT_THROW(pool.take(1000), OutOfMemory);
    EXPECT_EQ(allocator.calls, 3);
}

TEST(HostBufferPool, DestroyedWhileAllocatingAheadStopsAfterTheAllocationUnderWay) {
    SlowAllocator allocator;
    {
        HostBufferPool pool(allocator.get());
        pool.allocateAhead(1000, 50); // 1 s of allocations
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    EXPECT_LT(allocator.calls, 50);
}

} // namespace
} // namespace tomo::detail
