// The CPU Fourier projector pair (projector.h, ProjectorKind::Fourier):
// the transpose of its own back-projector, its back-projection against the
// FBP back-projector's linear interpolation, its forward projection against
// the phantom's exact sinogram, the iterative methods over it, and what it
// refuses.
#include "projector_test_helpers.h"

#include "tomo/dataset.h"
#include "tomo/error.h"
#include "tomo/iterative.h"
#include "tomo/preprocess.h"
#include "tomo/projector.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tomo {
namespace {

using namespace projtest;

IterativeOptions fourier(IterativeOptions o = {}) {
    o.projector = ProjectorKind::Fourier;
    return o;
}

// <A x, y> = <x, B y> for random positive x, y, every geometry case, batches
// of 1, 2, 3 and 5 slices (pairs and a lone slice). Measured 2.3e-7.
TEST(FourierPair, IsTheTransposeOfItsBackProjector) {
    double worst = 0.0;
    for (const GeometryCase& c : geometryCases()) {
        for (int count : {1, 2, 3, 5}) {
            auto pair = pairOf("cpu", c.geometry, fourier());
            ASSERT_TRUE(pair->isMatched());
            EXPECT_EQ(pair->name(), "cpu fourier, matched");
            const std::vector<double> gaps = adjointnessGaps(*pair, count, 11);
            for (int s = 0; s < count; ++s) {
                EXPECT_NEAR(gaps[s], 0.0, 1e-5) << c.name << ", " << count << " slices, slice " << s;
                worst = std::max(worst, std::abs(gaps[s]));
            }
        }
    }
    std::printf("MEASURED fourier adjointness: largest |<A x, y> / <x, B y> - 1| %.3g\n", worst);
}

// The back-projector is gridrec's without the filter: it approximates the
// FBP back-projectors' linear interpolation (the unmatched Joseph pair's B).
// Measured: the phantom's sinogram 4.8e-4 to 2.6e-3 (eight views: 2.6e-3),
// a random one (all frequencies, where the gridding errs most) 2.1e-2 to
// 4.2e-2. And each slice of a pair is its own: a batch's slices equal each
// alone.
TEST(FourierPair, BackProjectionIsLinearInterpolationsInFrequency) {
    IterativeOptions unmatched;
    unmatched.matched = false;
    for (const GeometryCase& c : geometryCases()) {
        const PhantomProblem phantom = sheppLogan(parallelGeometry(c.geometry.geometry.bins, c.geometry.geometry.projections()));
        auto pair = pairOf("cpu", c.geometry, fourier()), linear = pairOf("cpu", c.geometry, unmatched);
        const std::size_t values = static_cast<std::size_t>(c.geometry.geometry.projections()) * c.geometry.geometry.bins;
        // Three sinograms: the phantom's (smooth), a random one, the phantom's again.
        std::vector<float> y(phantom.sinogram);
        const std::vector<float> noise = randomValues(values, 9);
        y.insert(y.end(), noise.begin(), noise.end());
        y.insert(y.end(), phantom.sinogram.begin(), phantom.sinogram.end());
        const std::vector<float> ours = backOf(*pair, y, 3), theirs = backOf(*linear, y, 3);
        const std::size_t pixels = ours.size() / 3;
        const auto part = [&](const std::vector<float>& v, int s) {
            return std::span<const float>(v).subspan(s * pixels, pixels);
        };
        const double smooth = relativeError(part(ours, 0), part(theirs, 0));
        const double rough = relativeError(part(ours, 1), part(theirs, 1));
        std::printf("MEASURED fourier B vs linear interpolation, %s: phantom %.3g, random %.3g\n", c.name.c_str(),
                    smooth, rough);
        EXPECT_LT(smooth, 5e-3) << c.name;
        EXPECT_LT(rough, 8e-2) << c.name;
        const std::vector<float> alone = backOf(*pair, std::span<const float>(y).subspan(2 * values, values), 1);
        EXPECT_LT(relativeError(part(ours, 2), alone), 1e-6) << c.name;
    }
}

// The forward projection of the pixelised phantom against its exact line
// integrals, as Joseph's (ForwardProjectionOfThePhantomIsItsSinogram):
// measured 3.21e-2 / 1.74e-2 at 128 / 256 bins (Joseph's 2.92e-2 / 1.47e-2:
// the unit-area triangle of each pixel is a coarser footprint than Joseph's
// line sampling); bound 1.5 x Joseph's.
TEST(FourierPair, ForwardProjectionOfThePhantomIsItsSinogram) {
    for (int size : {128, 256}) {
        const ReconGeometry g = parallelGeometry(size, 180);
        const PhantomProblem phantom = sheppLogan(g);
        auto pair = pairOf("cpu", g, fourier()), joseph = pairOf("cpu", g);
        const double error = relativeError(forwardOf(*pair, phantom.image, 1), phantom.sinogram);
        const double josephError = relativeError(forwardOf(*joseph, phantom.image, 1), phantom.sinogram);
        std::printf("MEASURED fourier forward vs analytic sinogram, %d bins: relative RMSE %.3g (joseph %.3g)\n", size,
                    error, josephError);
        EXPECT_LT(error, 1.5 * josephError) << size;
    }
}

// SIRT and CGLS over the Fourier pair: the residual falls at every
// iteration on consistent data and the image approaches the phantom.
// Measured: SIRT residual 1 -> 2.5e-2 (100), CGLS 0.33 -> 1.1e-3 (30).
TEST(FourierPair, IterativeMethodsConverge) {
    const ReconGeometry g = parallelGeometry(96, 90);
    const PhantomProblem phantom = sheppLogan(g);
    auto pair = pairOf("cpu", g, fourier());
    const std::vector<float> consistent = forwardOf(*pair, phantom.image, 1);
    for (const auto& [m, iterations] : {std::pair{Method::Sirt, 100}, std::pair{Method::Cgls, 30}}) {
        const std::string name(methodName(m));
        std::vector<double> errors;
        const Solved run = solve(*pair, consistent, 1, fourier(method(m, iterations)), [&](const IterationState& s) {
            if (s.iteration == 5 || s.iteration == iterations) {
                std::vector<float> image(phantom.image.size());
                s.image(image);
                errors.push_back(relativeError(image, phantom.image));
            }
            return true;
        });
        for (std::size_t k = 1; k < run.residuals.size(); ++k)
            ASSERT_LE(run.residuals[k][0], run.residuals[k - 1][0]) << name << " iteration " << k + 1;
        std::printf("MEASURED fourier %s consistent: residual %.3g -> %.3g; error vs phantom %.3g -> %.3g\n",
                    name.c_str(), run.residuals.front()[0], run.residuals.back()[0], errors[0], errors[1]);
        EXPECT_LT(run.residuals.back()[0], m == Method::Sirt ? 4e-2 : 6e-3) << name;
        EXPECT_LT(errors[1], errors[0]) << name;
    }
}

// The few-view noisy phantom of the issue with the Fourier pair: SIRT and
// CGLS below FBP's error, TV at most 0.6 x FBP's. Measured: FBP 9.87e-4,
// SIRT 6.84e-4, CGLS 7.35e-4, TV 4.18e-4 (0.42 x FBP; Joseph's pair: 7.00e-4,
// 7.48e-4, 4.12e-4).
TEST(FourierPair, FewViewNoisyPhantomBeatsFbp) {
    const FewView data;
    auto pair = pairOf("cpu", data.geometry, fourier());
    const FewViewErrors e = fewViewErrors(*pair, data, ProjectorKind::Fourier);
    const double fbpError = e.fbp, sirt = e.sirt, cgls = e.cgls, tvError = e.tv;
    std::printf("MEASURED fourier few-view noisy RMSE: FBP %.3g, SIRT %.3g, CGLS %.3g, TV %.3g (%.2f x FBP)\n",
                fbpError, sirt, cgls, tvError, tvError / fbpError);
    EXPECT_LT(sirt, fbpError);
    EXPECT_LT(cgls, fbpError);
    EXPECT_LE(tvError, 0.6 * fbpError);
}

// The axis moves the phase ramps only: after setAxis the pair equals a pair
// made at that axis (a move past the row length rebuilds its tables).
TEST(FourierPair, SetAxisEqualsAPairMadeThere) {
    const ReconGeometry g = parallelGeometry(64, 45);
    const std::vector<float> x = randomValues(64 * 64 * 2, 5);
    for (double shift : {2.75, 30.25}) {
        auto moved = pairOf("cpu", g, fourier());
        moved->setAxis(g.geometry.axis + shift, {});
        ReconGeometry there = g;
        there.geometry.axis += shift;
        auto made = pairOf("cpu", there, fourier());
        EXPECT_LT(relativeError(forwardOf(*moved, x, 2), forwardOf(*made, x, 2)), 1e-6) << shift;
    }
}

// A real scan (the APS tooth, row 0: 181 views of 640 bins, axis 296): 50
// SIRT iterations on each pair. The Fourier pair's image explains the data
// under Joseph's model (the exact geometry) about as well as Joseph's own
// image, and the two images agree. Measured: residual 0.04683 against
// Joseph's 0.04680, images 8.1e-3 apart.
TEST(FourierPair, ApsToothSirtAgreesWithJosephs) {
    const auto path = test::realData("aps_tooth/tooth.h5");
    TOMO_REQUIRE_FILE(path);
    auto reader = openDataset(path);
    const ImageStack sinogram = loadSinograms(*reader, 0, 1);
    Geometry g;
    g.angles = reader->info().angles;
    g.bins = reader->info().columns;
    g.axis = 296.0;
    const ReconGeometry rg = ReconGeometry::fullSlice(g);
    IterativeOptions sirt = method(Method::Sirt, 50);
    sirt.bounds.lower = 0.0;
    auto joseph = pairOf("cpu", rg, sirt), fourierPair = pairOf("cpu", rg, fourier(sirt));
    const std::vector<float> ofJoseph = solve(*joseph, sinogram.data, 1, sirt).images;
    const std::vector<float> ofFourier = solve(*fourierPair, sinogram.data, 1, fourier(sirt)).images;
    // Both images' data residuals under Joseph's projector.
    const double josephResidual = relativeError(forwardOf(*joseph, ofJoseph, 1), sinogram.data);
    const double fourierResidual = relativeError(forwardOf(*joseph, ofFourier, 1), sinogram.data);
    const double apart = relativeError(ofFourier, ofJoseph);
    std::printf("MEASURED tooth row 0, 50 non-negative SIRT iterations: residual under Joseph's A %.4g (Joseph's "
                "image) / %.4g (Fourier's); images %.3g apart\n",
                josephResidual, fourierResidual, apart);
    EXPECT_LT(fourierResidual, 1.02 * josephResidual);
    EXPECT_LT(apart, 2e-2);
}

TEST(FourierPair, RefusesWhatItCannotBe) {
    const ReconGeometry g = parallelGeometry(32, 20);
    IterativeOptions unmatched = fourier();
    unmatched.matched = false;
    try {
        (void)pairOf("cpu", g, unmatched);
        ADD_FAILURE() << "an unmatched fourier pair was made";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("matched"), std::string::npos) << e.what();
    }
    try {
        (void)pairOf("cpu-reference", g, fourier());
        ADD_FAILURE() << "cpu-reference made a fourier pair";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("fourier projector runs on 'cpu'"), std::string::npos) << e.what();
    }
    IterativeOptions fbp = fourier();
    try {
        fbp.validate();
        ADD_FAILURE() << "fbp took a projector";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("not fbp"), std::string::npos) << e.what();
    }
    EXPECT_EQ(parseProjectorKind("fourier"), ProjectorKind::Fourier);
    EXPECT_THROW((void)parseProjectorKind("radon"), InvalidArgument);
}

} // namespace
} // namespace tomo
