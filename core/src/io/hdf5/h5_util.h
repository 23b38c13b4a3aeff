// Internal: RAII over HDF5 C API identifiers, and the few read/write helpers
// the readers and writers share. Every failure becomes a tomo exception that
// names the file and the dataset, with HDF5's own message appended; HDF5
// never prints.
#pragma once

#include "io/readers.h"
#include "tomo/dataset.h"

#include <hdf5.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tomo::h5 {

/// Prepares HDF5 for use on the calling thread; every function here calls
/// it first, so callers need not. Error stacks are per thread in HDF5's
/// thread-safe build: automatic printing is switched off for this thread
/// (errors become exceptions carrying HDF5's message).
/// Process-wide, when the program loads, HDF5's clean-up at exit is
/// switched off: HDF5 1.10 leaves the identifier of a file whose close
/// failed (disk full) pointing at freed memory and crashes when it closes
/// it again at exit. Files are always closed explicitly, so nothing is lost.
void prepareThread();

/// The HDF5 library (Debian's serial build) must never run on two threads at
/// once, and the batch conveyor reads and writes on different threads (the
/// workstation previews while it exports). Every entry point of the HDF5
/// readers and writers, and every handle's close, holds a Session: this
/// lock (recursive: entry points call one another) and the thread prepared.
/// Reads that bypass the library (direct_rows.h) do not need it.
std::recursive_mutex& libraryMutex();
/// In a child made by fork() while the forking thread held libraryMutex()
/// (so that no thread was inside HDF5): makes the lock anew and free, as the
/// child's one thread is not its recorded owner. First thing in the child.
void renewLibraryMutexInChild();
class Session {
public:
    Session() : m_lock(libraryMutex()) { prepareThread(); }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

private:
    std::lock_guard<std::recursive_mutex> m_lock;
};

/// Owns one hid_t and closes it with Close.
template <herr_t (*Close)(hid_t)>
class Handle {
public:
    Handle() = default;
    explicit Handle(hid_t id) : m_id(id) {}
    ~Handle() { reset(); }
    Handle(Handle&& other) noexcept : m_id(other.m_id) { other.m_id = H5I_INVALID_HID; }
    Handle& operator=(Handle&& other) noexcept {
        if (this != &other) {
            reset();
            m_id = other.m_id;
            other.m_id = H5I_INVALID_HID;
        }
        return *this;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;

    hid_t get() const { return m_id; }
    bool valid() const { return m_id >= 0; }
    /// Closes now; returns false if HDF5 reported an error while closing
    /// (for a file: data could not be flushed).
    /// The identifier is never used again, even when closing fails: HDF5
    /// may already have destroyed what it referred to.
    bool close() {
        const Session session;
        const bool ok = m_id < 0 || Close(m_id) >= 0;
        m_id = H5I_INVALID_HID;
        return ok;
    }

private:
    void reset() { close(); }
    hid_t m_id = H5I_INVALID_HID;
};

using File = Handle<H5Fclose>;
using Dataset = Handle<H5Dclose>;
using Dataspace = Handle<H5Sclose>;
using Datatype = Handle<H5Tclose>;
using Attribute = Handle<H5Aclose>;
using PropertyList = Handle<H5Pclose>;
using Group = Handle<H5Gclose>;

/// " (HDF5: <innermost message>)" for the current error stack, or "":
/// one short line (a failed write says "file write failed: No space left
/// on device", not HDF5's twenty fields).
std::string errorDetail();

/// Opens a file read-only. Throws IoError naming it.
File openReadOnly(const std::filesystem::path& path);

/// Opens a file another process writes with SWMR (H5F_ACC_SWMR_READ, no
/// file locking: the writer released it). Throws IoError naming it.
File openSwmrRead(const std::filesystem::path& path);

/// Whether every link of an absolute path like "/a/b/c" exists.
bool exists(hid_t file, const std::string& objectPath);

/// A string or numeric attribute of an object as text (numbers printed with
/// %g), or nullopt when absent or of another kind. For messages and simple
/// checks; never throws for a malformed attribute.
std::optional<std::string> attributeText(hid_t object, const char* name);

/// A scalar numeric attribute as double; nullopt when absent, not numeric or
/// not one value. Never throws for a malformed attribute.
std::optional<double> attributeNumber(hid_t object, const char* name);

/// An open numeric dataset, with the file and name kept for messages.
class Array {
public:
    /// Throws FormatError naming the file if `name` is missing, not a
    /// dataset, or not of an integer or floating-point type.
    Array(hid_t file, std::filesystem::path filePath, std::string name);

    const std::vector<hsize_t>& dims() const { return m_dims; }
    hid_t id() const { return m_dataset.get(); }
    /// The sample type of pixel data; throws FormatError unless the dataset
    /// is uint8, uint16, float32 or float64.
    SampleType pixelType() const;
    /// "/exchange/data in /data/scan.h5", for error messages.
    std::string where() const;
    const std::filesystem::path& filePath() const { return m_filePath; }
    /// "(181, 2, 640)".
    std::string shapeText() const;
    /// Throws FormatError unless the rank is one of `ranks` (the text says
    /// what shape was expected, e.g. "(angles, rows, columns)") and every
    /// dimension is in [1, 2^31).
    void requireRank(std::initializer_list<int> ranks, const std::string& shape) const;

    /// Reads the union of the given hyperslab blocks (each a start and count
    /// per dimension), in row-major order of the dataset, as float.
    struct Block {
        std::vector<hsize_t> start;
        std::vector<hsize_t> count;
    };
    void read(const std::vector<Block>& blocks, std::span<float> out) const;
    /// The same in the stored type (pixelType(), no conversion): `out` holds
    /// the selected values' bytes.
    void readStored(const std::vector<Block>& blocks, std::span<std::byte> out) const;
    /// Reads one block.
    void read(std::vector<hsize_t> start, std::vector<hsize_t> count, std::span<float> out) const;
    /// Reads everything as double (for 1D metadata such as angles).
    std::vector<double> readAllDouble() const;
    /// A string attribute of the dataset, if present. Throws FormatError if
    /// it holds more than one string.
    std::optional<std::string> stringAttribute(const char* name) const;
    /// Throws FormatError naming the dataset when its declared size cannot
    /// be in the file: nothing ever written (a 100000^3 dataset of a few
    /// kilobytes), contiguous data reaching past the end of the file
    /// (truncated), or a virtual dataset whose source file is missing;
    /// IoError naming it, the filter and the Debian package to install when
    /// it is compressed with a filter this HDF5 cannot decode (filters.h).
    void requireStoredData() const;

private:
    void readAs(const std::vector<Block>& blocks, hid_t memoryType, void* out, std::size_t values) const;
    void requireVirtualSources(hid_t create) const;
    /// Throws FormatError naming the external raw file (H5Pset_external)
    /// that is missing or shorter than its part of the data, where HDF5
    /// would fail with no name or read zeros.
    void requireExternalFiles(hid_t create, double declaredBytes) const;
    void requireChunkIndex(hid_t create, const std::string& declaration) const;

    std::filesystem::path m_filePath;
    std::string m_name;
    Dataset m_dataset;
    std::vector<hsize_t> m_dims;
    std::optional<SampleType> m_pixelType;
    std::string m_typeText;
};

/// An angle dataset as stored, with the units its "units" attribute states
/// ("rad"/"radians" or "deg"/"degrees"; none when absent: DXchange and
/// NXtomo then mean degrees). Throws FormatError for other units or a
/// rank != 1.
detail::StoredAngles readStoredAngles(const Array& angles);

/// Writes a variable-length UTF-8 string attribute on an object. Throws
/// IoError naming `where`.
void writeStringAttribute(hid_t object, const std::string& name, const std::string& value, const std::string& where);

} // namespace tomo::h5
