// Internal: the sizes of the batch conveyor's chunks, in order. The stages
// downstream of the reader wait for the first chunk, and the writer finishes
// after the last one: small chunks at both ends shorten those waits, large
// ones in the middle keep per-chunk costs (and the reader's request sizes)
// where the memory budget puts them.
#pragma once

#include <vector>

namespace tomo::detail {

/// Chunks of `rows` rows in all, at most `chunkRows` each: the first ones
/// grow as chunkRows / 8, / 4, / 2 and the last ones shrink the same way,
/// each a whole number of `pass` rows (a GPU pass of fewer slices costs a
/// whole one), so that only one chunk, if any, is not. Steps of less than
/// a pass are left out: chunkRows < 2 * pass gives equal chunks.
std::vector<int> taperedChunks(int rows, int chunkRows, int pass);

/// Chunks of `chunkRows` rows, the last one what is left.
std::vector<int> equalChunks(int rows, int chunkRows);

} // namespace tomo::detail
