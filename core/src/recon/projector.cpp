#include "tomo/projector.h"

#include "tomo/error.h"

#include <cmath>
#include <string>

namespace tomo {

namespace {

const char* spaceName(Space s) { return s == Space::Image ? "image" : s == Space::Sinogram ? "sinogram" : "TV dual"; }

} // namespace

ProjectorPair::ProjectorPair(const ReconGeometry& geometry, const FilterOptions& filter, bool matched, int tvPlanes)
    : m_geometry(geometry), m_filter(filter), m_matched(matched), m_tvPlanes(tvPlanes) {
    m_geometry.region = Region{0, 0, geometry.sliceWidth, geometry.sliceHeight};
    m_geometry.validate();
    if (tvPlanes < 1 || geometry.sliceHeight % tvPlanes != 0)
        throw InvalidArgument("projector: " + std::to_string(tvPlanes) + " planes do not divide the " +
                              std::to_string(geometry.sliceHeight) + " rows of the slice");
}

void ProjectorPair::requireSpace(const BatchVector& v, Space space, const char* what) {
    if (v.space() != space)
        throw InvalidArgument(std::string(what) + ": expected a " + spaceName(space) + " vector, got a " +
                              spaceName(v.space()) + " vector");
}

void ProjectorPair::requireSameCount(const BatchVector& a, const BatchVector& b, const char* what) {
    if (a.count() != b.count())
        throw InvalidArgument(std::string(what) + ": vectors of " + std::to_string(a.count()) + " and " +
                              std::to_string(b.count()) + " slices (expected the same)");
}

void ProjectorPair::requirePerSlice(std::span<const double> values, const BatchVector& v, const char* what) {
    if (values.size() != static_cast<std::size_t>(v.count()))
        throw InvalidArgument(std::string(what) + ": " + std::to_string(values.size()) + " values (expected one per slice: " +
                              std::to_string(v.count()) + ")");
}

void ProjectorPair::requireTvVectors(std::initializer_list<const BatchVector*> images,
                                     std::initializer_list<const BatchVector*> duals, const char* what) {
    const BatchVector& first = **images.begin();
    for (const BatchVector* v : images) {
        requireSpace(*v, Space::Image, what);
        requireSameCount(*v, first, what);
    }
    for (const BatchVector* v : duals) {
        requireSpace(*v, Space::TvDual, what);
        requireSameCount(*v, first, what);
    }
}

std::size_t ProjectorPair::sliceValues(Space space) const {
    const std::size_t pixels =
        static_cast<std::size_t>(m_geometry.sliceWidth) * static_cast<std::size_t>(m_geometry.sliceHeight);
    switch (space) {
    case Space::Image: return pixels;
    case Space::TvDual: return static_cast<std::size_t>(tvAxes()) * pixels;
    case Space::Sinogram: break;
    }
    return static_cast<std::size_t>(m_geometry.geometry.projections()) * static_cast<std::size_t>(m_geometry.geometry.bins);
}

void ProjectorPair::requireCount(int count) const {
    if (count < 1 || count > maxSlices())
        throw InvalidArgument("projector vector of " + std::to_string(count) + " slices (expected 1 to " +
                              std::to_string(maxSlices()) + ")");
}

void ProjectorPair::requireHostValues(std::span<const float> values, const BatchVector& v, const char* what) const {
    const std::size_t expected = sliceValues(v.space()) * static_cast<std::size_t>(v.count());
    if (values.size() != expected)
        throw InvalidArgument(std::string(what) + ": " + std::to_string(values.size()) + " values (expected " +
                              std::to_string(v.count()) + " " + spaceName(v.space()) + "s of " +
                              std::to_string(sliceValues(v.space())) + " = " + std::to_string(expected) + ")");
}

Reprojection reproject(ProjectorPair& pair, std::span<const float> image, std::span<const float> measured) {
    const ReconGeometry& g = pair.geometry();
    const std::size_t pixels = static_cast<std::size_t>(g.sliceWidth) * g.sliceHeight;
    const std::size_t values = static_cast<std::size_t>(g.geometry.projections()) * g.geometry.bins;
    if (image.size() != pixels)
        throw InvalidArgument("reprojection: the image has " + std::to_string(image.size()) + " values (expected " +
                              std::to_string(g.sliceWidth) + " x " + std::to_string(g.sliceHeight) + ")");
    if (measured.size() != values)
        throw InvalidArgument("reprojection: the sinogram has " + std::to_string(measured.size()) +
                              " values (expected " + std::to_string(g.geometry.projections()) + " angles x " +
                              std::to_string(g.geometry.bins) + " bins)");
    auto x = pair.vector(Space::Image, 1);
    auto y = pair.vector(Space::Sinogram, 1);
    pair.upload(image, *x);
    pair.forward(*x, *y);
    Reprojection r;
    r.projected.resize(values);
    pair.download(*y, r.projected);
    r.difference.resize(values);
    double squares = 0.0, measuredSquares = 0.0;
    for (std::size_t i = 0; i < values; ++i) {
        r.difference[i] = measured[i] - r.projected[i];
        squares += double(r.difference[i]) * r.difference[i];
        measuredSquares += double(measured[i]) * measured[i];
    }
    r.norm = std::sqrt(squares);
    r.relativeNorm = measuredSquares > 0.0 ? r.norm / std::sqrt(measuredSquares) : 0.0;
    return r;
}

} // namespace tomo
