// The divergent-beam pair's operator on the GPU (makeFanProjector,
// makeConeProjector with a GPU; the definition and the CPU twin:
// core/src/recon/projector_fan.cpp) for the CUDA pair (projector_pair.cpp):
// one lane, the whole volume.
//
//   forward A: one thread per ray, Joseph's samples (recon/divergent_ray.h)
//   back A^T:  the same rays, their samples added into the volume (atomics)
//   SIRT's step: A^T r into a volume of its own, then x = clamp(x + s V A^T r)
//   FBP start: FDK on the GPU (fdk.h; the data cross the bus there and back)
//
// Memory (bytesFor): the views' frames and one volume (the step's A^T r).
#pragma once

#include "cuda_resources.h"
#include "divergent_projector_kernels.h"
#include "group_operator.h"

#include "tomo/cone_geometry.h"

#include <cstddef>
#include <string>

namespace tomo::cuda {

class DivergentOperator final : public GroupOperator {
public:
    /// Throws OutOfMemory naming its buffers, DeviceError.
    DivergentOperator(int device, const ConeGeometry& geometry, const VolumeGrid& grid, cudaStream_t stream);

    static std::size_t bytesFor(const ConeGeometry& geometry, const VolumeGrid& grid);
    std::size_t bytes() const override { return d_views.bytes() + d_back.bytes(); }
    std::string kind() const override;
    float minWeightSum() const override;

    void forwardGroup(const float* d_image, int lanes, int valid, float* d_sinogram) override;
    void residualGroup(const float* d_image, const float* d_data, const float* d_rowWeights, int lanes, int valid,
                       float* d_residual, double* d_partial) override;
    int residualBlocks() const override { return divergentForwardBlocks(); }
    void backGroup(const float* d_sinogram, int lanes, int valid, float* d_image) override;
    void stepGroup(const float* d_residual, int lanes, int valid, const SliceScalars& steps,
                   const float* d_columnWeights, float lower, float upper, float* d_image) override;
    /// FDK of the group's data (throws as reconstructFdk, e.g. for a short scan).
    void filteredBackprojection(const float* d_sinogram, int lanes, int valid, float* d_image) override;
    /// Throws InvalidArgument: the rays come from the projection matrices.
    void setAxis(const Geometry& geometry) override;

private:
    std::size_t voxels() const { return m_grid.voxels(); }
    std::size_t values() const;

    int m_device = 0;
    cudaStream_t m_stream = nullptr;
    ConeGeometry m_cone;
    VolumeGrid m_grid;
    DivergentRays m_rays;
    DeviceBuffer<divergent::View> d_views;
    DeviceBuffer<float> d_back; ///< the step's A^T r
};

} // namespace tomo::cuda
