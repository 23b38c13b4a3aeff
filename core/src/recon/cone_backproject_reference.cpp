// Cone-beam "cpu-reference": the back-projection written as the formula
// reads (seed 002, Listing 1), in double.
#include "recon/cone_backproject.h"

#include <cmath>

namespace tomo::cone {

void backprojectReference(const FilteredProjections& in, const VolumeGrid& grid, double scale,
                          std::span<float> volume, WorkerPool& pool) {
    const int cols = in.columns, rows = in.rows;
    const std::size_t image = static_cast<std::size_t>(cols) * rows;
    // k and l are whole numbers kept in double: compared before conversion.
    auto at = [&](const float* img, double l, double k) {
        return k >= 0.0 && k < cols && l >= 0.0 && l < rows
                   ? double(img[static_cast<std::size_t>(l) * cols + static_cast<std::size_t>(k)])
                   : 0.0;
    };
    // One task per voxel line (j, k): every task writes its own line.
    pool.parallelFor(grid.ny * grid.nz, [&](int task, int) {
        const int j = task % grid.ny, k = task / grid.ny;
        const double y = grid.y(j), z = grid.z(k);
        float* out = volume.data() + (static_cast<std::size_t>(k) * grid.ny + j) * grid.nx;
        for (int i = 0; i < grid.nx; ++i) {
            const double x = grid.x(i);
            double sum = 0.0;
            for (std::size_t p = 0; p < in.views.size(); ++p) {
                const auto [uw, vw, w] = in.views[p].apply(x, y, z);
                if (!(w > 0.0)) continue;
                const double u = uw / w, v = vw / w;
                const double ku = std::floor(u), kv = std::floor(v);
                const double fu = u - ku, fv = v - kv;
                const float* img = in.data.data() + p * image;
                const double top = (1.0 - fu) * at(img, kv, ku) + fu * at(img, kv, ku + 1.0);
                const double bottom = (1.0 - fu) * at(img, kv + 1.0, ku) + fu * at(img, kv + 1.0, ku + 1.0);
                sum += ((1.0 - fv) * top + fv * bottom) / (w * w);
            }
            out[i] = static_cast<float>(scale * sum);
        }
    });
}

} // namespace tomo::cone
