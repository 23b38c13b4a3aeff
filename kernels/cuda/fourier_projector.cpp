#include "fourier_projector.h"

#include "gridrec_kernels.h"
#include "gridrec_tables.h"

#include "tomo/error.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <string>

namespace tomo::cuda {

namespace {

constexpr int kMaxPairs = 2; // a group of 4 lanes

std::size_t tilesOf(int gridSize) {
    // The whole grid's tiles and the half grid's (GridrecTables keeps both).
    const std::size_t down = (static_cast<std::size_t>(gridSize) + kGatherTile - 1) / kGatherTile;
    const std::size_t half = (static_cast<std::size_t>(gridSize) / 2 + kGatherTile) / kGatherTile;
    return down * (down + half);
}

std::size_t pixelsOf(const gridrec::Setup& s) { return static_cast<std::size_t>(s.width) * s.height; }

std::size_t bytesOf(const gridrec::Setup& s) {
    const std::size_t grids = kMaxPairs * s.gridBytes();
    const std::size_t spectra = kMaxPairs * s.spectrumBytes();
    const std::size_t samples = kMaxPairs * s.samplesBytes();
    const std::size_t plain = 2 * kMaxPairs * pixelsOf(s) * sizeof(float);
    const std::size_t perRow = 3 * sizeof(double) + 2 * sizeof(float) + 2 * sizeof(int) + 1; // dir, turns, inv, order
    const std::size_t tables = (s.table.size() + s.deapodizeX.size() + s.deapodizeY.size() + s.band.size()) * sizeof(float) +
                               static_cast<std::size_t>(s.projections) * perRow +
                               (s.binStart.size() + tilesOf(s.gridSize)) * sizeof(int);
    const std::size_t work = std::max(grids, spectra); // cuFFT's, estimated
    return grids + spectra + samples + plain + tables + work;
}

/// "the Fourier projector's buffers (grids 2 x 512^2, ...)": what OutOfMemory names.
std::string describe(const gridrec::Setup& s) {
    return "the Fourier projector's buffers (grids 2 x " + std::to_string(s.gridSize) + "^2, spectra 2 x " +
           std::to_string(s.projections) + " x " + std::to_string(s.rowLength) + ", samples 2 x " +
           std::to_string(s.projections) + " x " + std::to_string(s.sampleStride()) + " complex, 4 slices of " +
           std::to_string(s.width) + "x" + std::to_string(s.height) + ", cuFFT's work area)";
}

} // namespace

FourierOperator::FourierOperator(int device, const ReconGeometry& geometry, cudaStream_t stream)
    : m_device(device), m_stream(stream), m_geometry(geometry) {
    build(std::make_unique<gridrec::Setup>(m_geometry, gridrec::Parameters{}));
}

std::size_t FourierOperator::bytesFor(const ReconGeometry& geometry) {
    return bytesOf(gridrec::Setup(geometry, gridrec::Parameters{}));
}

std::size_t FourierOperator::bytes() const {
    return m_gridrec.bytes() + d_rowOf.bytes() + d_spectra.bytes() + d_samples.bytes() + d_grid.bytes() + d_plain.bytes() + d_work.bytes();
}

void FourierOperator::build(std::unique_ptr<gridrec::Setup> setup) {
    // The old buffers go first: a rebuild needs the room.
    for (auto* b : {&d_spectra, &d_samples, &d_grid, &d_plain}) b->reset();
    d_work.reset();
    for (FftPlan& plan : m_rowPlans) plan = FftPlan();
    for (FftPlan& plan : m_gridPlans) plan = FftPlan();
    m_setup = std::move(setup);
    const gridrec::Setup& s = *m_setup;

    std::size_t freeBytes = 0, totalBytes = 0;
    TOMO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    if (const std::size_t needed = bytesOf(s); needed > freeBytes) throwDeviceOutOfMemory(m_device, describe(s), needed);

    m_gridrec = GridrecTables(m_device, s, "the Fourier projector", m_stream);
    std::vector<int> rowOf(s.canonical.size());
    for (int i = 0; i < s.projections; ++i) rowOf[s.canonical[i]] = i;
    d_rowOf = DeviceBuffer<int>(m_device, rowOf.size(), "the Fourier projector's canonical order");
    copyToDeviceNow(d_rowOf.get(), rowOf.data(), rowOf.size() * sizeof(int), m_stream);

    d_spectra = DeviceBuffer<float>(m_device, kMaxPairs * s.spectrumBytes() / sizeof(float),
                                    "the Fourier projector's spectra (2 x " + std::to_string(s.projections) + " x " +
                                        std::to_string(s.rowLength) + " complex)");
    d_samples = DeviceBuffer<float>(m_device, kMaxPairs * s.samplesBytes() / sizeof(float),
                                    "the Fourier projector's samples (2 x " + std::to_string(s.projections) + " x " +
                                        std::to_string(s.sampleStride()) + " complex)");
    d_grid = DeviceBuffer<float>(m_device, kMaxPairs * s.gridBytes() / sizeof(float),
                                 "the Fourier projector's grids (2 x " + std::to_string(s.gridSize) + "^2 complex)");
    d_plain = DeviceBuffer<float>(m_device, 2 * kMaxPairs * pixelsOf(s), "the Fourier projector's cropped slices");

    std::size_t work = 0;
    for (int pairs = 1; pairs <= kMaxPairs; ++pairs) {
        m_rowPlans[pairs - 1] =
            FftPlan(m_device, gridrecRowsLayout(s.rowLength, pairs * s.projections),
                    "the Fourier projector's row transforms (" + std::to_string(pairs * s.projections) + " rows of " +
                        std::to_string(s.rowLength) + ")");
        m_gridPlans[pairs - 1] = FftPlan(m_device, gridrecGridLayout(s.gridSize, pairs),
                                         "the Fourier projector's grid transforms (" + std::to_string(pairs) + " x " +
                                             std::to_string(s.gridSize) + "^2)");
        work = std::max({work, m_rowPlans[pairs - 1].workBytes(), m_gridPlans[pairs - 1].workBytes()});
    }
    // The plans run one after another on one stream: one work area serves them all.
    d_work = DeviceBuffer<unsigned char>(m_device, work, "the Fourier projector's cuFFT work area");
    for (FftPlan* plan : {&m_rowPlans[0], &m_rowPlans[1], &m_gridPlans[0], &m_gridPlans[1]}) {
        TOMO_CUFFT_CHECK(cufftSetWorkArea(plan->get(), d_work.get()));
        TOMO_CUFFT_CHECK(cufftSetStream(plan->get(), m_stream));
    }

    FourierTables& T = m_tables;
    T.d_table = m_gridrec.table();
    T.tableLast = s.tableLast;
    T.halfWidth = s.halfWidth;
    T.kernelWidth = s.parameters.kernelWidth;
    T.d_deapodizeX = m_gridrec.deapodizeX();
    T.d_deapodizeY = m_gridrec.deapodizeY();
    T.d_band = m_gridrec.band();
    T.d_dirX = m_gridrec.dirX();
    T.d_dirY = m_gridrec.dirY();
    T.d_reversed = m_gridrec.reversed();
    T.d_rowOf = d_rowOf.get();
    T.bins = s.bins;
    T.projections = s.projections;
    T.width = s.width;
    T.height = s.height;
    T.gridSize = s.gridSize;
    T.shiftX = s.shiftX;
    T.shiftY = s.shiftY;
    T.rowLength = s.rowLength;
    T.lastSample = s.lastSample();
    T.sampleStride = s.sampleStride();
    uploadTurns();
}

void FourierOperator::uploadTurns() {
    m_gridrec.uploadShifts(*m_setup, m_geometry.geometry, m_stream);
    m_tables.d_turns = m_gridrec.turns();
}

void FourierOperator::setAxis(const Geometry& geometry) {
    ReconGeometry moved = m_geometry;
    moved.geometry = geometry;
    std::unique_ptr<gridrec::Setup> grown;
    if (const int needed = m_setup->rowLengthNeeded(geometry); needed > m_setup->rowLength)
        grown = std::make_unique<gridrec::Setup>(moved, gridrec::Parameters{}, needed); // throws for an axis far off
    m_geometry = std::move(moved);
    if (grown) {
        TOMO_CUDA_CHECK(cudaStreamSynchronize(m_stream)); // the old buffers may still be in use
        build(std::move(grown));
    } else {
        uploadTurns();
    }
}

void FourierOperator::forwardRows(const float* d_image, int lanes, int valid) {
    const int pairs = (valid + 1) / 2;
    launchPlaceImage(m_tables, d_image, lanes, valid, d_grid.get(), m_stream);
    auto* grid = reinterpret_cast<cufftComplex*>(d_grid.get());
    TOMO_CUFFT_CHECK(cufftExecC2C(m_gridPlans[pairs - 1].get(), grid, grid, CUFFT_FORWARD));
    launchInterpolate(m_tables, d_grid.get(), pairs, d_samples.get(), m_stream);
    launchFold(m_tables, d_samples.get(), pairs, d_spectra.get(), m_stream);
    auto* rows = reinterpret_cast<cufftComplex*>(d_spectra.get());
    TOMO_CUFFT_CHECK(cufftExecC2C(m_rowPlans[pairs - 1].get(), rows, rows, CUFFT_INVERSE));
}

void FourierOperator::forwardGroup(const float* d_image, int lanes, int valid, float* d_sinogram) {
    residualGroup(d_image, nullptr, nullptr, lanes, valid, d_sinogram, nullptr); // no data: A x itself
}

void FourierOperator::residualGroup(const float* d_image, const float* d_data, const float* d_rowWeights, int lanes,
                                    int valid, float* d_residual, double* d_partial) {
    forwardRows(d_image, lanes, valid);
    UnpackLaunch unpack;
    unpack.d_rows = d_spectra.get();
    unpack.lanes = lanes;
    unpack.valid = valid;
    unpack.d_out = d_residual;
    unpack.d_data = d_data;
    unpack.d_rowWeights = d_rowWeights;
    unpack.d_partial = d_partial;
    launchUnpackRows(m_tables, unpack, m_stream);
}

void FourierOperator::backPlain(const float* d_sinogram, int lanes, int valid) {
    const gridrec::Setup& s = *m_setup;
    const int pairs = (valid + 1) / 2;
    launchPackRows(m_tables, d_sinogram, lanes, valid, d_spectra.get(), m_stream);
    auto* rows = reinterpret_cast<cufftComplex*>(d_spectra.get());
    TOMO_CUFFT_CHECK(cufftExecC2C(m_rowPlans[pairs - 1].get(), rows, rows, CUFFT_FORWARD));

    launchPhase(m_gridrec.phase(s, d_spectra.get(), pairs, d_samples.get()), m_stream);
    // Both pairs complex (a lone slice too: its imaginary part is 0), so
    // every grid point is gathered and the transform is C2C.
    launchGather(m_gridrec.gather(s, d_samples.get(), s.samplesBytes() / sizeof(float), pairs, d_grid.get()), m_stream);
    auto* grid = reinterpret_cast<cufftComplex*>(d_grid.get());
    TOMO_CUFFT_CHECK(cufftExecC2C(m_gridPlans[pairs - 1].get(), grid, grid, CUFFT_INVERSE));

    // Every grid complex: both parts cropped.
    const CropLaunch crop = m_gridrec.crop(s, d_grid.get(), 2 * pairs, d_plain.get());
    launchCrop(crop, m_stream);
}

void FourierOperator::backGroup(const float* d_sinogram, int lanes, int valid, float* d_image) {
    backPlain(d_sinogram, lanes, valid);
    launchInterleave(d_plain.get(), d_image, pixelsOf(*m_setup), lanes, valid, m_stream);
}

void FourierOperator::stepGroup(const float* d_residual, int lanes, int valid, const SliceScalars& steps,
                                const float* d_columnWeights, float lower, float upper, float* d_image) {
    backPlain(d_residual, lanes, valid);
    launchStep(m_tables, d_plain.get(), lanes, valid, steps, d_columnWeights, lower, upper, d_image, m_stream);
}

} // namespace tomo::cuda
