// tomo::statedPixelSize: the pixel size a scan file states (the workstation's
// pixel size per dataset), in metres, from NXtomo / DXchange x_pixel_size in
// its units, or HTC2022's effectivePixelSizePost; 0 when none is stated.
#include "hdf5_builder.h"
#include "test_support.h"
#include "tomo/pixel_size.h"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

namespace tomo {
namespace {

using test::TempDir;

#if TOMO_WITH_HDF5
TEST(StatedPixelSize, XPixelSizeInItsUnits) {
    TempDir dir;
    const std::vector<float> data(2 * 2 * 3, 1.0f);
    test::H5Builder(dir / "nx.h5")
        .dataset("/entry/instrument/detector/data", {2, 2, 3}, data)
        .dataset("/entry/instrument/detector/x_pixel_size", {1}, std::vector<double>{6.5})
        .attribute("/entry/instrument/detector/x_pixel_size", "units", "um");
    EXPECT_DOUBLE_EQ(statedPixelSize(dir / "nx.h5"), 6.5e-6);

    test::H5Builder(dir / "dx.h5")
        .dataset("/exchange/data", {2, 2, 3}, data)
        .dataset("/measurement/instrument/detector/x_pixel_size", {1}, std::vector<double>{0.0013})
        .attribute("/measurement/instrument/detector/x_pixel_size", "units", "mm");
    EXPECT_DOUBLE_EQ(statedPixelSize(dir / "dx.h5"), 1.3e-6);

    // Without units: a value below 1e-3 is metres, a larger one micrometres.
    test::H5Builder(dir / "metres.h5")
        .dataset("/exchange/data", {2, 2, 3}, data)
        .dataset("/measurement/instrument/detector/x_pixel_size", {1}, std::vector<double>{2.5e-6});
    EXPECT_DOUBLE_EQ(statedPixelSize(dir / "metres.h5"), 2.5e-6);
    test::H5Builder(dir / "microns.h5")
        .dataset("/exchange/data", {2, 2, 3}, data)
        .dataset("/measurement/instrument/detector/x_pixel_size", {1}, std::vector<double>{0.65});
    EXPECT_DOUBLE_EQ(statedPixelSize(dir / "microns.h5"), 0.65e-6);

    // A unit it does not know, a size that is not positive: nothing stated.
    test::H5Builder(dir / "furlong.h5")
        .dataset("/exchange/data", {2, 2, 3}, data)
        .dataset("/measurement/instrument/detector/x_pixel_size", {1}, std::vector<double>{1.0})
        .attribute("/measurement/instrument/detector/x_pixel_size", "units", "furlong");
    EXPECT_EQ(statedPixelSize(dir / "furlong.h5"), 0.0);
    test::H5Builder(dir / "zero.h5")
        .dataset("/exchange/data", {2, 2, 3}, data)
        .dataset("/measurement/instrument/detector/x_pixel_size", {1}, std::vector<double>{0.0});
    EXPECT_EQ(statedPixelSize(dir / "zero.h5"), 0.0);
}

TEST(StatedPixelSize, NoneStatedOrNotHdf5) {
    TempDir dir;
    test::H5Builder(dir / "plain.h5").dataset("/exchange/data", {2, 2, 3}, std::vector<float>(12, 1.0f));
    EXPECT_EQ(statedPixelSize(dir / "plain.h5"), 0.0);
    std::ofstream(dir / "text.h5") << "not an HDF5 file\n";
    EXPECT_EQ(statedPixelSize(dir / "text.h5"), 0.0);
    EXPECT_EQ(statedPixelSize(dir / "missing.h5"), 0.0);
    EXPECT_EQ(statedPixelSize(dir.path()), 0.0); // a folder (of TIFFs)
}

TEST(StatedPixelSize, Htc2022EffectivePixelSize) {
    const std::filesystem::path htc = test::realData("helsinki_htc2022_fanbeam/htc2022_ta.h5");
    TOMO_REQUIRE_FILE(htc);
    // effectivePixelSizePost = 0.1483223173330444, distanceUnit = "mm" (attributes of /).
    EXPECT_DOUBLE_EQ(statedPixelSize(htc), 0.1483223173330444e-3);
    // The other real scans state none.
    const std::filesystem::path tooth = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(tooth);
    EXPECT_EQ(statedPixelSize(tooth), 0.0);
}
#endif

} // namespace
} // namespace tomo
