// Internal: the sizes of the batch conveyor's chunks, in order. The stages
// downstream of the reader wait for the first chunk, and the writer finishes
// after the last one: small chunks at both ends shorten those waits, large
// ones in the middle keep per-chunk costs (and the reader's request sizes)
// where the memory budget puts them. With several lanes (devices), each
// small step comes once per lane, so that every lane starts, and ends, soon.
#pragma once

#include <vector>

namespace tomo::detail {

/// The steps chunks grow by at the start (and shrink by at the end),
/// smallest first: chunkRows / 8, / 4, / 2, each a whole number of `pass`
/// rows (a GPU pass of fewer slices costs a whole one). Steps of less than
/// a pass are left out: chunkRows < 2 * pass gives none.
std::vector<int> taperSteps(int chunkRows, int pass);

/// Chunks of `rows` rows in all, at most `chunkRows` each: the first ones
/// grow as taperSteps(), each step `lanes` times, and the last ones shrink
/// the same way, so that only one chunk, if any, is not a whole number of
/// passes.
std::vector<int> taperedChunks(int rows, int chunkRows, int pass, int lanes = 1);

/// Chunks of `chunkRows` rows, the last one what is left.
std::vector<int> equalChunks(int rows, int chunkRows);

/// The most rows the `index`-th chunk (from 0) may have when the rows come
/// from elsewhere (a RowSource) and the end is not known: the taper's
/// steps, each `lanes` times, then chunkRows.
int taperedLimit(int index, int chunkRows, int pass, int lanes);

} // namespace tomo::detail
