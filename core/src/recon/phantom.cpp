// Analytic Shepp-Logan phantoms and their exact parallel projections.
//
// Phantom coordinates (X, Y, Z) span [-1, 1] with Y pointing up, as in the
// published tables; phantom radius R = radiusFraction * bins / 2 pixels. A
// slice pixel (x, y) of geometry.h (y grows downwards, row 0 on top) is the
// phantom point X = x / R, Y = -y / R, so the images show the phantom the
// usual way up. The ray of geometry.h at detector s, angle a is then
//   x cos a - y sin a = s - centre  <=>  X cos a + Y sin a = (s - centre) / R,
// the textbook Radon line (Kak & Slaney ch. 3), whose integral through an
// ellipse has the closed form used in ellipseIntegral().
#include "tomo/phantom.h"

#include "tomo/error.h"

#include <cmath>
#include <numbers>
#include <string>

namespace tomo {

namespace {

constexpr double kDeg = std::numbers::pi / 180.0;

/// The cross-section of `e` at height z as an ellipse scale factor: the
/// ellipsoid meets the plane Z = z in the ellipse with semi-axes a, b times
/// the returned factor (0: no intersection). c == 0 marks a 2D ellipse.
double crossSection(const Ellipsoid& e, double z) {
    if (e.c == 0.0) return 1.0;
    const double q = 1.0 - (z - e.z0) * (z - e.z0) / (e.c * e.c);
    return q > 0.0 ? std::sqrt(q) : 0.0;
}

/// Length of the line X cos a + Y sin a = t inside the ellipse (A, B, centre
/// (x0, y0), rotated by phi): 2 A B sqrt(r^2 - t'^2) / r^2 with
/// r^2 = A^2 cos^2(a - phi) + B^2 sin^2(a - phi), t' = t - (x0 cos a + y0 sin a).
double chord(double A, double B, double x0, double y0, double phi, double cosA, double sinA, double t) {
    const double ca = cosA * std::cos(phi) + sinA * std::sin(phi); // cos(a - phi)
    const double sa = sinA * std::cos(phi) - cosA * std::sin(phi); // sin(a - phi)
    const double r2 = A * A * ca * ca + B * B * sa * sa;
    const double tp = t - (x0 * cosA + y0 * sinA);
    const double d = r2 - tp * tp;
    return d > 0.0 ? 2.0 * A * B * std::sqrt(d) / r2 : 0.0;
}

void checkSpec(const PhantomSpec& spec) {
    if (spec.bins < 1) throw InvalidArgument("phantom: bins is " + std::to_string(spec.bins) + " (expected >= 1)");
    if (spec.rows < 1) throw InvalidArgument("phantom: rows is " + std::to_string(spec.rows) + " (expected >= 1)");
    if (!(spec.radiusFraction > 0.0) || !std::isfinite(spec.radiusFraction))
        throw InvalidArgument("phantom: radiusFraction must be a finite value > 0");
    if (!std::isfinite(spec.attenuationScale))
        throw InvalidArgument("phantom: attenuationScale must be finite");
}

double radiusPixels(const PhantomSpec& spec) { return spec.radiusFraction * spec.bins / 2.0; }

} // namespace

std::vector<Ellipsoid> sheppLogan2D() {
    // Toft's modified Shepp-Logan: density, a, b, (c), x0, y0, (z0), phi.
    return {
        {1.0, 0.69, 0.92, 0, 0.0, 0.0, 0, 0.0},
        {-0.8, 0.6624, 0.874, 0, 0.0, -0.0184, 0, 0.0},
        {-0.2, 0.11, 0.31, 0, 0.22, 0.0, 0, -18 * kDeg},
        {-0.2, 0.16, 0.41, 0, -0.22, 0.0, 0, 18 * kDeg},
        {0.1, 0.21, 0.25, 0, 0.0, 0.35, 0, 0.0},
        {0.1, 0.046, 0.046, 0, 0.0, 0.1, 0, 0.0},
        {0.1, 0.046, 0.046, 0, 0.0, -0.1, 0, 0.0},
        {0.1, 0.046, 0.023, 0, -0.08, -0.605, 0, 0.0},
        {0.1, 0.023, 0.023, 0, 0.0, -0.606, 0, 0.0},
        {0.1, 0.023, 0.046, 0, 0.06, -0.605, 0, 0.0},
    };
}

std::vector<Ellipsoid> sheppLogan3D() {
    // Kak & Slaney's 3D Shepp-Logan (Table 3.2 layout, as in Schabel's
    // phantom3d) with Toft's densities; rotations about x and y are dropped.
    return {
        {1.0, 0.69, 0.92, 0.81, 0.0, 0.0, 0.0, 0.0},
        {-0.8, 0.6624, 0.874, 0.78, 0.0, -0.0184, 0.0, 0.0},
        {-0.2, 0.11, 0.31, 0.22, 0.22, 0.0, 0.0, -18 * kDeg},
        {-0.2, 0.16, 0.41, 0.28, -0.22, 0.0, 0.0, 18 * kDeg},
        {0.1, 0.21, 0.25, 0.41, 0.0, 0.35, -0.15, 0.0},
        {0.1, 0.046, 0.046, 0.05, 0.0, 0.1, 0.25, 0.0},
        {0.1, 0.046, 0.046, 0.05, 0.0, -0.1, 0.25, 0.0},
        {0.1, 0.046, 0.023, 0.05, -0.08, -0.605, 0.0, 0.0},
        {0.1, 0.023, 0.023, 0.02, 0.0, -0.606, 0.0, 0.0},
        {0.1, 0.023, 0.046, 0.02, 0.06, -0.605, 0.0, 0.0},
    };
}

double phantomRowZ(const PhantomSpec& spec, int row) {
    if (spec.rows <= 1) return 0.0;
    return -0.9 + 1.8 * row / (spec.rows - 1);
}

ImageStack projectPhantom(const PhantomSpec& spec, const std::vector<double>& angles, int subsamples) {
    checkSpec(spec);
    if (angles.empty()) throw InvalidArgument("phantom: angles is empty");
    if (subsamples < 1) throw InvalidArgument("phantom: subsamples is " + std::to_string(subsamples) + " (expected >= 1)");
    const double R = radiusPixels(spec);
    const double centre = (spec.bins - 1) / 2.0;
    const int nAngles = static_cast<int>(angles.size());
    ImageStack out(spec.bins, nAngles, spec.rows);
    for (int row = 0; row < spec.rows; ++row) {
        const double z = phantomRowZ(spec, row);
        for (int p = 0; p < nAngles; ++p) {
            const double cosA = std::cos(angles[p]);
            const double sinA = std::sin(angles[p]);
            float* line = out.data.data() + (static_cast<std::size_t>(row) * nAngles + p) * spec.bins;
            for (int k = 0; k < spec.bins; ++k) {
                double sum = 0.0;
                for (int sub = 0; sub < subsamples; ++sub) {
                    const double s = k + (sub + 0.5) / subsamples - 0.5;
                    const double t = (s - centre) / R;
                    for (const Ellipsoid& e : spec.shapes) {
                        const double f = crossSection(e, z);
                        if (f > 0.0) sum += e.density * chord(e.a * f, e.b * f, e.x0, e.y0, e.phi, cosA, sinA, t);
                    }
                }
                // chord in phantom units -> pixels (times R), density -> attenuation per pixel
                line[k] = static_cast<float>(sum / subsamples * R * spec.attenuationScale);
            }
        }
    }
    return out;
}

Image rasterizePhantom(const PhantomSpec& spec, int row, int width, int height, int subsamples) {
    checkSpec(spec);
    if (width < 1 || height < 1)
        throw InvalidArgument("phantom: image size " + std::to_string(width) + "x" + std::to_string(height) +
                              " (expected >= 1x1)");
    if (subsamples < 1) throw InvalidArgument("phantom: subsamples is " + std::to_string(subsamples) + " (expected >= 1)");
    if (row < 0 || row >= spec.rows)
        throw InvalidArgument("phantom: row " + std::to_string(row) + " (expected 0 to " + std::to_string(spec.rows - 1) + ")");
    const double R = radiusPixels(spec);
    const double z = phantomRowZ(spec, row);
    Image img(width, height);
    for (int iy = 0; iy < height; ++iy) {
        for (int ix = 0; ix < width; ++ix) {
            double sum = 0.0;
            for (int sy = 0; sy < subsamples; ++sy) {
                const double y = iy - (height - 1) / 2.0 + (sy + 0.5) / subsamples - 0.5;
                for (int sx = 0; sx < subsamples; ++sx) {
                    const double x = ix - (width - 1) / 2.0 + (sx + 0.5) / subsamples - 0.5;
                    const double X = x / R;
                    const double Y = -y / R;
                    for (const Ellipsoid& e : spec.shapes) {
                        const double f = crossSection(e, z);
                        if (f <= 0.0) continue;
                        const double dx = X - e.x0, dy = Y - e.y0;
                        const double u = (dx * std::cos(e.phi) + dy * std::sin(e.phi)) / (e.a * f);
                        const double v = (-dx * std::sin(e.phi) + dy * std::cos(e.phi)) / (e.b * f);
                        if (u * u + v * v <= 1.0) sum += e.density;
                    }
                }
            }
            img.at(ix, iy) = static_cast<float>(sum / (subsamples * subsamples) * spec.attenuationScale);
        }
    }
    return img;
}

std::vector<double> uniformAngles(int n, double rangeRadians) {
    if (n < 1) throw InvalidArgument("uniform angles: n is " + std::to_string(n) + " (expected >= 1)");
    if (!std::isfinite(rangeRadians)) throw InvalidArgument("uniform angles: range is not finite");
    std::vector<double> a(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) a[i] = rangeRadians * i / n;
    return a;
}

} // namespace tomo
