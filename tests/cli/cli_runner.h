// Running the built command-line programs from tests: exit code, stdout and
// stderr of one run, and checks on what they print.
#pragma once

#include "tomo/phantom.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

namespace tomo::test {

/// A noiseless DXchange scan of the Shepp-Logan phantom (bins x bins
/// slices, `rows` rows, `angles` uniform over 180 degrees): the input most
/// CLI tests run on.
inline void writeNoiselessScan(const std::filesystem::path& path, int bins, int rows, int angles) {
    PhantomSpec spec;
    spec.bins = bins;
    spec.rows = rows;
    ScanSimulation sim;
    sim.poissonNoise = false;
    writePhantomDXchange(path, spec, uniformAngles(angles), sim);
}

struct ToolRun {
    int exitCode = -1;
    std::string out;
    std::string err;

    /// Lines of stderr (without the final newline).
    std::vector<std::string> errLines() const {
        std::vector<std::string> lines;
        std::istringstream in(err);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        return lines;
    }
};

inline std::string readText(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs `exe args` through the shell with stdout and stderr captured in
/// files of `dir` (args are pasted as they are: quote where needed).
/// `shellPrefix` runs first in the same shell (e.g. "ulimit -f 100; ").
inline ToolRun runTool(const std::string& exe, const std::string& args, const std::filesystem::path& dir,
                       const std::string& shellPrefix = {}) {
    const auto out = dir / "tool-stdout.txt";
    const auto err = dir / "tool-stderr.txt";
    const std::string command = shellPrefix + "'" + exe + "' " + args + " >'" + out.string() + "' 2>'" +
                                err.string() + "' </dev/null";
    const int status = std::system(command.c_str());
    ToolRun run;
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = readText(out);
    run.err = readText(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return run;
}

/// "'path'" for pasting into runTool's args.
inline std::string quoted(const std::filesystem::path& p) {
    // Appended, not "'" + string: GCC 12 at -O3 warns falsely (-Wrestrict) on
    // const char* + std::string&& (GCC bug 105329).
    return std::string("'").append(p.string()).append("'");
}

/// The first floating-point number after `label` in `text`, or NaN.
inline double numberAfter(const std::string& text, const std::string& label) {
    const std::regex re(label + R"(\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|inf))");
    std::smatch m;
    return std::regex_search(text, m, re) ? std::stod(m[1]) : std::nan("");
}

/// Runs `exe args` in `dir` and checks a refusal: exit `code`, exactly one
/// stderr line "<program>: error: ..." containing `needle`, no new file in `dir`.
inline void expectOneLineError(const std::string& exe, const std::string& program, const std::string& args,
                               const std::filesystem::path& dir, int code, const std::string& needle) {
    const auto before = std::distance(std::filesystem::directory_iterator(dir), {});
    const ToolRun r = runTool(exe, args, dir);
    EXPECT_EQ(r.exitCode, code) << args << "\nstderr: " << r.err;
    const auto lines = r.errLines();
    ASSERT_EQ(lines.size(), 1u) << args << "\nstderr: " << r.err;
    EXPECT_EQ(lines[0].rfind(program + ": error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(needle), std::string::npos) << "'" << needle << "' not in: " << lines[0];
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), before) << args << " left a file behind";
}

} // namespace tomo::test
