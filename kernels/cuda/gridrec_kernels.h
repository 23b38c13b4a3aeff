// Launchers of the gridrec kernels (gridrec_kernels.cu), the GPU side of the
// method in tomo/gridrec.h. Plain C++: device memory travels as pointers.
//
//   packRows     filtered rows (GpuFilter's workspace) x angular weight ->
//                complex rows of two slices, zero-extended to L (then the 1D FFT)
//   extendRows   spectra of length L -> the rows (inverse-transformed in
//                place first) zero-extended to a longer L' (an axis that
//                needs longer rows)
//   phase        spectra -> the canonical sample rows, x band x phase ramp
//   gather       one thread per grid point of up to four pairs (tomo/gridrec_gather.h),
//                the heavy tiles near the origin first; a lone slice's grid
//                (Hermitian) only up to column G / 2, for a C2R transform
//   lone-slice matrix   a lone slice's gather as a sparse matrix: the taps
//                (sample, weight) of each point of its half grid, counted,
//                offset (prefix sum) and filled once; then every gathering
//                is a sparse matrix-vector product (the live preview: an axis
//                change moves the phases, never the samples' positions); the
//                heavy points near the origin a block each
//   crop         the inverse-transformed grid x deapodisation -> the
//                region of slices 2j (real) and 2j + 1 (imaginary), or of
//                the lone slice (the real grid)
#pragma once

#include "filter_kernels.h"
#include "kernel_launch.h"

#include "tomo/gridrec_gather.h"

#include <cstddef>
#include <vector>

namespace tomo::cuda {

struct PackRowsLaunch {
    const float* d_fft = nullptr;     ///< GpuFilter::d_spectrum() after filter()
    FilterLayout layout;              ///< of that workspace
    const float* d_weights = nullptr; ///< angular weight per projection
    int projections = 0;
    int slices = 0;                   ///< filtered slices in the workspace (rows = slices x projections)
    int rowLength = 0;                ///< L
    float* d_rows = nullptr;          ///< [pair][projection][L] complex, pairs = (slices + 1) / 2
};
void launchPackRows(const PackRowsLaunch& launch, StreamHandle stream);

/// d_to[r][n] = n < bins ? d_from[r][n] / fromLength : 0 for n < toLength,
/// `rows` rows (d_from: inverse-transformed spectra of fromLength).
void launchExtendRows(const float* d_from, int fromLength, float* d_to, int toLength, int bins, int rows,
                      StreamHandle stream);

struct PhaseLaunch {
    const float* d_spectra = nullptr;   ///< [pair][projection][L] complex
    const int* d_canonical = nullptr;   ///< acquisition index of canonical row i
    const unsigned char* d_reversed = nullptr;
    const double* d_turns = nullptr;    ///< Setup::phaseShifts / L: turns per sample k, per canonical row
    const float* d_band = nullptr;      ///< Setup::band
    int projections = 0;
    int rowLength = 0;
    int lastSample = 0;                 ///< samples k = -lastSample..lastSample
    int sampleStride = 0;
    int pairs = 0;
    float* d_samples = nullptr;         ///< [pair][canonical row][sampleStride] complex
};
void launchPhase(const PhaseLaunch& launch, StreamHandle stream);

struct GatherLaunch {
    gridrec::GatherView view;           ///< device pointers; samples of pair 0
    std::size_t pairSamples = 0;        ///< floats from one pair's samples to the next
    const int* d_tiles = nullptr;       ///< tile indices, heavy (near the origin) first
    int tiles = 0;
    int pairs = 0;
    /// Grid points gathered per grid row, and complex values from one row to
    /// the next: G, or G / 2 + 1 for a lone slice (real: its grid is
    /// Hermitian, the columns jx <= G / 2 are all a C2R transform reads).
    int columns = 0;
    float* d_grid = nullptr;            ///< [pair][G][columns] complex, pairs 2 G^2 floats apart
};
/// Tiles are kGatherTile x kGatherTile grid points, numbered row by row
/// over the `columns` gathered.
inline constexpr int kGatherTile = 16;
/// Pairs one thread gathers at once (a batch's four: kGridrecBatchPairs):
/// they share the search for the rows within the kernel's reach and the
/// kernel's weights (most of a point's work), each pair's value the same as
/// alone.
inline constexpr int kGatherPairs = 4;
void launchGather(const GatherLaunch& launch, StreamHandle stream);
/// GatherLaunch::d_tiles over `columns` x G grid points: the tiles nearest
/// the origin (which gather from the most rows) first (gridrec_tables.cpp).
std::vector<int> heavyFirstTiles(int gridSize, int columns);

/// A lone slice's gather as a sparse matrix over the points p = jy * columns
/// + jx of its half grid (columns = G / 2 + 1), in two parts. The points
/// near the origin have thousands of taps (every row passes them by), and
/// a thread summing them alone would outlast the whole gather: the points
/// with more than kHeavyTaps taps are "heavy", each summed by a block of
/// kHeavyThreads threads from its own run of taps (HeavyTaps). The others:
/// each window of kTapWindow
/// points is sorted by their numbers of taps into its slots (order[slot]:
/// the point, -1 past the grid), and each group of kTapGroup slots (a warp:
/// points of like counts, so little padding) fills rows offsets[g] ..
/// offsets[g + 1] - 1 of kTapGroup values: slot s's tap t in row offsets[g]
/// + t, column s mod kTapGroup (read side by side), a complex sample index
/// (row * sampleStride + k + lastSample) and its weight, in the search's
/// order (the same sums); a point with fewer taps than its group's most is
/// padded with weight 0; a heavy point's slot is -1 as past the grid.
inline constexpr int kTapGroup = 32;
inline constexpr int kTapWindow = 256;
inline constexpr int kHeavyTaps = 512;
inline constexpr int kHeavyThreads = 128;
struct TapMatrix {
    const int* d_order = nullptr;         ///< point of each slot, groups x kTapGroup
    const long long* d_offsets = nullptr; ///< groups + 1
    const int* d_index = nullptr;         ///< kTapGroup x offsets[groups]
    const float* d_weight = nullptr;
};
/// The heavy points: point d_points[h] has the taps d_offsets[h] ..
/// d_offsets[h + 1] - 1 of d_index / d_weight, in the search's order (its
/// sum: kHeavyThreads partial sums, then a fixed tree, the same at every run).
struct HeavyTaps {
    int count = 0;
    const int* d_points = nullptr;
    const long long* d_offsets = nullptr; ///< count + 1
    const int* d_index = nullptr;
    const float* d_weight = nullptr;
};
/// Where launchCountTaps lists the heavy points it finds (d_count of them,
/// the first `capacity` in d_points / d_taps, in no set order).
struct HeavyList {
    int* d_points = nullptr;
    int* d_taps = nullptr;
    int* d_count = nullptr;
    int capacity = 0;
};
/// The points of a lone slice's half grid (launch.columns = G / 2 + 1).
inline long long lonePoints(const GatherLaunch& launch) {
    return static_cast<long long>(launch.view.gridSize) * launch.columns;
}
/// Groups of the whole windows that cover the points.
inline long long tapGroups(const GatherLaunch& launch) {
    return (lonePoints(launch) + kTapWindow - 1) / kTapWindow * (kTapWindow / kTapGroup);
}
/// Device bytes launchCountTaps's prefix sum needs.
std::size_t countTapsWorkBytes(const GatherLaunch& launch);
/// d_order (groups x kTapGroup) and d_offsets[0..groups], the exclusive
/// prefix sum of each group's most taps (d_offsets[groups]: the rows of
/// all); d_widths: groups + 1 values of scratch.
void launchCountTaps(const GatherLaunch& launch, int* d_order, long long* d_widths, long long* d_offsets, void* d_work,
                     std::size_t workBytes, const HeavyList& heavy, StreamHandle stream);
/// Writes each point's taps (and the padding) into d_index and d_weight
/// (kTapGroup x matrix.d_offsets[groups] each).
void launchFillTaps(const GatherLaunch& launch, const TapMatrix& matrix, int* d_index, float* d_weight,
                    StreamHandle stream);
/// Writes each heavy point's taps into heavy.d_index and heavy.d_weight.
void launchFillHeavyTaps(const GatherLaunch& launch, const HeavyTaps& heavy, int* d_index, float* d_weight,
                         StreamHandle stream);
/// launch.d_grid[p] = sum of weight x launch.view.samples[index] over point p's taps.
void launchMatrixGather(const GatherLaunch& launch, const TapMatrix& matrix, const HeavyTaps& heavy,
                        StreamHandle stream);

struct CropLaunch {
    const float* d_grid = nullptr;      ///< [pair][G][G] complex, inverse-transformed
    int gridSize = 0;
    int shiftX = 0, shiftY = 0;
    const float* d_deapodizeX = nullptr; ///< per slice column
    const float* d_deapodizeY = nullptr; ///< per slice row
    int regionX = 0, regionY = 0, regionWidth = 0, regionHeight = 0;
    /// Valid slices: for an odd count the last pair holds one, its grid
    /// real (the C2R transform's output: rows of 2 (G / 2 + 1) floats).
    int slices = 0;
    float* d_out = nullptr;             ///< [slice][row][column] of the region
};
void launchCrop(const CropLaunch& launch, StreamHandle stream);

} // namespace tomo::cuda
