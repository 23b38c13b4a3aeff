// tomo-recon on fan- and cone-beam data: the geometry from a geometry file
// (a cone-beam phantom scan as raw projections) or from the file itself
// (the HTC2022 fan-beam scans), reconstructed with FDK.
#include "cone_test_scan.h"
#include "cli_runner.h"

#include "tomo/cone_geometry.h"
#include "tomo/metrics.h"
#include "tomo/phantom.h"
#include "tomo/registry.h"
#include "tomo/volume_io.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <hdf5.h>

#include <fstream>
#include <iostream>
#include <numbers>

#if TOMO_WITH_HDF5

namespace tomo {
namespace {

namespace fs = std::filesystem;
using test::quoted;
using test::runTool;

/// A string attribute of the root of an HDF5 volume ("" when absent).
std::string rootAttribute(const fs::path& file, const char* name) {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    std::string value;
    if (f >= 0 && H5Aexists_by_name(f, "/volume", name, H5P_DEFAULT) > 0) {
        const hid_t a = H5Aopen_by_name(f, "/volume", name, H5P_DEFAULT, H5P_DEFAULT);
        const hid_t type = H5Aget_type(a);
        if (H5Tis_variable_str(type) > 0) {
            char* text = nullptr;
            H5Aread(a, type, &text);
            if (text) value = text;
            H5free_memory(text);
        } else {
            value.resize(H5Tget_size(type));
            H5Aread(a, type, value.data());
            value = value.c_str();
        }
        H5Tclose(type);
        H5Aclose(a);
    }
    if (f >= 0) H5Fclose(f);
    return value;
}

/// Projections as a raw float32 file ([view][row][column]).
void writeRaw(const fs::path& file, const ImageStack& projections) {
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(projections.data.data()),
               static_cast<std::streamsize>(projections.data.size() * sizeof(float)));
}

TEST(TomoReconCone, RawConeProjectionsWithAGeometryFile) {
    test::TempDir dir;
    // The core tests' scan: magnification 2, 96 x 64 pixels of 1 mm, 180 views.
    const CircularConeGeometry g = test::circularCone(180, 96, 64, 1.0, 150.0, 300.0);
    ConePhantom phantom;
    phantom.radius = 0.9 * 32 * 0.5;
    phantom.attenuation = 0.02;
    writeRaw(dir / "scan.raw", projectPhantomCone(phantom, ConeGeometry::circular(g), 2));
    std::ofstream(dir / "scanner.json") << R"({"source_axis": 150, "source_detector": 300, "pixel_size": 1.0, "unit": "mm"})";

    const auto r = runTool(TOMO_RECON_EXE,
                           quoted(dir / "scan.raw") + " --raw-shape 180,64,96 --log-corrected --angle-range 360"
                           " --cone-geometry " + quoted(dir / "scanner.json") + " --volume 64,64,33 -o " +
                           quoted(dir / "volume.h5"),
                           dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("geometry: cone beam ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("FDK of 180 views -> 64x64x33 voxels"), std::string::npos) << r.out;
    const ImageStack volume = readVolume(dir / "volume.h5");
    ASSERT_EQ(volume.depth, 33);
    const VolumeGrid grid{64, 64, 33, 0.5, {}};
    const ImageStack truth = rasterizePhantomVolume(phantom, grid, 3);
    const auto mask = discMask(64, 64, 0.85 * 0.9 * 32);
    // The core test's bound for this scan's mid-plane (tests/core/test_fdk.cpp).
    EXPECT_LT(compareImages(volume.slice(16), truth.slice(16), mask).relativeError, 0.19);
    EXPECT_EQ(rootAttribute(dir / "volume.h5", "beam"), "cone");
    EXPECT_EQ(rootAttribute(dir / "volume.h5", "voxel_size"), "0.5");
    EXPECT_EQ(rootAttribute(dir / "volume.h5", "source_detector_distance"), "300");
    EXPECT_EQ(rootAttribute(dir / "volume.h5", "units"), "attenuation per voxel");
}

// --method sirt|cgls on cone-beam data: the cone-beam pair over the whole
// volume, said and stored; more iterations come nearer the phantom
// (measured mid-plane error 0.627 after 2 SIRT iterations, 0.261 after 30);
// tv runs on the volume.
TEST(TomoReconCone, IterativeMethodsRunOnTheConeBeamPair) {
    test::TempDir dir;
    const CircularConeGeometry g = test::circularCone(90, 48, 32, 2.0, 150.0, 300.0);
    ConePhantom phantom;
    phantom.radius = 0.9 * 16;
    phantom.attenuation = 0.02;
    writeRaw(dir / "scan.raw", projectPhantomCone(phantom, ConeGeometry::circular(g), 2));
    std::ofstream(dir / "scanner.json") << R"({"source_axis": 150, "source_detector": 300, "pixel_size": 2.0})";
    const std::string scan = quoted(dir / "scan.raw") + " --raw-shape 90,32,48 --log-corrected --angle-range 360"
                             " --cone-geometry " + quoted(dir / "scanner.json") + " --volume 32,32,16 --voxel-size 1";
    const VolumeGrid grid{32, 32, 16, 1.0, {}};
    // --strategy cpu: the CPU pair (auto takes the GPU's where there is one).
    const ImageStack truth = rasterizePhantomVolume(phantom, grid, 3);
    const auto mask = discMask(32, 32, 0.85 * 16);
    double previous = 0.0;
    for (int iterations : {2, 30}) {
        const fs::path out = dir / ("sirt" + std::to_string(iterations) + ".h5");
        const auto r = runTool(TOMO_RECON_EXE,
                               scan + " --strategy cpu --method sirt --nonnegative --iterations " +
                                   std::to_string(iterations) +
                                   " -o " + quoted(out),
                               dir.path());
        ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
        EXPECT_NE(r.out.find("reconstructing 32x32x16 voxels of 1 with sirt"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("on the cpu-reference cone-beam joseph, matched"), std::string::npos) << r.out;
        const ImageStack volume = readVolume(out);
        ASSERT_EQ(volume.depth, 16);
        EXPECT_EQ(rootAttribute(out, "projector"), "cpu-reference cone-beam joseph, matched");
        EXPECT_EQ(rootAttribute(out, "volume_grid"), "32x32x16");
        const double error = compareImages(volume.slice(8), truth.slice(8), mask).relativeError;
        std::cout << "MEASURED tomo-recon cone-beam SIRT, " << iterations << " iterations: mid-plane error " << error
                  << "\n";
        if (previous > 0.0) {
            EXPECT_LT(error, 0.6 * previous);
        }
        previous = error;
    }
    // --strategy cuda: the GPU's pair (tests/cuda/test_cuda_divergent_projector.cpp), or without one a
    // clear error and nothing written.
    const auto gpu = runTool(TOMO_RECON_EXE, scan + " --strategy cuda --method sirt --iterations 2 -o " +
                                                 quoted(dir / "gpu.h5"), dir.path());
    if (gpuDevices().empty()) {
        EXPECT_EQ(gpu.exitCode, 4) << gpu.err;
        EXPECT_NE(gpu.err.find("tomo-recon: error: no CUDA device"), std::string::npos) << gpu.err;
        EXPECT_FALSE(fs::exists(dir / "gpu.h5"));
    } else {
        ASSERT_EQ(gpu.exitCode, 0) << gpu.err;
        EXPECT_NE(gpu.out.find("on the cuda cone-beam joseph, matched"), std::string::npos) << gpu.out;
        EXPECT_EQ(readVolume(dir / "gpu.h5").depth, 16);
    }
    // TV on the volume (3 axes): said and stored.
    const auto tv = runTool(TOMO_RECON_EXE, scan + " --strategy cpu --method tv --tv-weight 0.05 --iterations 5 -o " +
                                                quoted(dir / "tv.h5"), dir.path());
    ASSERT_EQ(tv.exitCode, 0) << tv.err;
    EXPECT_NE(tv.out.find("with tv"), std::string::npos) << tv.out;
    EXPECT_EQ(rootAttribute(dir / "tv.h5", "reconstruction"), "tv");
    EXPECT_EQ(readVolume(dir / "tv.h5").depth, 16);
}

TEST(TomoReconCone, CurvedDetectorFanBeamIsResampledBeforeFdk) {
    test::TempDir dir;
    // The core tests' wide fan: +-25.8 degrees on 96 columns of 0.75 mm arc.
    CircularConeGeometry g = test::circularCone(180, 96, 1, 0.75, 40.0, 80.0);
    g.detector = DetectorShape::Curved;
    ConePhantom phantom;
    phantom.shapes = sheppLogan2D();
    phantom.radius = 0.9 * 32 * 0.5;
    phantom.attenuation = 0.02;
    writeRaw(dir / "scan.raw", projectPhantomCone(phantom, g, 2));
    std::ofstream(dir / "scanner.json")
        << R"({"source_axis": 40, "source_detector": 80, "pixel_size": 0.75, "detector": "curved"})";

    const auto r = runTool(TOMO_RECON_EXE,
                           quoted(dir / "scan.raw") + " --raw-shape 180,1,96 --log-corrected --angle-range 360"
                           " --cone-geometry " + quoted(dir / "scanner.json") + " --volume 64,64,1 --voxel-size 0.5 -o " +
                           quoted(dir / "slice.h5"),
                           dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("curved detector (resampled onto a flat one of pixel"), std::string::npos) << r.out;
    const ImageStack slice = readVolume(dir / "slice.h5");
    const ImageStack truth = rasterizePhantomVolume(phantom, {64, 64, 1, 0.5, {}}, 3);
    const auto mask = discMask(64, 64, 0.85 * 0.9 * 32);
    const double error = compareImages(slice.slice(0), truth.slice(0), mask).relativeError;
    std::cout << "MEASURED tomo-recon curved fan-beam relative error " << error << "\n";
    EXPECT_LT(error, 0.2); // the core test's measure, 0.19 (read as a flat detector: 0.49)
    EXPECT_EQ(rootAttribute(dir / "slice.h5", "detector"), "curved");
}

TEST(TomoReconCone, AVolumeReachingTheSourceOrTheDetectorIsRefusedNamingTheDistances) {
    // A 64x64 slice of 1 mm voxels reaches 45.25 mm from the axis (its
    // corners): with the source circling at 10 mm it ran at exit 0 and
    // gave a volume of nonsense.
    test::TempDir dir;
    writeRaw(dir / "scan.raw", ImageStack(64, 1, 4));
    std::ofstream(dir / "inside.json") << R"({"source_axis": 10, "source_detector": 40, "pixel_size": 0.1})";
    std::ofstream(dir / "close.json") << R"({"source_axis": 100, "source_detector": 110, "pixel_size": 0.1})";
    const std::string scan = quoted(dir / "scan.raw") + " --raw-shape 4,1,64 --log-corrected --angle-range 360";
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon",
                             scan + " --cone-geometry " + quoted(dir / "inside.json") +
                                 " --volume 64,64,1 --voxel-size 1 -o " + quoted(dir / "v.h5"),
                             dir.path(), 2, "reaches 45.2548 from the rotation axis, as far as the source (source_axis 10)");
    test::expectOneLineError(TOMO_RECON_EXE, "tomo-recon",
                             scan + " --cone-geometry " + quoted(dir / "close.json") +
                                 " --volume 64,64,1 --voxel-size 0.5 -o " + quoted(dir / "v.h5"),
                             dir.path(), 2,
                             "reaches 22.6274 from the rotation axis, as far as the detector (source_detector - "
                             "source_axis = 10)");
    // Inside both, the same scans run.
    const auto r = runTool(TOMO_RECON_EXE,
                           scan + " --cone-geometry " + quoted(dir / "inside.json") +
                               " --volume 8,8,1 --voxel-size 1 -q -o " + quoted(dir / "v.h5"),
                           dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST(TomoReconCone, Htc2022FanBeamFileIsReconstructedWithItsOwnGeometry) {
    const fs::path htc = test::realData("helsinki_htc2022_fanbeam/htc2022_ta.h5");
    TOMO_REQUIRE_FILE(htc);
    test::TempDir dir;
    const auto r = runTool(TOMO_RECON_EXE, quoted(htc) + " --volume 512,512,1 -o " + quoted(dir / "disc.h5"), dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("geometry: fan beam (attributes of htc2022_ta.h5): source-axis 410.66 mm, source-detector "
                         "553.74 mm, pixel 0.2 mm"),
              std::string::npos)
        << r.out;
    const ImageStack volume = readVolume(dir / "disc.h5");
    EXPECT_EQ(volume.width, 512);
    EXPECT_EQ(volume.depth, 1);
    EXPECT_EQ(rootAttribute(dir / "disc.h5", "beam"), "fan");
    EXPECT_EQ(rootAttribute(dir / "disc.h5", "voxel_size"), "0.1483223173");
}

} // namespace
} // namespace tomo

#endif // TOMO_WITH_HDF5
