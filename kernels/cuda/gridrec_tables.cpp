#include "gridrec_tables.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <utility>

namespace tomo::cuda {

namespace {

template <class T>
DeviceBuffer<T> upload(int device, const std::vector<T>& values, const std::string& what, cudaStream_t stream) {
    DeviceBuffer<T> buffer(device, values.size(), what);
    copyToDeviceNow(buffer.get(), values.data(), values.size() * sizeof(T), stream);
    return buffer;
}

} // namespace

std::vector<int> heavyFirstTiles(int gridSize, int columns) {
    const int across = (columns + kGatherTile - 1) / kGatherTile;
    const int down = (gridSize + kGatherTile - 1) / kGatherTile;
    std::vector<int> tiles(static_cast<std::size_t>(across) * down);
    std::iota(tiles.begin(), tiles.end(), 0);
    auto distance = [&](int tile) {
        auto centred = [&](int j) { return std::abs(j < gridSize / 2 ? j : j - gridSize); };
        const int x = centred(tile % across * kGatherTile + kGatherTile / 2);
        const int y = centred(tile / across * kGatherTile + kGatherTile / 2);
        return static_cast<long long>(x) * x + static_cast<long long>(y) * y;
    };
    std::stable_sort(tiles.begin(), tiles.end(), [&](int a, int b) { return distance(a) < distance(b); });
    return tiles;
}

FftLayout gridrecRowsLayout(int length, int rows) {
    FftLayout l;
    l.rank = 1;
    l.n[0] = length;
    l.inembed[0] = l.onembed[0] = length;
    l.idist = l.odist = length;
    l.batch = rows;
    return l;
}

FftLayout gridrecGridLayout(int size, int grids) {
    FftLayout l;
    l.rank = 2;
    l.n[0] = l.n[1] = size;
    l.inembed[0] = l.inembed[1] = l.onembed[0] = l.onembed[1] = size;
    l.idist = l.odist = static_cast<long long>(size) * size;
    l.batch = grids;
    return l;
}

GridrecTables::GridrecTables(int device, const gridrec::Setup& s, std::string owner, cudaStream_t stream)
    : m_device(device), m_owner(std::move(owner)) {
    d_table = upload(m_device, s.table, m_owner + "'s kernel table", stream);
    d_deapodizeX = upload(m_device, s.deapodizeX, m_owner + "'s deapodisation", stream);
    d_deapodizeY = upload(m_device, s.deapodizeY, m_owner + "'s deapodisation", stream);
    d_binStart = upload(m_device, s.binStart, m_owner + "'s angle bins", stream);
    d_canonical = upload(m_device, s.canonical, m_owner + "'s canonical order", stream);
    d_reversed = upload(m_device, s.reversed, m_owner + "'s canonical order", stream);
    const std::vector<int> tiles = heavyFirstTiles(s.gridSize, s.gridSize);
    m_tiles = static_cast<int>(tiles.size());
    d_tiles = upload(m_device, tiles, m_owner + "'s tile order", stream);
    const std::vector<int> halfTiles = heavyFirstTiles(s.gridSize, s.gridSize / 2 + 1);
    m_halfTiles = static_cast<int>(halfTiles.size());
    d_halfTiles = upload(m_device, halfTiles, m_owner + "'s tile order", stream);
    uploadRowTables(s, stream);
}

void GridrecTables::uploadRowTables(const gridrec::Setup& s, cudaStream_t stream) {
    d_band = upload(m_device, s.band, m_owner + "'s band weights", stream);
    d_dirX = upload(m_device, s.dirX, m_owner + "'s view directions", stream);
    d_dirY = upload(m_device, s.dirY, m_owner + "'s view directions", stream);
    d_invX = upload(m_device, s.invX, m_owner + "'s view directions", stream);
    d_invY = upload(m_device, s.invY, m_owner + "'s view directions", stream);
}

void GridrecTables::uploadShifts(const gridrec::Setup& s, const Geometry& geometry, cudaStream_t stream) {
    // T / L: the phase kernel multiplies (a division per sample in double
    // cost it half its time).
    h_turns = s.phaseShifts(geometry);
    for (double& t : h_turns) t /= s.rowLength;
    if (d_turns.size() != h_turns.size()) d_turns = DeviceBuffer<double>(m_device, h_turns.size(), m_owner + "'s phase shifts");
    // Stream-ordered after the kernels already queued (they may still read
    // the old shifts); a pageable source is staged before the call returns.
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_turns.get(), h_turns.data(), h_turns.size() * sizeof(double),
                                    cudaMemcpyHostToDevice, stream));
}

PhaseLaunch GridrecTables::phase(const gridrec::Setup& s, const float* d_spectra, int pairs, float* d_samples) const {
    PhaseLaunch phase;
    phase.d_spectra = d_spectra;
    phase.d_canonical = d_canonical.get();
    phase.d_reversed = d_reversed.get();
    phase.d_turns = d_turns.get();
    phase.d_band = d_band.get();
    phase.projections = s.projections;
    phase.rowLength = s.rowLength;
    phase.lastSample = s.lastSample();
    phase.sampleStride = s.sampleStride();
    phase.pairs = pairs;
    phase.d_samples = d_samples;
    return phase;
}

GatherLaunch GridrecTables::gather(const gridrec::Setup& s, const float* d_samples, std::size_t pairSamples, int pairs,
                                   float* d_grid) const {
    GatherLaunch gather;
    gather.view = s.gatherView(d_samples);
    gather.view.table = d_table.get();
    gather.view.dirX = d_dirX.get();
    gather.view.dirY = d_dirY.get();
    gather.view.invX = d_invX.get();
    gather.view.invY = d_invY.get();
    gather.view.binStart = d_binStart.get();
    gather.pairSamples = pairSamples;
    gather.d_tiles = d_tiles.get();
    gather.tiles = m_tiles;
    gather.pairs = pairs;
    gather.columns = s.gridSize;
    gather.d_grid = d_grid;
    return gather;
}

void GridrecTables::useHalfGrid(const gridrec::Setup& s, GatherLaunch& gather) const {
    gather.d_tiles = d_halfTiles.get();
    gather.tiles = m_halfTiles;
    gather.pairs = 1;
    gather.columns = s.gridSize / 2 + 1;
}

CropLaunch GridrecTables::crop(const gridrec::Setup& s, const float* d_grid, int slices, float* d_out) const {
    CropLaunch crop;
    crop.d_grid = d_grid;
    crop.gridSize = s.gridSize;
    crop.shiftX = s.shiftX;
    crop.shiftY = s.shiftY;
    crop.d_deapodizeX = d_deapodizeX.get();
    crop.d_deapodizeY = d_deapodizeY.get();
    crop.regionWidth = s.width;
    crop.regionHeight = s.height;
    crop.slices = slices;
    crop.d_out = d_out;
    return crop;
}

std::size_t GridrecTables::bytes() const {
    return d_table.bytes() + d_deapodizeX.bytes() + d_deapodizeY.bytes() + d_band.bytes() + d_invX.bytes() +
           d_invY.bytes() + d_dirX.bytes() + d_dirY.bytes() + d_turns.bytes() + d_binStart.bytes() +
           d_canonical.bytes() + d_tiles.bytes() + d_halfTiles.bytes() + d_reversed.bytes();
}

} // namespace tomo::cuda
