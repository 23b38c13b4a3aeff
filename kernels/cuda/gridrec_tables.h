// gridrec::Setup's tables in device memory (tomo/gridrec.h), and the views
// the phase, gather and crop launches (gridrec_kernels.h) take of them:
// shared by the gridrec plan (gridrec_plan.cpp) and the Fourier projector
// pair (fourier_projector.cpp), which run the same steps.
#pragma once

#include "cuda_resources.h"
#include "gridrec_kernels.h"

#include "tomo/geometry.h"
#include "tomo/gridrec.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tomo::cuda {

/// cuFFT layouts: `rows` complex rows of `length`; `grids` complex size^2 grids.
FftLayout gridrecRowsLayout(int length, int rows);
FftLayout gridrecGridLayout(int size, int grids = 1);

class GridrecTables {
public:
    GridrecTables() = default;
    /// Uploads every table but the phase shifts (uploadShifts) on `stream`;
    /// `owner` names the buffers in OutOfMemory ("gridrec", "the Fourier
    /// projector").
    GridrecTables(int device, const gridrec::Setup& setup, std::string owner, cudaStream_t stream);

    /// The tables that depend on the row length (band, view directions),
    /// for a setup that grew its rows.
    void uploadRowTables(const gridrec::Setup& setup, cudaStream_t stream);
    /// T / L per canonical row (Setup::phaseShifts of `geometry`), ordered
    /// after the kernels already queued on `stream`.
    void uploadShifts(const gridrec::Setup& setup, const Geometry& geometry, cudaStream_t stream);

    /// The phase step from `pairs` pairs of spectra into their samples.
    PhaseLaunch phase(const gridrec::Setup& setup, const float* d_spectra, int pairs, float* d_samples) const;
    /// The gather of whole complex grids ([pair][G][G]) from the samples
    /// ([pair][canonical row][sampleStride], `pairSamples` floats apart).
    GatherLaunch gather(const gridrec::Setup& setup, const float* d_samples, std::size_t pairSamples, int pairs,
                        float* d_grid) const;
    /// `launch` turned to a lone slice's half grid (columns G / 2 + 1).
    void useHalfGrid(const gridrec::Setup& setup, GatherLaunch& launch) const;
    /// The crop of `slices` slices' whole grid, deapodised.
    CropLaunch crop(const gridrec::Setup& setup, const float* d_grid, int slices, float* d_out) const;

    const float* table() const { return d_table.get(); }
    const float* deapodizeX() const { return d_deapodizeX.get(); }
    const float* deapodizeY() const { return d_deapodizeY.get(); }
    const float* band() const { return d_band.get(); }
    const double* dirX() const { return d_dirX.get(); }
    const double* dirY() const { return d_dirY.get(); }
    const double* turns() const { return d_turns.get(); }
    const unsigned char* reversed() const { return d_reversed.get(); }
    std::size_t bytes() const;

private:
    int m_device = 0;
    std::string m_owner;
    DeviceBuffer<float> d_table, d_deapodizeX, d_deapodizeY, d_band, d_invX, d_invY;
    DeviceBuffer<double> d_dirX, d_dirY, d_turns;
    DeviceBuffer<int> d_binStart, d_canonical, d_tiles, d_halfTiles;
    DeviceBuffer<unsigned char> d_reversed;
    int m_tiles = 0, m_halfTiles = 0;
    std::vector<double> h_turns; ///< the source of the last upload (pageable: staged before the call returns)
};

} // namespace tomo::cuda
