#include "divergent_projector.h"

#include "recon/divergent_setup.h"

#include "tomo/error.h"
#include "tomo/fdk.h"
#include "tomo/projector.h"

#include <vector>

namespace tomo::cuda {

namespace {

void requireOneLane(int lanes, int valid) {
    if (lanes != 1 || valid != 1)
        throw InvalidArgument("divergent-beam projector: a vector holds one volume (got a group of " +
                              std::to_string(lanes) + " lanes)");
}

} // namespace

DivergentOperator::DivergentOperator(int device, const ConeGeometry& geometry, const VolumeGrid& grid,
                                     cudaStream_t stream)
    : m_device(device), m_stream(stream), m_cone(geometry), m_grid(grid) {
    const std::vector<divergent::View> views = divergentViews(geometry, grid);
    d_views = DeviceBuffer<divergent::View>(m_device, views.size(), "the divergent-beam projector's views");
    copyToDeviceNow(d_views.get(), views.data(), views.size() * sizeof(divergent::View), m_stream);
    d_back = DeviceBuffer<float>(m_device, voxels(),
                                 "the divergent-beam projector's back-projection (" + std::to_string(grid.nx) + "x" +
                                     std::to_string(grid.ny) + "x" + std::to_string(grid.nz) + " voxels)");
    m_rays.d_views = d_views.get();
    m_rays.views = geometry.viewCount();
    m_rays.columns = geometry.columns;
    m_rays.rows = geometry.rows;
    m_rays.volume = divergentVolume(geometry, grid);
}

std::size_t DivergentOperator::bytesFor(const ConeGeometry& geometry, const VolumeGrid& grid) {
    return geometry.views.size() * sizeof(divergent::View) + grid.voxels() * sizeof(float);
}

std::string DivergentOperator::kind() const { return divergentPairKind(m_cone); }

float DivergentOperator::minWeightSum() const { return static_cast<float>(kMinWeightSum); }

std::size_t DivergentOperator::values() const {
    return static_cast<std::size_t>(m_cone.viewCount()) * m_cone.rows * m_cone.columns;
}

void DivergentOperator::forwardGroup(const float* d_image, int lanes, int valid, float* d_sinogram) {
    requireOneLane(lanes, valid);
    launchDivergentForward(m_rays, d_image, d_sinogram, nullptr, nullptr, nullptr, m_stream);
}

void DivergentOperator::residualGroup(const float* d_image, const float* d_data, const float* d_rowWeights,
                                      int lanes, int valid, float* d_residual, double* d_partial) {
    requireOneLane(lanes, valid);
    launchDivergentForward(m_rays, d_image, d_residual, d_data, d_rowWeights, d_partial, m_stream);
}

void DivergentOperator::backGroup(const float* d_sinogram, int lanes, int valid, float* d_image) {
    requireOneLane(lanes, valid);
    TOMO_CUDA_CHECK(cudaMemsetAsync(d_image, 0, voxels() * sizeof(float), m_stream));
    launchDivergentBack(m_rays, d_sinogram, d_image, m_stream);
}

void DivergentOperator::stepGroup(const float* d_residual, int lanes, int valid, const SliceScalars& steps,
                                  const float* d_columnWeights, float lower, float upper, float* d_image) {
    backGroup(d_residual, lanes, valid, d_back.get());
    launchDivergentStep(d_back.get(), voxels(), steps.v[0], d_columnWeights, lower, upper, d_image, m_stream);
}

void DivergentOperator::filteredBackprojection(const float* d_sinogram, int lanes, int valid, float* d_image) {
    requireOneLane(lanes, valid);
    std::vector<float> data(values());
    TOMO_CUDA_CHECK(cudaMemcpyAsync(data.data(), d_sinogram, data.size() * sizeof(float), cudaMemcpyDeviceToHost,
                                    m_stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    FdkOptions fdk;
    fdk.backprojector = ConeBackprojector::Cuda;
    fdk.device = m_device;
    const ImageStack volume = reconstructFdk(m_cone, data, m_grid, fdk);
    copyToDeviceNow(d_image, volume.data.data(), volume.data.size() * sizeof(float), m_stream);
}

void DivergentOperator::setAxis(const Geometry&) { refuseDivergentAxis(m_cone); }

} // namespace tomo::cuda
