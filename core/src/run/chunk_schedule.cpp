#include "run/chunk_schedule.h"

#include <algorithm>

namespace tomo::detail {

std::vector<int> equalChunks(int rows, int chunkRows) {
    std::vector<int> sizes;
    for (int done = 0; done < rows; done += sizes.back()) sizes.push_back(std::min(chunkRows, rows - done));
    return sizes;
}

std::vector<int> taperedChunks(int rows, int chunkRows, int pass) {
    pass = std::max(pass, 1);
    // The steps, smallest first: chunkRows / 8, / 4, / 2 in whole passes.
    std::vector<int> steps;
    for (int divisor : {8, 4, 2}) {
        const int step = chunkRows / divisor / pass * pass;
        if (step >= pass && (steps.empty() || step > steps.back())) steps.push_back(step);
    }
    // Taken from both ends in turn, so a short job still starts and ends small.
    std::vector<int> front, back;
    int left = rows;
    for (int step : steps) {
        for (std::vector<int>* end : {&front, &back}) {
            // What is left after a part-filled step goes to the middle, so
            // that the steps stay whole passes.
            if (left < step) break;
            end->push_back(step);
            left -= step;
        }
    }
    std::vector<int> sizes = std::move(front);
    const std::vector<int> middle = equalChunks(left, chunkRows);
    sizes.insert(sizes.end(), middle.begin(), middle.end());
    sizes.insert(sizes.end(), back.rbegin(), back.rend());
    return sizes;
}

} // namespace tomo::detail
