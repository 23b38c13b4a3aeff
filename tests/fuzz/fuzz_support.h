// What the fuzz targets share: the input as a file (the readers take paths),
// a run of a reader as tomo-recon would drive it, and the one rule of every
// target: bad input may throw tomo::Error, nothing else (no crash, no other
// exception, no hang, no unbounded allocation).
#pragma once

#include "tomo/dataset.h"
#include "tomo/error.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace tomo::fuzz {

/// A private scratch directory (in /dev/shm when it exists, so the file
/// system is memory), created once per process and removed at exit.
const std::filesystem::path& scratchDirectory();

/// Writes `data` to `name` in the scratch directory and returns its path.
std::filesystem::path writeInput(std::span<const std::uint8_t> data, const std::string& name = "input");

/// Opens `path` with `options` and reads what tomo-recon would: the first and
/// last rows, the mean flat and dark, every flat group. Datasets whose one
/// row would not fit the harness's memory are only opened (tomo-recon
/// refuses those before reading, naming the sizes). tomo::Error is the
/// expected outcome of bad input and is swallowed; anything else escapes.
void openAndRead(const std::filesystem::path& path, const OpenOptions& options = {});

} // namespace tomo::fuzz
