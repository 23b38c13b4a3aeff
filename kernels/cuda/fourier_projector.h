// The Fourier projector pair's operator on the GPU (ProjectorKind::Fourier;
// the definition: makeFourierCpuProjector in tomo/projector.h, its CPU twin),
// for the CUDA pair (projector_pair.cpp), one group of its vectors at a time
// (up to 4 lane-interleaved slices = 2 complex pairs):
//
//   back B (sinograms -> images): packRows -> row FFTs (forward) -> phase
//     (launchPhase) -> gather (launchGather) -> grid FFT (inverse) -> crop x
//     deapodisation (launchCrop, into plain slices) -> interleave
//   forward A = B^H, steps reversed: placeImage -> grid FFT (forward) ->
//     interpolate -> fold -> row FFTs (inverse) -> unpackRows
//
// Memory (bytesFor): two pairs' grids (2 G^2 complex), spectra (2 P L),
// samples (2 P sampleStride), the cropped slices (4 images), gridrec's
// tables and cuFFT's work area, whatever the batch. All work goes on the
// stream given at construction.
#pragma once

#include "cuda_resources.h"
#include "fourier_projector_kernels.h"
#include "gridrec_tables.h"
#include "group_operator.h"

#include "tomo/geometry.h"
#include "tomo/gridrec.h"
#include "tomo/projector.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace tomo::cuda {

class FourierOperator final : public GroupOperator {
public:
    /// gridrec::Setup of `geometry` with the default parameters. Throws
    /// OutOfMemory naming the operator's buffers and the bytes they need,
    /// InvalidArgument (an axis too far off the detector), DeviceError.
    FourierOperator(int device, const ReconGeometry& geometry, cudaStream_t stream);
    FourierOperator(const FourierOperator&) = delete;
    FourierOperator& operator=(const FourierOperator&) = delete;

    /// Device bytes an operator of `geometry` takes (cuFFT's work area
    /// estimated as the size of the largest transform's data).
    static std::size_t bytesFor(const ReconGeometry& geometry);
    std::string kind() const override { return "fourier"; }
    std::size_t bytes() const override;
    float minWeightSum() const override { return static_cast<float>(kFourierMinWeightSum); }

    void forwardGroup(const float* d_image, int lanes, int valid, float* d_sinogram) override;
    /// Without d_data, d_residual = A x (d_partial unused).
    void residualGroup(const float* d_image, const float* d_data, const float* d_rowWeights, int lanes, int valid,
                       float* d_residual, double* d_partial) override;
    int residualBlocks() const override { return unpackBlocks(m_tables); }
    void backGroup(const float* d_sinogram, int lanes, int valid, float* d_image) override;
    void stepGroup(const float* d_residual, int lanes, int valid, const SliceScalars& steps,
                   const float* d_columnWeights, float lower, float upper, float* d_image) override;

    /// The phase shifts of a moved axis; an axis whose pixels would wrap
    /// round the rows gets longer rows (every buffer and plan rebuilt).
    /// Throws as the constructor.
    void setAxis(const Geometry& geometry) override;

private:
    /// Everything that depends on the row length: tables, buffers, plans.
    void build(std::unique_ptr<gridrec::Setup> setup);
    void uploadTurns();
    /// Forward steps 5' to 1' of one group up to the inverse row FFTs
    /// (d_spectra holds the rows).
    void forwardRows(const float* d_image, int lanes, int valid);
    /// Back steps 1 to 5 of one group into d_plain ([slice][pixel], 2 per pair).
    void backPlain(const float* d_sinogram, int lanes, int valid);

    int m_device = 0;
    cudaStream_t m_stream = nullptr;
    ReconGeometry m_geometry;
    std::unique_ptr<gridrec::Setup> m_setup;
    FourierTables m_tables;

    GridrecTables m_gridrec;  ///< gridrec's tables (and the phase, gather and crop launches')
    DeviceBuffer<int> d_rowOf; ///< canonical row of acquisition row p
    DeviceBuffer<float> d_spectra; ///< [pair][projection][L] complex
    DeviceBuffer<float> d_samples; ///< [pair][canonical row][sampleStride] complex
    DeviceBuffer<float> d_grid;    ///< [pair][G][G] complex
    DeviceBuffer<float> d_plain;   ///< 4 cropped slices [slice][pixel]
    DeviceBuffer<unsigned char> d_work;
    FftPlan m_rowPlans[2], m_gridPlans[2]; ///< for 1 and 2 pairs
};

} // namespace tomo::cuda
