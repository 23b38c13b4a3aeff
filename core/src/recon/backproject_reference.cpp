// "cpu-reference": the back-projection written as the formula reads, in
// double, the oracle every other strategy is tested against.
//
// For pixel (x, y) (centres per geometry.h) and projection p:
//   s = x cos(a_p) - y sin(a_p) + axis + offset_p
//   nearest: k = floor(s + 0.5); value = row_p[k] if 0 <= k < bins, else 0
//   linear:  k = floor(s), w = s - k; value = (1 - w) row_p[k] + w row_p[k + 1]
//            with row_p[-1] = row_p[bins] = 0 (the row extended with zeros)
// and the pixel is the sum of the values over p (the rows are already
// filtered and multiplied by the angular weights).
#include "tomo/cpu_backends.h"

#include "recon/cpu_plan.h"

#include <cmath>
#include <vector>

namespace tomo {

namespace {

constexpr const char* kName = "cpu-reference";
constexpr int kSlicesPerPass[] = {1};

class ReferencePlan final : public cpu::CpuPlan {
public:
    ReferencePlan(const ReconGeometry& geometry, const ReconOptions& options)
        : CpuPlan(geometry, options, 1) {} // reads the filtered stack in place

private:
    void backprojectSlices(std::span<float> slices) override {
        const Geometry& g = m_geometry.geometry;
        const Region region = m_geometry.region;
        const int projections = g.projections();
        const int bins = g.bins;
        std::vector<double> cosA(projections), sinA(projections), axisA(projections);
        for (int p = 0; p < projections; ++p) {
            cosA[p] = std::cos(g.angles[p]);
            sinA[p] = std::sin(g.angles[p]);
            axisA[p] = g.axisAt(p);
        }
        const bool linear = m_options.interpolation == Interpolation::Linear;
        const double cx = (m_geometry.sliceWidth - 1) / 2.0;
        const double cy = (m_geometry.sliceHeight - 1) / 2.0;
        const std::vector<float>& sino = filtered();
        // k is a whole number kept in double: compared before any conversion,
        // so an axis far off the detector reads zeros instead of overflowing.
        auto at = [&](const float* row, double k) {
            return k >= 0.0 && k < bins ? double(row[static_cast<std::size_t>(k)]) : 0.0;
        };

        // One task per output row of one slice: every task writes its own row.
        pool().parallelFor(sliceCount() * region.height, [&](int task, int) {
            const int slice = task / region.height;
            const int iy = task % region.height;
            const double y = region.y + iy - cy;
            const float* sliceSino = sino.data() + static_cast<std::size_t>(slice) * projections * bins;
            float* out = slices.data() + (static_cast<std::size_t>(slice) * region.height + iy) * region.width;
            for (int ix = 0; ix < region.width; ++ix) {
                const double x = region.x + ix - cx;
                double sum = 0.0;
                for (int p = 0; p < projections; ++p) {
                    const float* row = sliceSino + static_cast<std::size_t>(p) * bins;
                    const double s = x * cosA[p] - y * sinA[p] + axisA[p];
                    if (linear) {
                        const double k = std::floor(s);
                        const double w = s - k;
                        sum += (1.0 - w) * at(row, k) + w * at(row, k + 1.0);
                    } else {
                        sum += at(row, std::floor(s + 0.5));
                    }
                }
                out[ix] = static_cast<float>(sum);
            }
        });
    }
};

} // namespace

std::unique_ptr<Backend> makeCpuReferenceBackend() {
    return std::make_unique<cpu::CpuBackend<ReferencePlan>>(
        kName,
        "CPU, plain loops in double precision: the exact answer the other strategies are checked against",
        kSlicesPerPass, &makeReferenceProjector);
}

} // namespace tomo
