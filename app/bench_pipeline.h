// tomo-bench --pipeline: the batch reconstruction end to end on a simulated
// scan written to a folder, against the storage floor measured there in the
// same run (see bench_pipeline.cpp).
#pragma once

#include "tomo/backend.h"
#include "tomo/corrections.h"
#include "tomo/volume_io.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace tomo::cli {

struct PipelineBenchSettings {
    int projections = 512;
    int rows = 0;    ///< detector rows = slices (0 = columns)
    int columns = 512;
    std::filesystem::path dir;       ///< where the scan and the output go (empty: the system temp folder)
    std::string output = "h5";       ///< "h5" or "tiff" (a folder of TIFFs)
    /// How the output stores the values; for uint16/uint8 the range is
    /// estimated first, as tomo-recon does (timed apart).
    OutputType outputType = OutputType::Float32;
    bool chunkedInput = true;        ///< one projection per HDF5 chunk (how detectors write)
    int gzipLevel = 0;
    bool keep = false;               ///< keep the scan (and reuse it when it matches) and the output
    ReconOptions options;
    CorrectionOptions corrections;
    bool gpuCorrections = true; ///< --cpu-corrections clears it
    double memoryBudgetGiB = 0.0;    ///< the conveyor's chunk buffers (0 = tomo-recon's default)
    std::string json;                ///< also write the results here
    /// --writer-threads: measure the output writer alone at each of these
    /// thread counts instead of the conveyor.
    std::vector<int> writerThreads;
    /// --gpus: the scaling table, runs on the first 1, 2, 4, ... of these
    /// devices and on all ("" = --device alone).
    std::string gpus;
    /// --mpi: every rank of the MPI job takes part in each run (rank 0 prints).
    bool mpi = false;
};

/// Writes `doc` to `path` (--json) through a temporary name.
void writeJson(const std::string& path, const nlohmann::json& doc);

/// Runs the benchmark, prints its table; returns the exit code.
int runPipelineBenchmark(const PipelineBenchSettings& settings);

/// The output writer alone (tomo-recon's, one chunk of slices at a time as
/// the conveyor hands them over) at each of settings.writerThreads: GB/s
/// into --dir, so that the threads that pay there are known.
int runWriterBenchmark(const PipelineBenchSettings& settings);

/// What the workstation does with a large scan, measured on the same kind of
/// simulated scan: open it with the page cache dropped, the first slice of
/// the middle row, row changes to rows not read yet, axis changes (medians).
/// The live preview's path (PreviewSession), without the display.
int runOpenScanBenchmark(const PipelineBenchSettings& settings);

} // namespace tomo::cli
