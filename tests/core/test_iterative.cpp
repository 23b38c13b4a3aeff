// The iterative methods over the CPU projector pairs (iterative.h): the
// residual falls monotonically on consistent data and the images converge
// towards the phantom; on a few-view noisy phantom SIRT and CGLS beat FBP
// and TV beats it by a margin; an unmatched pair converges too; slices are
// independent of their batch; the stopping rule, the callback, the bounds
// and the FBP start do what they say; bad options are refused.
#include "projector_test_helpers.h"

#include "tomo/error.h"
#include "tomo/iterative.h"
#include "tomo/projector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace tomo {
namespace {

using namespace projtest;

class IterativeOnPair : public testing::TestWithParam<std::string> {};

// Consistent data (b = A x_true, from the pair itself): ||b - A x|| falls at
// every iteration, and the image approaches the phantom. SIRT's residual
// after 100 iterations measured 1.9e-2 relative (CGLS after 30: 3.0e-3).
TEST_P(IterativeOnPair, ResidualFallsAndTheImageConverges) {
    const ReconGeometry g = parallelGeometry(96, 90);
    const PhantomProblem phantom = sheppLogan(g);
    auto pair = pairOf(GetParam(), g);
    const std::vector<float> consistent = forwardOf(*pair, phantom.image, 1);
    for (const auto& [m, iterations] : {std::pair{Method::Sirt, 100}, std::pair{Method::Cgls, 30}}) {
        const std::string name(methodName(m));
        std::vector<double> errors;
        const Solved run = solve(*pair, consistent, 1, method(m, iterations), [&](const IterationState& s) {
            if (s.iteration == 5 || s.iteration == iterations / 2 || s.iteration == iterations) {
                std::vector<float> image(phantom.image.size());
                s.image(image);
                errors.push_back(relativeError(image, phantom.image));
            }
            return true;
        });
        ASSERT_EQ(run.residuals.size(), static_cast<std::size_t>(iterations)) << name;
        for (std::size_t k = 1; k < run.residuals.size(); ++k)
            ASSERT_LE(run.residuals[k][0], run.residuals[k - 1][0]) << name << " iteration " << k + 1;
        std::printf("MEASURED %s %s consistent: residual %.3g -> %.3g; error vs phantom %.3g, %.3g, %.3g\n",
                    GetParam().c_str(), name.c_str(), run.residuals.front()[0], run.residuals.back()[0], errors[0],
                    errors[1], errors[2]);
        EXPECT_LT(run.residuals.back()[0], m == Method::Sirt ? 4e-2 : 6e-3) << name;
        EXPECT_LT(errors[1], errors[0]) << name;
        EXPECT_LT(errors[2], errors[1]) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Cpu, IterativeOnPair, testing::Values("cpu-reference", "cpu"),
                         [](const testing::TestParamInfo<std::string>& i) {
                             return i.param == "cpu" ? std::string("cpu") : std::string("cpu_reference");
                         });

// SIRT and CGLS below FBP's error, TV at most 0.6 x FBP's (RMSE inside the
// phantom's disc). Measured: FBP 9.93e-4; SIRT (100 iterations) 7.00e-4,
// CGLS (8; 20 fit the noise: 9.5e-4) 7.48e-4, TV (lambda 0.1, 100,
// non-negative) 4.12e-4 = 0.41 x FBP (lambda 0.03: 0.54 x, 0.3: 0.79 x).
TEST(Iterative, FewViewNoisyPhantomBeatsFbp) {
    const FewView data;
    auto pair = pairOf("cpu", data.geometry);
    const FewViewErrors e = fewViewErrors(*pair, data);
    const double fbpError = e.fbp, sirt = e.sirt, cgls = e.cgls, tvError = e.tv;
    std::printf("MEASURED few-view noisy RMSE: FBP %.3g, SIRT %.3g, CGLS %.3g, TV %.3g (%.2f x FBP)\n", fbpError, sirt,
                cgls, tvError, tvError / fbpError);
    EXPECT_LT(sirt, fbpError);
    EXPECT_LT(cgls, fbpError);
    EXPECT_LE(tvError, 0.6 * fbpError);
}

// The unmatched pair (the FBP's back-projector as A^T) is not a gradient
// method any more, but SIRT still converges on consistent data. Measured:
// residual 0.99 -> 2.2e-2 in 100 iterations, error vs phantom 0.44 -> 0.16.
TEST(Iterative, UnmatchedPairConverges) {
    const ReconGeometry g = parallelGeometry(96, 90);
    const PhantomProblem phantom = sheppLogan(g);
    IterativeOptions unmatched = method(Method::Sirt, 100);
    unmatched.matched = false;
    auto pair = pairOf("cpu", g, unmatched);
    const std::vector<float> consistent = forwardOf(*pair, phantom.image, 1);
    const Solved early = solve(*pair, consistent, 1, method(Method::Sirt, 10));
    const Solved run = solve(*pair, consistent, 1, unmatched);
    const double errorEarly = relativeError(early.images, phantom.image), error = relativeError(run.images, phantom.image);
    std::printf("MEASURED unmatched SIRT: residual %.3g -> %.3g, error vs phantom %.3g (10) -> %.3g (100)\n",
                run.residuals.front()[0], run.residuals.back()[0], errorEarly, error);
    EXPECT_LT(run.residuals.back()[0], 0.05 * run.residuals.front()[0]);
    EXPECT_LT(error, 0.75 * errorEarly);
}

// A slice's result does not depend on the batch it came in (its own steps,
// its own stopping): three different slices together equal each alone, bit
// for bit, for every method.
TEST(Iterative, SlicesAreIndependentOfTheirBatch) {
    const FewView data;
    const std::size_t values = data.noisy.size(), pixels = data.phantom.image.size();
    std::vector<float> three = data.noisy;
    for (float scale : {0.5f, 1.5f})
        for (std::size_t i = 0; i < values; ++i) three.push_back(data.noisy[i] * scale + 1e-3f * float(i % 7));
    auto pair = pairOf("cpu", data.geometry);
    IterativeOptions tv = method(Method::Tv, 8);
    tv.tvWeight = 0.1;
    for (const IterativeOptions& o : {method(Method::Sirt, 8), method(Method::Cgls, 8), tv}) {
        const Solved together = solve(*pair, three, 3, o);
        for (int s = 0; s < 3; ++s) {
            const Solved alone = solve(*pair, std::span<const float>(three).subspan(s * values, values), 1, o);
            EXPECT_TRUE(std::equal(alone.images.begin(), alone.images.end(), together.images.begin() + s * pixels))
                << methodName(o.method) << " slice " << s;
        }
    }
}

// With a tolerance each slice stops on its own once its residual changes by
// less than it, keeping the image of that iteration.
TEST(Iterative, ToleranceStopsEachSlice) {
    const FewView data(64);
    const std::size_t values = data.noisy.size(), pixels = data.phantom.image.size();
    std::vector<float> two = data.noisy;
    for (std::size_t i = 0; i < values; ++i) two.push_back(data.phantom.sinogram[i]); // noiseless: converges further
    auto pair = pairOf("cpu", data.geometry);
    IterativeOptions o = method(Method::Sirt, 200);
    o.tolerance = 1e-2;
    const Solved run = solve(*pair, two, 2, o);
    std::printf("MEASURED tolerance 1e-2: slices stopped after %d and %d iterations\n", run.summary.sliceIterations[0],
                run.summary.sliceIterations[1]);
    for (int s = 0; s < 2; ++s) {
        const int n = run.summary.sliceIterations[s];
        ASSERT_GT(n, 1);
        ASSERT_LT(n, 200);
        const Solved fixed = solve(*pair, std::span<const float>(two).subspan(s * values, values), 1, method(Method::Sirt, n));
        EXPECT_TRUE(std::equal(fixed.images.begin(), fixed.images.end(), run.images.begin() + s * pixels)) << "slice " << s;
        const auto& r = run.residuals;
        EXPECT_LE(std::abs(r[n - 1][s] - r[n - 2][s]), o.tolerance * r[n - 2][s]);
        EXPECT_GT(std::abs(r[n - 2][s] - r[n - 3][s]), o.tolerance * r[n - 3][s]);
    }
    EXPECT_NE(run.summary.sliceIterations[0], run.summary.sliceIterations[1]);
    EXPECT_EQ(run.summary.iterations, std::max(run.summary.sliceIterations[0], run.summary.sliceIterations[1]));
}

// The callback stops the run keeping the images so far, or cancels it.
TEST(Iterative, CallbackStopsOrCancels) {
    const FewView data;
    auto pair = pairOf("cpu", data.geometry);
    const Solved stopped = solve(*pair, data.noisy, 1, method(Method::Cgls, 50),
                              [](const IterationState& s) { return s.iteration < 4; });
    EXPECT_TRUE(stopped.summary.stoppedByCallback);
    EXPECT_EQ(stopped.summary.iterations, 4);
    EXPECT_EQ(stopped.images, solve(*pair, data.noisy, 1, method(Method::Cgls, 4)).images);
    EXPECT_THROW(solve(*pair, data.noisy, 1, method(Method::Sirt, 50),
                       [](const IterationState& s) -> bool {
                           if (s.iteration == 2) throw Cancelled();
                           return true;
                       }),
                 Cancelled);
}

// SIRT and TV keep the images inside their bounds; without them the noisy
// data give negative values (measured min -2.4e-3 for SIRT).
TEST(Iterative, BoundsHold) {
    const FewView data;
    auto pair = pairOf("cpu", data.geometry);
    const Solved unbounded = solve(*pair, data.noisy, 1, method(Method::Sirt, 30));
    ASSERT_LT(*std::min_element(unbounded.images.begin(), unbounded.images.end()), -1e-4);
    IterativeOptions sirt = method(Method::Sirt, 30);
    sirt.bounds = Bounds{0.0, 5e-3};
    IterativeOptions tv = method(Method::Tv, 20);
    tv.tvWeight = 0.1;
    tv.bounds = Bounds{0.0, 5e-3};
    for (const IterativeOptions& o : {sirt, tv}) {
        const Solved run = solve(*pair, data.noisy, 1, o);
        const auto [lo, hi] = std::minmax_element(run.images.begin(), run.images.end());
        EXPECT_GE(*lo, 0.0f) << methodName(o.method);
        EXPECT_LE(*hi, 5e-3f) << methodName(o.method);
    }
}

// Starting from the FBP starts closer: SIRT's first residual and the error
// after 10 iterations are lower than from zeros.
TEST(Iterative, FbpStartStartsCloser) {
    const FewView data;
    auto pair = pairOf("cpu", data.geometry);
    IterativeOptions fromFbp = method(Method::Sirt, 10);
    fromFbp.init = InitialImage::Fbp;
    const Solved zero = solve(*pair, data.noisy, 1, method(Method::Sirt, 10)), fbp = solve(*pair, data.noisy, 1, fromFbp);
    std::printf("MEASURED SIRT 10 iterations from zero / from FBP: residual %.3g / %.3g -> %.3g / %.3g, RMSE %.3g / %.3g\n",
                zero.residuals.front()[0], fbp.residuals.front()[0], zero.residuals.back()[0],
                fbp.residuals.back()[0], data.error(zero.images), data.error(fbp.images));
    EXPECT_LT(fbp.residuals.front()[0], 0.5 * zero.residuals.front()[0]);
    EXPECT_LT(data.error(fbp.images), data.error(zero.images));
}

TEST(Iterative, BadOptionsAreRefusedWithTheirName) {
    auto refused = [](IterativeOptions o, const std::string& part) {
        try {
            o.validate();
            ADD_FAILURE() << "accepted; expected an error with '" << part << "'";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    IterativeOptions o = method(Method::Sirt, -3);
    refused(o, "iterations -3: expected a whole number >= 1");
    o = method(Method::Tv, 10);
    refused(o, "method tv needs a TV weight");
    o.tvWeight = std::numeric_limits<double>::quiet_NaN();
    refused(o, "TV weight nan: expected a finite number > 0");
    o.tvWeight = -1.0;
    refused(o, "TV weight -1");
    o = method(Method::Sirt, 10);
    o.tvWeight = 0.1;
    refused(o, "a TV weight applies to method tv only");
    o = method(Method::Cgls, 10);
    o.bounds.lower = 0.0;
    refused(o, "cgls has no constraints");
    o = method(Method::Sirt, 10);
    o.bounds = Bounds{1.0, 0.0};
    refused(o, "expected lower <= upper");
    o.bounds = Bounds{std::numeric_limits<double>::quiet_NaN(), 1.0};
    refused(o, "neither NaN");
    o = method(Method::Sirt, 10);
    o.tolerance = 1.5;
    refused(o, "tolerance 1.5");
    o = method(Method::Fbp, 10);
    refused(o, "iterations apply to the iterative methods");
    o = method(Method::Fbp, 0);
    o.init = InitialImage::Fbp;
    refused(o, "an initial image applies to the iterative methods");
    EXPECT_THROW(parseMethod("art"), InvalidArgument);
    EXPECT_THROW(parseInitialImage("ones"), InvalidArgument);
    EXPECT_EQ(parseMethod("cgls"), Method::Cgls);
    EXPECT_NO_THROW(method(Method::Sirt, 0).validate()); // 0 = the method's default
    EXPECT_EQ(method(Method::Sirt, 0).resolvedIterations(), 100);
}

} // namespace
} // namespace tomo
