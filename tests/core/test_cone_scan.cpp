// Fan/cone-beam scans from files: the geometry a file declares or a
// geometry file gives, and the HTC2022 fan-beam scans against the
// provider's own reconstruction.
#include "tomo/cone_scan.h"
#include "tomo/error.h"
#include "tomo/fdk.h"

#include "hdf5_builder.h"
#include "test_support.h"

#include "io_test_helpers.h"

#include <gtest/gtest.h>

#include <hdf5.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <numbers>

namespace tomo {
namespace {

using test::contains;
using test::messageOf;
using test::writeText;

OpenOptions divergentAllowed() {
    OpenOptions o;
    o.allowDivergentBeam = true;
    return o;
}

TEST(ConeScan, DeclaredGeometryIsReadFromTheAttributes) {
    test::TempDir dir;
    const std::vector<double> angles{0, 90, 180, 270};
    test::H5Builder(dir / "cone.h5")
        .dataset("/sinogram", {4, 5}, std::vector<float>(20, 0.0f))
        .dataset("/angles_deg", {4}, angles)
        .attribute("/", "geometryType", "Cone")
        .numberAttribute("/", "distanceSourceOrigin", 410.66)
        .numberAttribute("/", "distanceSourceDetector", 553.74)
        .numberAttribute("/", "pixelSize", 0.05)
        .numberAttribute("/", "pixelSizePost", 0.2)
        .attribute("/", "distanceUnit", "mm");
    // Parallel-beam readers still refuse it.
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { openDataset(dir / "cone.h5"); }),
                         "declares a Cone-beam geometry (attribute geometryType of /)"));
    const auto reader = openDataset(dir / "cone.h5", divergentAllowed());
    ASSERT_TRUE(reader->info().divergentBeam);
    const DivergentBeam& beam = *reader->info().divergentBeam;
    EXPECT_EQ(beam.sourceAxis, 410.66);
    EXPECT_EQ(beam.sourceDetector, 553.74);
    EXPECT_EQ(beam.pixelSize, 0.2); // the binned pixels the file stores
    EXPECT_EQ(beam.unit, "mm");

    const ConeSetup setup = coneSetup(reader->info());
    EXPECT_EQ(setup.geometry.viewCount(), 4);
    EXPECT_EQ(setup.grid.nx, 5);
    EXPECT_EQ(setup.grid.nz, 1);
    EXPECT_NEAR(setup.grid.voxelSize, 0.2 * 410.66 / 553.74, 1e-12);
    EXPECT_EQ(setup.attributes.at("beam"), "fan");
    EXPECT_EQ(setup.attributes.at("source_axis_distance"), "410.66");
    EXPECT_TRUE(contains(setup.description, "fan beam"));
}

TEST(ConeScan, IncompleteGeometryNamesWhatIsMissing) {
    test::TempDir dir;
    test::H5Builder(dir / "cone.h5")
        .dataset("/sinogram", {4, 5}, std::vector<float>(20, 0.0f))
        .dataset("/angles_deg", {4}, std::vector<double>{0, 90, 180, 270})
        .attribute("/", "geometryType", "Cone")
        .numberAttribute("/", "distanceSourceOrigin", 410.66);
    const auto reader = openDataset(dir / "cone.h5", divergentAllowed());
    const std::string message = messageOf<InvalidArgument>([&] { coneSetup(reader->info()); });
    EXPECT_TRUE(contains(message, "but not its distanceSourceDetector pixelSize: give the geometry in a geometry file"))
        << message;

    test::H5Builder(dir / "parallel.h5")
        .dataset("/sinogram", {4, 5}, std::vector<float>(20, 0.0f))
        .dataset("/angles_deg", {4}, std::vector<double>{0, 45, 90, 135});
    const auto parallel = openDataset(dir / "parallel.h5", divergentAllowed());
    EXPECT_FALSE(parallel->info().divergentBeam);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { coneSetup(parallel->info()); }), "declares no fan or cone beam"));
}

TEST(ConeScan, GeometryFileGivesACircularScanOrMatrices) {
    test::TempDir dir;
    test::H5Builder(dir / "scan.h5")
        .dataset("/sinogram", {4, 5}, std::vector<float>(20, 0.0f))
        .dataset("/angles_deg", {4}, std::vector<double>{0, 90, 180, 270});
    const auto reader = openDataset(dir / "scan.h5", divergentAllowed());

    writeText(dir / "circular.json",
              R"({"source_axis": 100, "source_detector": 300, "pixel_size": [0.3, 0.6], "offset_u": 1.5, "unit": "mm"})");
    const ConeSetup c = coneSetup(reader->info(), dir / "circular.json");
    const ViewFrame f = describeView(c.geometry.views[0], "view 0");
    EXPECT_NEAR(f.focalU, 1000.0, 1e-9);
    EXPECT_NEAR(f.focalV, 500.0, 1e-9);
    EXPECT_NEAR(f.centreU, 3.5, 1e-9);
    EXPECT_NEAR(c.grid.voxelSize, 0.1, 1e-12);
    EXPECT_EQ(c.attributes.at("detector_pixel_size"), "0.3,0.6");

    // Matrices: one per projection, relative to the JSON file's folder.
    std::ofstream m(dir / "views.txt");
    m << std::setprecision(17);
    for (const ProjectionMatrix& p : c.geometry.views) {
        for (double v : p.m) m << v << ' ';
        m << '\n';
    }
    m.close();
    writeText(dir / "matrices.json", R"({"matrices": "views.txt"})");
    const ConeSetup fromMatrices = coneSetup(reader->info(), dir / "matrices.json");
    EXPECT_EQ(fromMatrices.geometry.views[2].m, c.geometry.views[2].m);
    EXPECT_NEAR(fromMatrices.grid.voxelSize, 0.1, 1e-12);
    EXPECT_EQ(fromMatrices.detector(), DetectorShape::Flat);
    EXPECT_EQ(fromMatrices.attributes.at("detector"), "flat");

    writeText(dir / "typo.json", R"({"source_axis": 100, "source_detektor": 300, "pixel_size": 0.3})");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "typo.json"); }),
                         "typo.json: unknown key \"source_detektor\""));
    writeText(dir / "short.json", R"({"source_axis": 100, "pixel_size": 0.3})");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "short.json"); }),
                         "no \"source_detector\""));
    writeText(dir / "inside.json", R"({"source_axis": 100, "source_detector": 50, "pixel_size": 0.3})");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "inside.json"); }),
                         "sourceDetector is 50"));
    writeText(dir / "three.txt", "1 0 0 0 0 1 0 0 0 0 1 1\n");
    writeText(dir / "few.json", R"({"matrices": "three.txt"})");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "few.json"); }),
                         "holds 1 projection matrices but"));
    writeText(dir / "broken.json", "{\"source_axis\": ");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "broken.json"); }),
                         "broken.json: not valid JSON"));
}

TEST(ConeScan, GeometryFileDeclaresACurvedDetector) {
    test::TempDir dir;
    std::vector<float> sinogram(4 * 5);
    for (std::size_t i = 0; i < sinogram.size(); ++i) sinogram[i] = static_cast<float>((i % 5) * (i % 5) + i / 5); // not linear along a row
    test::H5Builder(dir / "scan.h5")
        .dataset("/sinogram", {4, 5}, sinogram)
        .dataset("/angles_deg", {4}, std::vector<double>{0, 90, 180, 270});
    const auto reader = openDataset(dir / "scan.h5", divergentAllowed());

    writeText(dir / "curved.json",
              R"({"source_axis": 100, "source_detector": 300, "pixel_size": 60, "detector": "curved", "unit": "mm"})");
    const ConeSetup curved = coneSetup(reader->info(), dir / "curved.json");
    ASSERT_TRUE(curved.circular);
    EXPECT_EQ(curved.detector(), DetectorShape::Curved);
    EXPECT_EQ(curved.attributes.at("detector"), "curved");
    EXPECT_TRUE(contains(curved.description, "pixel 60 mm, curved detector (resampled onto a flat one of pixel"))
        << curved.description;
    // FDK sees the virtual flat detector; the projections reach it resampled.
    const CircularConeGeometry flat = virtualFlatDetector(*curved.circular);
    EXPECT_GT(flat.pixelWidth, 60.0);
    EXPECT_EQ(curved.geometry.views[1].m, ConeGeometry::circular(flat).views[1].m);
    const std::vector<float> resampled = resampleToFlatDetector(*curved.circular, sinogram);
    EXPECT_NE(resampled, sinogram);
    EXPECT_EQ(onGeometryDetector(curved, sinogram), resampled);
    EXPECT_EQ(readConeProjections(*reader, curved), resampled);
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { onGeometryDetector(curved, std::vector<float>(19)); }),
                         "(expected views x rows x columns = 4 x 1 x 5)"));

    writeText(dir / "flat.json", R"({"source_axis": 100, "source_detector": 300, "pixel_size": 60})");
    const ConeSetup plain = coneSetup(reader->info(), dir / "flat.json");
    EXPECT_EQ(plain.detector(), DetectorShape::Flat);
    EXPECT_EQ(plain.attributes.at("detector"), "flat");
    EXPECT_TRUE(contains(plain.description, "flat detector"));
    EXPECT_EQ(readConeProjections(*reader, plain), sinogram);

    writeText(dir / "round.json",
              R"({"source_axis": 100, "source_detector": 300, "pixel_size": 60, "detector": "round"})");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "round.json"); }),
                         "round.json: \"detector\" is \"round\" (expected \"flat\" or \"curved\""));
    writeText(dir / "number.json", R"({"source_axis": 100, "source_detector": 300, "pixel_size": 60, "detector": 1})");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "number.json"); }),
                         "number.json: \"detector\" is 1"));
    writeText(dir / "views.txt", "1 0 0 0 0 1 0 0 0 0 1 1\n");
    writeText(dir / "matrices.json", R"({"matrices": "views.txt", "detector": "curved"})");
    EXPECT_TRUE(contains(messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "matrices.json"); }),
                         "matrices.json: \"detector\": \"curved\" cannot go with \"matrices\" (a projection "
                         "matrix describes a flat detector"));
}

TEST(ConeScan, AVolumeTheScanCannotHaveSeenIsRefusedNamingTheDistances) {
    test::TempDir dir;
    test::H5Builder(dir / "scan.h5")
        .dataset("/sinogram", {4, 64}, std::vector<float>(4 * 64, 0.0f))
        .dataset("/angles_deg", {4}, std::vector<double>{0, 90, 180, 270});
    const auto reader = openDataset(dir / "scan.h5", divergentAllowed());

    // Source 100 from the axis, detector 200: 64 voxels of 1 reach 45.25
    // (the corners), of 2.5 113.1 (past the source).
    writeText(dir / "scanner.json", R"({"source_axis": 100, "source_detector": 300, "pixel_size": 0.1})");
    const ConeSetup setup = coneSetup(reader->info(), dir / "scanner.json");
    EXPECT_NO_THROW(setup.checkGrid({64, 64, 1, 1.0, {}}));
    const std::string inside = messageOf<InvalidArgument>([&] { setup.checkGrid({64, 64, 1, 2.5, {}}); });
    EXPECT_TRUE(contains(inside, "the volume (64x64 voxels of 2.5) reaches 113.137 from the rotation axis, as far as "
                                 "the source (source_axis 100)"))
        << inside;
    // An off-centre volume reaches further on one side.
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { setup.checkGrid({64, 64, 1, 1.0, {70.0, 0.0, 0.0}}); }),
                         "reaches 106.902 from the rotation axis"));
    // FDK itself refuses a volume whose voxels lie behind a view's source
    // (the library's callers, the workstation): 64 voxels of 3.5 reach 112
    // along x and y, beyond the sources at 0, 90, 180 and 270 degrees.
    const std::string fdk = messageOf<InvalidArgument>([&] {
        reconstructFdk(setup.geometry, std::vector<float>(4 * 64, 0.0f), {64, 64, 1, 3.5, {}}, FdkOptions{});
    });
    EXPECT_TRUE(contains(fdk, "the source of view 0 is 100 from the volume's centre, inside the volume (64x64x1 "
                              "voxels of 3.5, reaching 158.402 from its centre)"))
        << fdk;

    // Detector 10 beyond the axis: 64 voxels of 0.5 reach 22.6 from it.
    writeText(dir / "close.json", R"({"source_axis": 100, "source_detector": 110, "pixel_size": 0.1})");
    const ConeSetup close = coneSetup(reader->info(), dir / "close.json");
    EXPECT_NO_THROW(close.checkGrid({64, 64, 1, 0.2, {}}));
    EXPECT_TRUE(contains(messageOf<InvalidArgument>([&] { close.checkGrid({64, 64, 1, 0.5, {}}); }),
                         "reaches 22.6274 from the rotation axis, as far as the detector (source_detector - "
                         "source_axis = 10)"));

    // A geometry whose own default volume (64 voxels of the pixel at the
    // axis, 0.5) holds the source: refused with the file named.
    writeText(dir / "inside.json", R"({"source_axis": 10, "source_detector": 20, "pixel_size": 1})");
    const std::string file = messageOf<FormatError>([&] { coneSetup(reader->info(), dir / "inside.json"); });
    EXPECT_TRUE(contains(file, "inside.json: cone geometry: the volume (64x64 voxels of 0.5) reaches 22.6274 from the "
                               "rotation axis, as far as the source (source_axis 10)"))
        << file;
}

/// A float dataset of an HDF5 file, read whole.
std::vector<float> readFloats(const std::filesystem::path& path, const char* name) {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t data = H5Dopen(file, name, H5P_DEFAULT);
    const hid_t space = H5Dget_space(data);
    std::vector<float> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Dread(data, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Sclose(space);
    H5Dclose(data);
    H5Fclose(file);
    return values;
}

TEST(ConeScanRealData, Htc2022FanBeamMatchesTheProvidersReconstruction) {
    // Helsinki Tomography Challenge 2022 (flat-detector fan beam, 360
    // degrees, 721 views with the last equal to the first): FDK with the
    // geometry read from the file against the provider's FBP (ASTRA fanflat,
    // 512 x 512 pixels of the detector pixel at the axis).
    for (const char* name : {"htc2022_ta.h5", "htc2022_solid_disc.h5"}) {
        const std::filesystem::path path = test::realData(std::string("helsinki_htc2022_fanbeam/") + name);
        TOMO_REQUIRE_FILE(path);
        const auto reader = openDataset(path, divergentAllowed());
        const ConeSetup setup = coneSetup(reader->info());
        VolumeGrid grid = setup.grid;
        grid.nx = grid.ny = 512;
        FdkOptions options;
        options.filter.window = FilterWindow::RamLak;
        const ImageStack volume = reconstructFdk(setup.geometry, readConeProjections(*reader, setup), grid, options);
        const std::vector<float> reference = readFloats(path, "/reference_fbp");
        ASSERT_EQ(reference.size(), volume.data.size());

        // Inside the disc (7 cm, about 470 of the 512 pixels across).
        double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, n = 0;
        for (int y = 0; y < 512; ++y)
            for (int x = 0; x < 512; ++x) {
                if (std::hypot(x - 255.5, y - 255.5) > 225.0) continue;
                const double a = volume.data[y * 512 + x], b = reference[y * 512 + x];
                sa += a, sb += b, saa += a * a, sbb += b * b, sab += a * b, n += 1;
            }
        const double correlation = (sab - sa * sb / n) / std::sqrt((saa - sa * sa / n) * (sbb - sb * sb / n));
        const double ratio = sa / sb;
        std::cout << "MEASURED " << name << ": correlation with the provider's FBP " << correlation
                  << ", mean ratio " << ratio << "\n";
        EXPECT_GE(correlation, 0.99);
        EXPECT_NEAR(ratio, 1.0, 0.02);
    }
}

} // namespace
} // namespace tomo
