// RunConfig JSON: round trip of every field, defaults, and the errors a
// hand-edited file can cause (each naming the key).
#include "tomo/error.h"
#include "tomo/run_config.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <fstream>

#include <sys/stat.h>

namespace tomo {
namespace {

RunConfig everyFieldSet() {
    RunConfig c;
    c.input = "/data/scan 1.h5";
    c.open.anglesFile = "angles of scan 1.txt";
    c.open.anglesLines = LineRange{10, 91};
    c.open.angleRangeDegrees = 360.0;
    c.open.angleUnits = AngleUnits::Radians;
    c.open.raw = RawLayout{91, 135, 160, SampleType::UInt16, 512, true};
    c.axis = 1021.37512345678;
    c.axisTilt = -0.0125;
    c.axisRow = 67.5;
    c.axisOffsetsFile = "offsets.txt";
    c.firstRow = 100;
    c.rowCount = 64;
    c.region = Region{10, 20, 300, 400};
    c.options.strategy = "cpu";
    c.options.interpolation = Interpolation::Nearest;
    c.options.precision = Precision::Float16;
    c.options.slicesPerPass = 4;
    c.options.filter.window = FilterWindow::Hamming;
    c.options.filter.padding = Padding::Zero;
    c.options.device = 1;
    c.options.openclDevice = "Radeon";
    c.options.threads = 3;
    c.options.tuning = "shape=3,share=6";
    c.gpus = "2,0";
    return c;
}

void expectSame(const RunConfig& a, const RunConfig& b) {
    EXPECT_EQ(a.input, b.input);
    EXPECT_EQ(a.open.anglesFile, b.open.anglesFile);
    EXPECT_EQ(a.open.anglesLines, b.open.anglesLines);
    EXPECT_EQ(a.open.angleRangeDegrees, b.open.angleRangeDegrees);
    EXPECT_EQ(a.open.angleUnits, b.open.angleUnits);
    ASSERT_EQ(a.open.raw.has_value(), b.open.raw.has_value());
    if (a.open.raw) {
        EXPECT_EQ(a.open.raw->projections, b.open.raw->projections);
        EXPECT_EQ(a.open.raw->rows, b.open.raw->rows);
        EXPECT_EQ(a.open.raw->columns, b.open.raw->columns);
        EXPECT_EQ(a.open.raw->type, b.open.raw->type);
        EXPECT_EQ(a.open.raw->headerBytes, b.open.raw->headerBytes);
        EXPECT_EQ(a.open.raw->bigEndian, b.open.raw->bigEndian);
    }
    EXPECT_EQ(a.axis, b.axis); // bit-exact: JSON keeps 17 significant digits
    EXPECT_EQ(a.axisTilt, b.axisTilt);
    EXPECT_EQ(a.axisRow, b.axisRow);
    EXPECT_EQ(a.axisOffsetsFile, b.axisOffsetsFile);
    EXPECT_EQ(a.firstRow, b.firstRow);
    EXPECT_EQ(a.rowCount, b.rowCount);
    EXPECT_EQ(a.region, b.region);
    EXPECT_EQ(a.options.strategy, b.options.strategy);
    EXPECT_EQ(a.options.interpolation, b.options.interpolation);
    EXPECT_EQ(a.options.precision, b.options.precision);
    EXPECT_EQ(a.options.slicesPerPass, b.options.slicesPerPass);
    EXPECT_EQ(a.options.filter.window, b.options.filter.window);
    EXPECT_EQ(a.options.filter.padding, b.options.filter.padding);
    EXPECT_EQ(a.options.device, b.options.device);
    EXPECT_EQ(a.options.openclDevice, b.options.openclDevice);
    EXPECT_EQ(a.options.threads, b.options.threads);
    EXPECT_EQ(a.options.tuning, b.options.tuning);
    EXPECT_EQ(a.gpus, b.gpus);
}

/// The FormatError message of parsing `json`, or "" when it parsed.
std::string formatErrorOf(const std::string& json) {
    try {
        runConfigFromJson(json);
    } catch (const FormatError& e) {
        return e.what();
    }
    return "";
}

TEST(RunConfig, RoundTripsEveryField) {
    const RunConfig c = everyFieldSet();
    expectSame(runConfigFromJson(toJson(c)), c);
}

TEST(RunConfig, RoundTripsDefaultsWithUnsetOptionals) {
    const RunConfig c;
    const RunConfig back = runConfigFromJson(toJson(c));
    expectSame(back, c);
    EXPECT_FALSE(back.axis.has_value());
    EXPECT_FALSE(back.region.has_value());
    EXPECT_FALSE(back.open.anglesFile.has_value());
    EXPECT_FALSE(back.open.anglesLines.has_value());
    EXPECT_FALSE(back.open.raw.has_value());
}

TEST(RunConfig, EmptyObjectKeepsDefaults) {
    const RunConfig back = runConfigFromJson("{}");
    expectSame(back, RunConfig{});
}

TEST(RunConfig, AbsentKeysKeepDefaultsAndGivenOnesApply) {
    const RunConfig c = runConfigFromJson(R"({"axis": 12.5, "interpolation": "nearest"})");
    ASSERT_TRUE(c.axis.has_value());
    EXPECT_EQ(*c.axis, 12.5);
    EXPECT_EQ(c.options.interpolation, Interpolation::Nearest);
    EXPECT_EQ(c.options.strategy, ReconOptions{}.strategy);
    EXPECT_EQ(c.options.filter.padding, FilterOptions{}.padding);
}

TEST(RunConfig, GpusAreAllOrAListAndAbsentWhenNone) {
    EXPECT_EQ(runConfigFromJson(R"({"gpus": "all"})").gpus, "all");
    EXPECT_EQ(runConfigFromJson(R"({"gpus": "1, 3"})").gpus, "1, 3");
    EXPECT_EQ(toJson(RunConfig{}).find("gpus"), std::string::npos);
}

TEST(RunConfig, FileRoundTrip) {
    test::TempDir dir;
    const RunConfig c = everyFieldSet();
    saveRunConfig(dir / "run.json", c);
    expectSame(loadRunConfig(dir / "run.json"), c);
    // Only the target remains (the temporary was renamed).
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(RunConfig, UnknownKeyIsNamed) {
    const std::string msg = formatErrorOf(R"({"axis": 3, "interpolaton": "linear"})");
    EXPECT_NE(msg.find("interpolaton"), std::string::npos) << msg;
}

TEST(RunConfig, WrongTypesNameTheKey) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"axis": "middle"})", "axis"},
        {R"({"input": 5})", "input"},
        {R"({"axis_offsets_file": []})", "axis_offsets_file"},
        {R"({"rows": [1]})", "rows"},
        {R"({"rows": [1, "2"]})", "rows"},
        {R"({"rows": [-1, 2]})", "rows"},
        {R"({"region": [0, 0, 10]})", "region"},
        {R"({"region": [0, 0, 0, 10]})", "region"},
        {R"({"strategy": 3})", "strategy"},
        {R"({"strategy": "Tex Optimized"})", "strategy"},
        {R"({"interpolation": "cubic"})", "interpolation"},
        {R"({"precision": "float64"})", "precision"},
        {R"({"slices_per_pass": 3})", "slices_per_pass"},
        {R"({"slices_per_pass": 2.5})", "slices_per_pass"},
        {R"({"filter": "gauss"})", "filter"},
        {R"({"padding": true})", "padding"},
        {R"({"device": -1})", "device"},
        {R"({"device": 5000})", "device"},
        {R"({"opencl_device": ""})", "opencl_device"},
        {R"({"opencl_device": -2})", "opencl_device"},
        {R"({"opencl_device": [0]})", "opencl_device"},
        {R"({"tuning": 3})", "tuning"},
        {R"({"gpus": 1})", "gpus"},
        {R"({"gpus": ""})", "gpus"},
        {R"({"gpus": "0,0"})", "gpus"},
        {R"({"gpus": "0,x"})", "gpus"},
        {R"({"gpus": "5000"})", "gpus"},
        {R"({"threads": 1.5})", "threads"},
        {R"({"threads": 100000})", "threads"},
        {R"({"axis": 1e300})", "axis"},
        {R"({"input": "a\u0000b"})", "input"},
        {R"({"angles_file": 1})", "angles_file"},
        {R"({"angles_lines": [10]})", "angles_lines"},
        {R"({"angles_lines": [-1, 91]})", "angles_lines"},
        {R"({"angle_range": 0})", "angle_range"},
        {R"({"angle_range": "180"})", "angle_range"},
        {R"({"angle_units": "gradians"})", "angle_units"},
        {R"({"raw_shape": [91, 0, 160]})", "raw_shape"},
        {R"({"raw_shape": [1, 1, 1], "raw_type": "int32"})", "raw_type"},
        {R"({"raw_shape": [1, 1, 1], "raw_header": -4})", "raw_header"},
        {R"({"raw_shape": [1, 1, 1], "raw_big_endian": 1})", "raw_big_endian"},
        {R"({"raw_type": "uint16"})", "raw_type"},
    };
    for (const auto& [json, key] : cases) {
        const std::string msg = formatErrorOf(json);
        EXPECT_NE(msg.find(std::string("'") + key + "'"), std::string::npos) << json << " -> \"" << msg << "\"";
    }
}

TEST(RunConfig, NotJsonOrNotAnObjectIsFormatError) {
    EXPECT_THROW(runConfigFromJson("{\"axis\": "), FormatError);
    EXPECT_THROW(runConfigFromJson("[1, 2]"), FormatError);
    // A number beyond double is nlohmann's out_of_range, not a parse error
    // (found by fuzzing: it escaped as an unknown exception).
    EXPECT_NE(formatErrorOf(R"({"axis": 1e999})").find("not valid JSON"), std::string::npos);
}

TEST(RunConfig, LoadErrorsNameTheFile) {
    test::TempDir dir;
    try {
        loadRunConfig(dir / "missing.json");
        FAIL() << "no IoError";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos) << e.what();
    }
    std::ofstream(dir / "bad.json") << R"({"axis": 1, "colour": "red"})";
    try {
        loadRunConfig(dir / "bad.json");
        FAIL() << "no FormatError";
    } catch (const FormatError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
        EXPECT_NE(msg.find("colour"), std::string::npos) << msg;
    }
}

TEST(RunConfig, DeepNestingIsRefusedWithoutRecursing) {
    // 100000 levels: any recursion over it (dumping it into a message)
    // would overflow the stack.
    const std::string deep = R"({"axis": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
    const std::string msg = formatErrorOf(deep);
    EXPECT_NE(msg.find("nested deeper than 16 levels"), std::string::npos) << msg.substr(0, 300);
    EXPECT_LT(msg.size(), 200u);
}

TEST(RunConfig, MessagesStayShortWhateverTheValue) {
    // A 5-million-element array, a 1 MB string and a 100 kB key: each
    // message is a line, not megabytes.
    std::string array = R"({"rows": [)";
    for (int i = 0; i < 5000000; ++i) array += i ? ",0" : "0";
    array += "]}";
    std::string msg = formatErrorOf(array);
    EXPECT_NE(msg.find("an array of 5000000 values"), std::string::npos) << msg.substr(0, 300);
    EXPECT_LT(msg.size(), 300u);

    msg = formatErrorOf(R"({"strategy": 1, "input": ")" + std::string(1 << 20, 'x') + "\"}");
    EXPECT_LT(msg.size(), 300u);
    // A strategy is a short name: 5000 characters of one are refused by key, in a few words.
    msg = formatErrorOf(R"({"strategy": ")" + std::string(5000, 'x') + "\"}");
    EXPECT_NE(msg.find("key 'strategy' must be a strategy name"), std::string::npos) << msg.substr(0, 300);
    EXPECT_LT(msg.size(), 300u);
    msg = formatErrorOf(R"({"interpolation": ")" + std::string(1 << 20, 'x') + "\"}");
    EXPECT_NE(msg.find("'interpolation'"), std::string::npos);
    EXPECT_LT(msg.size(), 400u);
    msg = formatErrorOf("{\"" + std::string(100000, 'k') + "\": 1}");
    EXPECT_NE(msg.find("unknown key"), std::string::npos);
    // The key cut to 40 characters and the list of the known keys (430
    // characters in all with the iterative method's six keys).
    EXPECT_LT(msg.size(), 500u);
    // A syntax error after a huge token does not quote the token.
    msg = formatErrorOf(R"({"input": ")" + std::string(1 << 20, 'y') + "\" x}");
    EXPECT_NE(msg.find("not valid JSON"), std::string::npos);
    EXPECT_LT(msg.size(), 300u);
}

TEST(RunConfig, LoadRefusesFifosAndHugeFiles) {
    test::TempDir dir;
    ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
    try {
        loadRunConfig(dir / "fifo.json");
        FAIL() << "no IoError";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("is a FIFO"), std::string::npos) << e.what();
    }
    std::ofstream(dir / "big.json") << "{}";
    std::filesystem::resize_file(dir / "big.json", 2u << 20);
    try {
        loadRunConfig(dir / "big.json");
        FAIL() << "no IoError";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("at most 1.0 MiB"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace tomo
