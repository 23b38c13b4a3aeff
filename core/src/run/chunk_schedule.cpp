#include "run/chunk_schedule.h"

#include <algorithm>

namespace tomo::detail {

std::vector<int> taperSteps(int chunkRows, int pass) {
    pass = std::max(pass, 1);
    std::vector<int> steps;
    for (int divisor : {8, 4, 2}) {
        const int step = chunkRows / divisor / pass * pass;
        if (step >= pass && (steps.empty() || step > steps.back())) steps.push_back(step);
    }
    return steps;
}

std::vector<int> equalChunks(int rows, int chunkRows) {
    std::vector<int> sizes;
    for (int done = 0; done < rows; done += sizes.back()) sizes.push_back(std::min(chunkRows, rows - done));
    return sizes;
}

std::vector<int> taperedChunks(int rows, int chunkRows, int pass, int lanes) {
    // Taken from both ends in turn, so a short job still starts and ends
    // small. What is left after a part-filled step goes to the middle, so
    // that the steps stay whole passes.
    std::vector<int> front, back;
    int left = rows;
    for (int step : taperSteps(chunkRows, pass))
        for (int lane = 0; lane < std::max(lanes, 1); ++lane)
            for (std::vector<int>* end : {&front, &back}) {
                if (left < step) break;
                end->push_back(step);
                left -= step;
            }
    std::vector<int> sizes = std::move(front);
    const std::vector<int> middle = equalChunks(left, chunkRows);
    sizes.insert(sizes.end(), middle.begin(), middle.end());
    sizes.insert(sizes.end(), back.rbegin(), back.rend());
    return sizes;
}

int taperedLimit(int index, int chunkRows, int pass, int lanes) {
    const std::vector<int> steps = taperSteps(chunkRows, pass);
    const auto step = static_cast<std::size_t>(index / std::max(lanes, 1));
    return step < steps.size() ? steps[step] : chunkRows;
}

} // namespace tomo::detail
