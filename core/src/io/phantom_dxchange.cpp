// writePhantomDXchange: the exact phantom projections turned into a
// measured-looking uint16 scan (flats, darks, Poisson noise) in DXchange.
#include "tomo/error.h"
#include "tomo/phantom.h"
#include "tomo/scan_writer.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>

namespace tomo {

namespace {

void validate(const std::filesystem::path& path, const std::vector<double>& angles, const ScanSimulation& sim) {
    const std::string what = "phantom scan " + path.string() + ": ";
    if (angles.empty()) throw InvalidArgument(what + "no angles; expected at least one");
    for (double a : angles)
        if (!std::isfinite(a)) throw InvalidArgument(what + "an angle is not finite");
    if (sim.flats < 0 || sim.darks < 0)
        throw InvalidArgument(what + "flats = " + std::to_string(sim.flats) + ", darks = " +
                              std::to_string(sim.darks) + "; expected counts >= 0");
    if (!std::isfinite(sim.flatCounts) || !std::isfinite(sim.darkCounts) || sim.flatCounts <= 0.0 ||
        sim.darkCounts < 0.0)
        throw InvalidArgument(what + "flatCounts = " + std::to_string(sim.flatCounts) + ", darkCounts = " +
                              std::to_string(sim.darkCounts) + "; expected flatCounts > 0 and darkCounts >= 0");
    // The brightest pixel is flat + dark; with noise, 6 standard deviations
    // above it must still fit, so clipping at 65535 never matters.
    const double mean = sim.flatCounts + sim.darkCounts;
    const double peak = mean + (sim.poissonNoise ? 6.0 * std::sqrt(mean) : 0.0);
    if (peak > 65535.0)
        throw InvalidArgument(what + "flatCounts + darkCounts" + (sim.poissonNoise ? " + 6 sigma of noise" : "") +
                              " = " + std::to_string(peak) + " overflows uint16 (65535)");
}

#if TOMO_WITH_HDF5
/// Counts with mean `mean`: Poisson-distributed or rounded.
class CountSource {
public:
    explicit CountSource(const ScanSimulation& sim) : m_noise(sim.poissonNoise), m_rng(sim.seed) {}

    std::uint16_t operator()(double mean) {
        double value = mean;
        if (m_noise) value = mean > 0.0 ? static_cast<double>(m_poisson(m_rng, Poisson::param_type(mean))) : 0.0;
        return static_cast<std::uint16_t>(std::clamp(std::round(value), 0.0, 65535.0));
    }

private:
    using Poisson = std::poisson_distribution<long>;
    bool m_noise;
    std::mt19937_64 m_rng;
    Poisson m_poisson;
};

/// The scan's counts, flats and darks, [image][row][column].
struct SimulatedScan {
    ScanLayout layout;
    std::vector<std::uint16_t> data, flat, dark;
    std::vector<double> thetaDegrees;
};

SimulatedScan simulateScan(const PhantomSpec& spec, const std::vector<double>& angles, const ScanSimulation& sim) {
    const ImageStack lineIntegrals = projectPhantom(spec, angles); // [row][angle][bin]
    SimulatedScan scan;
    ScanLayout& l = scan.layout;
    l.projections = lineIntegrals.height;
    l.rows = lineIntegrals.depth;
    l.columns = lineIntegrals.width;
    l.flats = sim.flats;
    l.darks = sim.darks;
    const std::size_t image = static_cast<std::size_t>(l.rows) * static_cast<std::size_t>(l.columns);
    CountSource counts(sim);

    scan.data.resize(image * static_cast<std::size_t>(l.projections));
    for (int a = 0; a < l.projections; ++a)
        for (int r = 0; r < l.rows; ++r)
            for (int c = 0; c < l.columns; ++c) {
                const float p = lineIntegrals.data[(static_cast<std::size_t>(r) * l.projections + a) *
                                                       static_cast<std::size_t>(l.columns) +
                                                   static_cast<std::size_t>(c)];
                scan.data[static_cast<std::size_t>(a) * image + static_cast<std::size_t>(r) * l.columns + c] =
                    counts(sim.flatCounts * std::exp(-static_cast<double>(p)) + sim.darkCounts);
            }
    scan.flat.resize(image * static_cast<std::size_t>(l.flats));
    for (auto& v : scan.flat) v = counts(sim.flatCounts + sim.darkCounts);
    scan.dark.resize(image * static_cast<std::size_t>(l.darks));
    for (auto& v : scan.dark) v = counts(sim.darkCounts);

    scan.thetaDegrees.reserve(angles.size());
    for (double a : angles) scan.thetaDegrees.push_back(a * 180.0 / std::numbers::pi);
    return scan;
}
#endif

} // namespace

void writePhantomDXchange(const std::filesystem::path& path, const PhantomSpec& spec,
                          const std::vector<double>& angles, const ScanSimulation& sim) {
    validate(path, angles, sim);
#if TOMO_WITH_HDF5
    SimulatedScan scan = simulateScan(spec, angles, sim);
    // A generated file: replacing an older one is what the caller wants.
    auto writer = createDXchangeScanWriter(path, scan.layout, std::move(scan.thetaDegrees), /*overwrite=*/true);
    writer->writeProjections(0, scan.layout.projections, scan.data);
    writer->writeFlats(scan.flat);
    writer->writeDarks(scan.dark);
    writer->commit();
#else
    (void)spec;
    throw InvalidArgument(path.string() + ": writing a DXchange file needs HDF5 support, which this build lacks");
#endif
}

#if !TOMO_WITH_HDF5
std::unique_ptr<ScanWriter> createDXchangeScanWriter(const std::filesystem::path& target, const ScanLayout&,
                                                     std::vector<double>, bool) {
    throw InvalidArgument(target.string() + ": writing a DXchange file needs HDF5 support, which this build lacks");
}
#endif

} // namespace tomo
