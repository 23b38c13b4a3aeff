// tomo-bench --iterative: the iterative methods' figures of issue 29 on one
// strategy's projector pair (the GPU's when there is one), in a table and
// JSON: one SIRT iteration per slice of a batch, 100 SIRT iterations of one
// slice, the estimate for a whole size^3 volume, the pair's memory against
// the batch's input + output, and the projections' speed; for each
// projector pair asked (Joseph's, the Fourier one), in the same run.
#pragma once

#include "tomo/iterative.h"

#include <string>
#include <vector>

namespace tomo::cli {

struct IterativeBenchSettings {
    int size = 2048;          ///< slice width and height = detector bins
    int projections = 2048;   ///< of the batched figure
    int slices = 16;          ///< the batch
    int singleAngles = 1501;  ///< the one-slice figure's projections
    int iterations = 100;     ///< the one-slice figure's SIRT iterations
    int timedIterations = 10; ///< per batched figure (after 2 untimed)
    std::string strategy;     ///< "" = the preferred strategy with a pair (a CUDA one on a GPU)
    /// The pairs measured, one after the other (the first is the baseline of the others).
    std::vector<ProjectorKind> projectors = {ProjectorKind::Joseph, ProjectorKind::Fourier};
    int threads = 0;
    int device = 0;
    std::string json;         ///< also write the results here
};

/// Runs the benchmark, prints its table; returns the exit code.
int runIterativeBenchmark(const IterativeBenchSettings& settings);

} // namespace tomo::cli
