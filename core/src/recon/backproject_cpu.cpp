// "cpu": the fast CPU back-projection (seed 000 §6.10, seeds 001/002).
//
// Layout: setSinograms re-packs each pass of S = slicesPerPass slices as
// [projection][u][entry], u = bin + 1 with zero bins at u = 0 and
// u = bins + 1; an entry holds the S slices' values and, for linear, their
// differences to the next bin (seed 000 §6.4, "advanced caching"), so one
// position serves S slices, the value is v + w * d, and clamping u to
// [0, bins + 1] gives geometry.h's zero extension without a branch.
//
// Work: one task = a tile of 64 columns x (64 / S) rows of one pass; its
// float accumulators (16 KiB) stay in L1. Projections go in groups of 8:
// for each tile row, the positions of the group are computed in one
// vectorised loop (64 pixels x 8 projections), then each pixel sums the
// group's 8 values in registers (S lanes) and adds them to its accumulator
// once. Accumulation is in float.
//
// ISA: the tile function is compiled for x86-64-v4 (AVX-512), v3 (AVX2) and
// baseline x86-64, and the loader picks the best for the running CPU
// (target_clones); no -march flag is needed.
#include "tomo/cpu_backends.h"

#include "cpu_clones.h"
#include "recon/cpu_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace tomo {

namespace {

constexpr const char* kName = "cpu";
constexpr int kSlicesPerPass[] = {1, 2, 4};
constexpr int kTileWidth = 64;
constexpr int kTilePixels = 64 * 64; // tile rows = kTilePixels / kTileWidth / S
constexpr int kProjectionGroup = 8;

/// Everything one tile needs; positions in padded bins (u = s + 1).
struct TileJob {
    const float* sino;      // this pass, packed (see FastPlan::prepare)
    std::size_t rowStride;  // floats per projection
    int projections;
    int bins;
    const double* cosA;
    const double* sinA;
    const double* uAxis;    // axis_p + 1 (+ 0.5 for nearest: floor then rounds)
    double x0, y0;          // centre coordinates of the tile's first pixel
    int width, height;      // tile size in pixels
    float* acc;             // [row][column][S]
};

/// S floats handled as one value (one SIMD register for S = 2, 4). Spelled
/// out per S: GCC drops vector_size on a type that depends on a template
/// parameter.
template <int S>
struct Lanes;
template <>
struct Lanes<1> {
    using type = float;
};
template <>
struct Lanes<2> {
    typedef float type __attribute__((vector_size(8)));
};
template <>
struct Lanes<4> {
    typedef float type __attribute__((vector_size(16)));
};
template <int S>
using Vec = typename Lanes<S>::type;

template <int S>
[[gnu::always_inline]] inline Vec<S> load(const float* p) {
    static_assert(sizeof(Vec<S>) == S * sizeof(float));
    Vec<S> v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <int S>
[[gnu::always_inline]] inline void store(float* p, Vec<S> v) {
    std::memcpy(p, &v, sizeof v);
}

/// Padded positions u = start + ix * c of one tile row, clamped to
/// [0, uMax]: entry offset (floor(u) * entry) and weight u - floor(u),
/// vectorised over the pixels.
template <bool Linear>
[[gnu::always_inline]] inline void positions(double start, double c, double uMax, int entry,
                                             int* __restrict index, float* __restrict weight) {
    if constexpr (Linear) {
        // Float relative to the row start (|u| < 65, error < 1e-5 bins):
        // twice the lanes of double; linear is continuous in u, so the image
        // moves by ~1e-7 relative. A start further out than the tile width
        // clamps every pixel the same way; bounding it keeps ub an int.
        start = std::clamp(start, -2.0 * kTileWidth, uMax + 2.0 * kTileWidth);
        const double ub = std::floor(start);
        const float f = static_cast<float>(start - ub);
        const float cf = static_cast<float>(c);
        const float lo = static_cast<float>(-ub);
        const float hi = static_cast<float>(uMax - ub);
        const int base = static_cast<int>(ub);
        for (int ix = 0; ix < kTileWidth; ++ix) {
            const float u = std::min(std::max(f + static_cast<float>(ix) * cf, lo), hi);
            int k = static_cast<int>(u);    // truncation, and one down for negative u:
            k -= static_cast<float>(k) > u; // std::floor needs -fno-trapping-math to vectorise
            index[ix] = (base + k) * entry;
            weight[ix] = u - static_cast<float>(k);
        }
    } else {
        // Double: nearest jumps at half-integers, so positions must match
        // cpu-reference's (~1e-13 apart) to pick the same bins.
        for (int ix = 0; ix < kTileWidth; ++ix) {
            const double u = std::min(std::max(start + ix * c, 0.0), uMax); // >= 0: truncation is floor
            index[ix] = static_cast<int>(u) * entry;
        }
        (void)weight;
    }
}

template <int S, bool Linear>
TOMO_CPU_CLONES void backprojectTile(const TileJob& t) {
    // Packed entries per padded bin: value (S floats), and for linear the
    // difference to the next bin (S floats), so value + w * difference.
    constexpr int kEntry = Linear ? 2 * S : S;
    alignas(64) int index[kProjectionGroup][kTileWidth];
    alignas(64) float weight[kProjectionGroup][kTileWidth];
    std::fill(t.acc, t.acc + static_cast<std::size_t>(t.width) * t.height * S, 0.0f);
    const double uMax = t.bins + 1.0;
    for (int p0 = 0; p0 < t.projections; p0 += kProjectionGroup) {
        const int group = std::min(kProjectionGroup, t.projections - p0);
        for (int iy = 0; iy < t.height; ++iy) {
            const double y = t.y0 + iy;
            for (int g = 0; g < group; ++g) {
                const int p = p0 + g;
                const double start = t.x0 * t.cosA[p] - y * t.sinA[p] + t.uAxis[p];
                positions<Linear>(start, t.cosA[p], uMax, kEntry, index[g], weight[g]);
            }
            // Values: S slices per load, summed over the group, then added once.
            float* acc = t.acc + static_cast<std::size_t>(iy) * t.width * S;
            for (int ix = 0; ix < t.width; ++ix) {
                if constexpr (Linear && S < 4) {
                    // (values, differences) as one 2S-lane load times (1.., w..):
                    // fewer instructions than two S-lane loads for S = 1, 2.
                    Vec<2 * S> sum{};
                    for (int g = 0; g < group; ++g) {
                        Vec<2 * S> w{};
                        for (int j = 0; j < S; ++j) {
                            w[j] = 1.0f;
                            w[S + j] = weight[g][ix];
                        }
                        sum += load<2 * S>(t.sino + (p0 + g) * t.rowStride + index[g][ix]) * w;
                    }
                    for (int j = 0; j < S; ++j) acc[ix * S + j] += sum[j] + sum[S + j];
                } else {
                    Vec<S> sum{};
                    for (int g = 0; g < group; ++g) {
                        const float* e = t.sino + (p0 + g) * t.rowStride + index[g][ix];
                        if constexpr (Linear)
                            sum += load<S>(e) + weight[g][ix] * load<S>(e + S);
                        else
                            sum += load<S>(e);
                    }
                    store<S>(acc + ix * S, load<S>(acc + ix * S) + sum);
                }
            }
        }
    }
}

using TileFunction = void (*)(const TileJob&);

template <int S>
TileFunction tileFunction(Interpolation interpolation) {
    return interpolation == Interpolation::Linear ? &backprojectTile<S, true> : &backprojectTile<S, false>;
}

class FastPlan final : public cpu::CpuPlan {
public:
    // Filtered stack + the packed copy (values, and differences for linear).
    FastPlan(const ReconGeometry& geometry, const ReconOptions& options)
        : CpuPlan(geometry, options, options.interpolation == Interpolation::Linear ? 3 : 2) {}

private:
    int passes() const { return (sliceCount() + m_options.slicesPerPass - 1) / m_options.slicesPerPass; }
    /// Floats per padded bin: S values, plus S differences for linear.
    int entry() const {
        return m_options.slicesPerPass * (m_options.interpolation == Interpolation::Linear ? 2 : 1);
    }
    /// Padded bins u = 0 .. bins + 1 (u = bin + 1; 0 and bins + 1 are zeros).
    std::size_t rowStride() const { return static_cast<std::size_t>(m_geometry.geometry.bins + 2) * entry(); }
    std::size_t passStride() const { return rowStride() * m_geometry.geometry.projections(); }

    void prepare() override {
        const int S = m_options.slicesPerPass;
        const int bins = m_geometry.geometry.bins;
        const int projections = m_geometry.geometry.projections();
        const bool linear = m_options.interpolation == Interpolation::Linear;
        m_packed.assign(passStride() * passes(), 0.0f); // slices past the last stay zero
        const std::vector<float>& src = filtered();
        for (int slice = 0; slice < sliceCount(); ++slice) {
            float* pass = m_packed.data() + passStride() * (slice / S);
            const int j = slice % S;
            for (int p = 0; p < projections; ++p) {
                const float* in = src.data() + (static_cast<std::size_t>(slice) * projections + p) * bins;
                float* out = pass + rowStride() * p;
                for (int u = 0; u <= bins + 1; ++u) {
                    const float value = u >= 1 && u <= bins ? in[u - 1] : 0.0f;
                    const float next = u + 1 <= bins ? in[u] : 0.0f; // value at u + 1
                    float* e = out + static_cast<std::size_t>(u) * entry();
                    e[j] = value;
                    if (linear) e[S + j] = next - value;
                }
            }
        }
    }

    std::size_t extraBytes() const override { return m_packed.capacity() * sizeof(float); }

    void backprojectSlices(std::span<float> slices) override {
        const int S = m_options.slicesPerPass;
        const Geometry& g = m_geometry.geometry;
        const Region region = m_geometry.region;
        const int projections = g.projections();
        const bool linear = m_options.interpolation == Interpolation::Linear;
        std::vector<double> cosA(projections), sinA(projections), uAxis(projections);
        for (int p = 0; p < projections; ++p) {
            cosA[p] = std::cos(g.angles[p]);
            sinA[p] = std::sin(g.angles[p]);
            uAxis[p] = g.axisAt(p) + 1.0 + (linear ? 0.0 : 0.5);
        }
        const TileFunction tile = S == 4 ? tileFunction<4>(m_options.interpolation)
                                  : S == 2 ? tileFunction<2>(m_options.interpolation)
                                           : tileFunction<1>(m_options.interpolation);

        const int tileHeight = kTilePixels / kTileWidth / S;
        const int tilesX = (region.width + kTileWidth - 1) / kTileWidth;
        const int tilesY = (region.height + tileHeight - 1) / tileHeight;
        const int tilesPerPass = tilesX * tilesY;
        std::vector<std::vector<float>> accumulators(pool().threads(),
                                                     std::vector<float>(static_cast<std::size_t>(kTilePixels)));
        const double cx = (m_geometry.sliceWidth - 1) / 2.0;
        const double cy = (m_geometry.sliceHeight - 1) / 2.0;

        pool().parallelFor(passes() * tilesPerPass, [&](int task, int thread) {
            const int pass = task / tilesPerPass;
            const int tx = (task % tilesPerPass) % tilesX * kTileWidth;
            const int ty = (task % tilesPerPass) / tilesX * tileHeight;
            TileJob job{};
            job.sino = m_packed.data() + passStride() * pass;
            job.rowStride = rowStride();
            job.projections = projections;
            job.bins = g.bins;
            job.cosA = cosA.data();
            job.sinA = sinA.data();
            job.uAxis = uAxis.data();
            job.x0 = region.x + tx - cx;
            job.y0 = region.y + ty - cy;
            job.width = std::min(kTileWidth, region.width - tx);
            job.height = std::min(tileHeight, region.height - ty);
            job.acc = accumulators[thread].data();
            tile(job);

            const int slicesHere = std::min(S, sliceCount() - pass * S);
            for (int j = 0; j < slicesHere; ++j) {
                float* out = slices.data() + static_cast<std::size_t>(pass * S + j) * region.pixels();
                for (int iy = 0; iy < job.height; ++iy)
                    for (int ix = 0; ix < job.width; ++ix)
                        out[static_cast<std::size_t>(ty + iy) * region.width + tx + ix] =
                            job.acc[(static_cast<std::size_t>(iy) * job.width + ix) * S + j];
            }
        });
    }

    std::vector<float> m_packed; // per pass: [projection][u][S]
};

} // namespace

std::unique_ptr<Backend> makeCpuBackend() {
    return std::make_unique<cpu::CpuBackend<FastPlan>>(
        kName,
        "CPU, threads + SIMD, cache-blocked tiles, 1/2/4 slices per pass (float accumulation)",
        kSlicesPerPass, &makeCpuProjector, &makeFourierCpuProjector);
}

} // namespace tomo
