// Writing a scan (projections, flats, darks, angles) in the DXchange layout
// detectors at synchrotrons write: uint16 /exchange/data [projection][row]
// [column], /exchange/data_white, /exchange/data_dark, /exchange/theta in
// degrees. Projections are written a few at a time, so a scan larger than
// memory can be made (simulated scans for tests and tomo-bench --pipeline).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

namespace tomo {

struct ScanLayout {
    int projections = 0;
    int rows = 0;
    int columns = 0;
    int flats = 0;
    int darks = 0;
    /// One projection per HDF5 chunk (how detectors write); false = one
    /// contiguous dataset.
    bool chunkedPerProjection = true;
    /// gzip (deflate) level of the chunks, 0 = uncompressed; needs chunks.
    int gzipLevel = 0;
};

class ScanWriter {
public:
    virtual ~ScanWriter() = default;
    /// `count` projections from index `first`: count x rows x columns values.
    /// Throws InvalidArgument for a range or size that does not fit, IoError
    /// naming the file.
    virtual void writeProjections(int first, int count, std::span<const std::uint16_t> values) = 0;
    /// All flats (flats x rows x columns), all darks (darks x rows x columns).
    virtual void writeFlats(std::span<const std::uint16_t> values) = 0;
    virtual void writeDarks(std::span<const std::uint16_t> values) = 0;
    /// Flushes and renames the temporary onto the target. Throws IoError.
    virtual void commit() = 0;
};

/// A writer of `layout` with these angles (degrees, one per projection) into
/// `target`, written under a temporary name and renamed by commit(); dropped
/// without commit() it removes the temporary. Throws InvalidArgument (sizes,
/// angles), IoError (the target exists and !overwrite, or cannot be made).
std::unique_ptr<ScanWriter> createDXchangeScanWriter(const std::filesystem::path& target, const ScanLayout& layout,
                                                     std::vector<double> thetaDegrees, bool overwrite);

} // namespace tomo
