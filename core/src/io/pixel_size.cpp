#include "tomo/pixel_size.h"

#include "io/readers.h"
#if TOMO_WITH_HDF5
#include "io/hdf5/h5_util.h"
#endif

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace tomo {
namespace {

#if TOMO_WITH_HDF5
/// Metres per `unit` (0: a unit this does not know).
double metresPer(std::string unit) {
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
    if (unit == "m" || unit == "metre" || unit == "meter" || unit == "metres" || unit == "meters") return 1.0;
    if (unit == "cm") return 1e-2;
    if (unit == "mm") return 1e-3;
    if (unit == "um" || unit == "\u00b5m" || unit == "micron" || unit == "microns" || unit == "micrometre") return 1e-6;
    if (unit == "nm") return 1e-9;
    return 0.0;
}

double statedInHdf5(const std::filesystem::path& path) {
    const h5::Session session;
    const h5::File file = h5::openReadOnly(path);
    for (const char* name : {"/entry/instrument/detector/x_pixel_size", "/measurement/instrument/detector/x_pixel_size"}) {
        if (!h5::exists(file.get(), name)) continue;
        const h5::Array size(file.get(), path, name);
        if (size.dims().size() > 1) continue;
        const std::vector<double> values = size.readAllDouble();
        if (values.size() != 1 || !(std::isfinite(values[0]) && values[0] > 0.0)) continue;
        const std::optional<std::string> units = size.stringAttribute("units");
        const double scale = units ? metresPer(*units) : values[0] < 1e-3 ? 1.0 : 1e-6;
        if (scale > 0.0) return values[0] * scale;
    }
    const h5::Handle<H5Oclose> root(H5Oopen(file.get(), "/", H5P_DEFAULT));
    if (!root.valid()) return 0.0;
    const std::optional<double> size = h5::attributeNumber(root.get(), "effectivePixelSizePost");
    if (!size || !(std::isfinite(*size) && *size > 0.0)) return 0.0;
    return *size * metresPer(h5::attributeText(root.get(), "distanceUnit").value_or("mm"));
}
#endif

} // namespace

double statedPixelSize(const std::filesystem::path& path) {
#if TOMO_WITH_HDF5
    try {
        const auto kind = detail::sniffFile(path);
        if (kind == detail::FileKind::Hdf5 || kind == detail::FileKind::MatlabHdf5) return statedInHdf5(path);
    } catch (const std::exception&) {
        // Unreadable or not a file (a TIFF folder): no stated size; opening says what is wrong.
    }
#else
    (void)path;
#endif
    return 0.0;
}

} // namespace tomo
