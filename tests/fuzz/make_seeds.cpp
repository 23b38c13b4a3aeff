// Writes the seed corpora of the fuzz targets, OUT/<target>/..., from the
// test writers (valid files of every layout the readers take, a few of each
// sample type) and, when the shared data folder is given, the small real
// scans. Generated, not stored: the repository keeps only regressions.
//
//   tomo-fuzz-seeds OUT [SHARED_DATA_DIR]
#include "hdf5_builder.h"
#include "tiff_builder.h"
#include "tomo/phantom.h"
#include "tomo/live.h"
#include "tomo/run_config.h"
#include "tomo/volume_io.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

/// Real files larger than this are left out: libFuzzer mutates whole inputs.
constexpr std::uintmax_t kMaxRealSeedBytes = 1100000;

std::vector<float> ramp(int n, float base) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = base + static_cast<float>(i % 97);
    return v;
}

template <typename T>
std::vector<T> counts(std::size_t n, T base) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(base + i % 50);
    return v;
}

std::string bytesOf(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void writeBytes(const fs::path& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary) << bytes;
}

void hdf5Seeds(const fs::path& dir) {
#if TOMO_WITH_HDF5
    using tomo::test::H5Builder;
    const std::vector<double> theta{0, 30, 60, 90, 120, 150};
    H5Builder(dir / "dxchange.h5")
        .dataset("/exchange/data", {6, 3, 5}, counts<std::uint16_t>(90, 900))
        .dataset("/exchange/data_white", {2, 3, 5}, counts<std::uint16_t>(30, 2000))
        .dataset("/exchange/data_dark", {1, 3, 5}, counts<std::uint16_t>(15, 10))
        .dataset("/exchange/theta", {6}, theta)
        .attribute("/exchange/theta", "units", "degrees");
    H5Builder(dir / "dxchange_pre_post.h5")
        .dataset("/exchange/data", {6, 2, 4}, ramp(48, 500.0f))
        .dataset("/exchange/data_white_pre", {1, 2, 4}, ramp(8, 3000.0f))
        .dataset("/exchange/data_white_post", {1, 2, 4}, ramp(8, 3100.0f))
        .dataset("/exchange/data_dark", {1, 2, 4}, ramp(8, 5.0f))
        .dataset("/exchange/theta", {6}, theta);
    H5Builder(dir / "nxtomo.nxs")
        .dataset("/entry/instrument/detector/data", {9, 2, 4}, counts<std::uint16_t>(72, 700))
        .dataset("/entry/instrument/detector/image_key", {9}, std::vector<std::int32_t>{2, 1, 0, 0, 0, 0, 1, 0, 3})
        .dataset("/entry/sample/rotation_angle", {9}, std::vector<double>{0, 0, 0, 0.5, 1, 1.5, 1.5, 2, 2})
        .attribute("/entry/sample/rotation_angle", "units", "rad");
    H5Builder(dir / "sinogram.h5")
        .dataset("/sinogram", {6, 7}, ramp(42, 0.25f))
        .dataset("/angles_deg", {6}, theta);
    H5Builder(dir / "cone.h5")
        .dataset("/sinogram", {6, 7}, ramp(42, 0.25f))
        .dataset("/angles_rad", {6}, std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5})
        .attribute("/", "geometryType", "Cone")
        .numberAttribute("/", "distanceSourceOrigin", 410.66);
    H5Builder(dir / "virtual.nxs").virtualDataset("/entry/instrument/detector/data", {4, 2, 3}, "missing.h5", "/data");
    H5Builder(dir / "unwritten.h5").unwrittenDataset("/exchange/data", {100000, 100000, 100000}, true);
    {
        // MATLAB v7.3: MATLAB's text header in a 512-byte user block; the
        // variable "data" is [angles, rows, columns] in MATLAB, reversed in HDF5.
        H5Builder(dir / "matlab.mat", 512)
            .dataset("/data", {5, 2, 6}, ramp(60, 0.5f))
            .dataset("/angles", {1, 6}, theta)
            .attribute("/data", "MATLAB_class", "single");
    }
    {
        std::fstream f(dir / "matlab.mat", std::ios::in | std::ios::out | std::ios::binary);
        std::string header = "MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5 schema 1.00 .";
        header.resize(128, ' ');
        f.write(header.data(), static_cast<std::streamsize>(header.size()));
    }
    tomo::PhantomSpec spec;
    spec.bins = 16;
    spec.rows = 2;
    tomo::writePhantomDXchange(dir / "phantom.h5", spec, tomo::uniformAngles(12), tomo::ScanSimulation{});
#else
    (void)dir;
#endif
}

void tiffSeeds(const fs::path& dir) {
#if TOMO_WITH_TIFF
    using tomo::SampleType;
    using tomo::test::writeTiff;
    writeTiff(dir / "sinogram_u16.tif", 7, 6, {ramp(42, 900.0f)}, SampleType::UInt16);
    writeTiff(dir / "pages_f32_tiled.tif", 20, 18, {ramp(360, 0.5f), ramp(360, 0.6f), ramp(360, 0.7f)},
              SampleType::Float32, true);
    writeTiff(dir / "pages_u8_strips.tif", 5, 4, {ramp(20, 10.0f), ramp(20, 20.0f)}, SampleType::UInt8, false, 3);
#else
    (void)dir;
#endif
}

void tiffFolderSeeds(const fs::path& dir, const fs::path& scratch) {
#if TOMO_WITH_TIFF
    using tomo::SampleType;
    // The fuzz target's format: files joined by "\n--file--\n", each
    // starting with its name on one line.
    const auto joined = [&](const std::vector<std::pair<std::string, std::string>>& files) {
        std::string text;
        for (const auto& [name, bytes] : files) text += (text.empty() ? "" : "\n--file--\n") + name + "\n" + bytes;
        return text;
    };
    const auto tiff = [&](int w, int h, float base, SampleType type) {
        tomo::test::writeTiff(scratch / "page.tif", w, h, {ramp(w * h, base)}, type);
        return bytesOf(scratch / "page.tif");
    };
    writeBytes(dir / "series.txt", joined({{"p_0.tif", tiff(4, 3, 900, SampleType::UInt16)},
                                            {"p_1.tif", tiff(4, 3, 910, SampleType::UInt16)},
                                            {"p_2.tif", tiff(4, 3, 920, SampleType::UInt16)},
                                            {"flat_0.tif", tiff(4, 3, 3000, SampleType::Float32)},
                                            {"dark_0.tif", tiff(4, 3, 5, SampleType::UInt16)},
                                            {"angles.txt", "0\n60\n120\n"}}));
    writeBytes(dir / "gap.txt", joined({{"x_0.tif", tiff(3, 2, 1, SampleType::Float32)},
                                         {"x_2.tif", tiff(3, 2, 1, SampleType::Float32)},
                                         {"x_3.tif", tiff(3, 2, 1, SampleType::Float32)}}));
#else
    (void)dir;
    (void)scratch;
#endif
}

void rawSeeds(const fs::path& dir) {
    // 24 bytes of layout (int32 projections, rows, columns; uint64 header;
    // type; flags; 2 spare), then the file.
    const auto seed = [&](const char* name, std::int32_t p, std::int32_t r, std::int32_t c, std::uint64_t header,
                          std::uint8_t type, std::uint8_t flags, std::size_t sampleBytes) {
        std::string bytes(24, '\0');
        const std::int32_t shape[3] = {p, r, c};
        std::memcpy(bytes.data(), shape, sizeof shape);
        std::memcpy(bytes.data() + 12, &header, sizeof header);
        bytes[20] = static_cast<char>(type);
        bytes[21] = static_cast<char>(flags);
        const std::size_t values = static_cast<std::size_t>(p) * r * c;
        for (std::size_t i = 0; i < header + values * sampleBytes; ++i) bytes.push_back(static_cast<char>(0x3F + i % 7));
        writeBytes(dir / name, bytes);
    };
    seed("float32.raw", 4, 2, 3, 0, 2, 0, 4);
    seed("uint16_big_endian_header.raw", 3, 2, 2, 16, 1, 1, 2);
    seed("float64_log_corrected.raw", 2, 1, 4, 0, 3, 2, 8);
    seed("uint8.raw", 5, 1, 5, 3, 0, 0, 1);
}

void runConfigSeeds(const fs::path& dir) {
    tomo::RunConfig config;
    config.input = "scan.h5";
    config.axis = 1021.25;
    config.firstRow = 10;
    config.rowCount = 5;
    config.region = tomo::Region{1, 2, 30, 40};
    config.options.strategy = "cpu";
    writeBytes(dir / "full.json", tomo::toJson(config));
    writeBytes(dir / "defaults.json", tomo::toJson(tomo::RunConfig{}));
    writeBytes(dir / "hand_written.json",
               R"({"input": "a.h5", "axis": 3.5, "rows": [0, 0], "interpolation": "nearest", "precision": "float16",
"slices_per_pass": 4, "filter": "hann", "padding": "zero", "device": 0, "threads": 2, "axis_offsets_file": ""})");
}

void numbersSeeds(const fs::path& dir) {
    writeBytes(dir / "degrees.txt", "# angles\n0\n0.5\n  1.0  # comment\n+1.5\r\n-2e0\n\n3\n");
    writeBytes(dir / "offsets.txt", "0.1\n-0.25\n1e-3\n");
}

/// A message as fuzz_stream_message reads it: header length (2 bytes), header, frame.
void writeMessage(const fs::path& path, const std::string& header, std::size_t frameBytes) {
    std::string bytes;
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    for (std::size_t i = 0; i < frameBytes; ++i) bytes += static_cast<char>(i * 7);
    writeBytes(path, bytes);
}

void streamSeeds(const fs::path& dir) {
    tomo::Frame frame;
    frame.rows = 3;
    frame.columns = 4;
    frame.index = 5;
    frame.angleDegrees = 12.5;
    frame.scanId = "seed";
    writeMessage(dir / "projection_uint16", tomo::frameHeader(frame), 24);
    frame.type = tomo::SampleType::Float32;
    frame.kind = tomo::FrameKind::Flat;
    writeMessage(dir / "flat_float32", tomo::frameHeader(frame), 48);
    writeMessage(dir / "end", tomo::frameHeader(frame, true), 0);
    writeMessage(dir / "recastx", R"({"frame": 93, "image_attributes": {"scan_index": 2}, "shape": [2, 3]})", 12);
}

void volumeSeeds(const fs::path& dir) {
    const tomo::ImageStack v(6, 5, 3, 0.25f);
    const auto write = [&](const fs::path& target, tomo::WriteOptions options) {
        auto writer = tomo::createVolumeWriter(target, v.width, v.height, v.depth, options);
        writer->writeSlices(0, v.depth, v.data);
        writer->commit();
    };
#if TOMO_WITH_HDF5
    write(dir / "volume.h5", {});
#endif
#if TOMO_WITH_TIFF
    write(dir / "volume.tif", {});
    tomo::WriteOptions sixteen;
    sixteen.type = tomo::OutputType::UInt16;
    sixteen.rangeMax = 2.0f;
    write(dir / "volume16.tif", sixteen);
#endif
}

/// Small real scans: the layouts and quirks of facilities' files.
void realSeeds(const fs::path& out, const fs::path& shared) {
    const fs::path real = shared / "real";
    const std::pair<const char*, const char*> files[] = {
        {"fuzz_hdf5", "aps_tooth/tooth.h5"},
        {"fuzz_tiff", "dls_i13_24737/tiff/raw_00000.tiff"},
        {"fuzz_tiff", "dls_i13_24737/tiff/flat_00001.tiff"},
        {"fuzz_tiff", "sarepy_neutron_360/sinogram_360_neutron_image.tif"},
        {"fuzz_numbers", "sarepy_neutron_360/angles_deg.txt"},
        {"fuzz_numbers", "dls_i13_24737/tiff/angles.txt"},
    };
    for (const auto& [target, relative] : files) {
        std::error_code ec;
        const fs::path source = real / relative;
        if (!fs::is_regular_file(source, ec) || fs::file_size(source, ec) > kMaxRealSeedBytes) continue;
        fs::copy_file(source, out / target / ("real_" + source.filename().string()),
                      fs::copy_options::overwrite_existing, ec);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: tomo-fuzz-seeds OUT [SHARED_DATA_DIR]\n");
        return 2;
    }
    const fs::path out = argv[1];
    try {
        for (const char* target : {"fuzz_hdf5", "fuzz_tiff", "fuzz_tiff_folder", "fuzz_raw", "fuzz_run_config",
                                   "fuzz_numbers", "fuzz_volume", "fuzz_stream_message"}) {
            fs::remove_all(out / target);
            fs::create_directories(out / target);
        }
        const fs::path scratch = out / ".scratch";
        fs::create_directories(scratch);
        hdf5Seeds(out / "fuzz_hdf5");
        tiffSeeds(out / "fuzz_tiff");
        tiffFolderSeeds(out / "fuzz_tiff_folder", scratch);
        rawSeeds(out / "fuzz_raw");
        runConfigSeeds(out / "fuzz_run_config");
        numbersSeeds(out / "fuzz_numbers");
        volumeSeeds(out / "fuzz_volume");
        streamSeeds(out / "fuzz_stream_message");
        fs::remove_all(scratch);
        if (argc > 2) realSeeds(out, argv[2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tomo-fuzz-seeds: %s\n", e.what());
        return 1;
    }
    return 0;
}
