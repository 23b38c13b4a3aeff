#include "raw_rows_upload.h"

#include "tomo/dataset.h"
#include "tomo/error.h"

#include <chrono>
#include <cstring>
#include <string>

namespace tomo::cuda {

namespace {

constexpr std::size_t kConstantsAlignment = 512; // the constants start aligned for the kernel's loads

} // namespace

void requireRawRows(const RawRows& raw, const FlatFieldRows& field, int projections, int columns, int maxRows) {
    const int count = raw.rows;
    const std::size_t sample = sampleBytes(raw.type);
    const int pitch = raw.rowPitch > 0 ? raw.rowPitch : raw.rows;
    if (count < 1 || count > maxRows || raw.projections != projections || raw.columns != columns || pitch < count ||
        field.rows != count || field.columns != columns ||
        raw.values.size() < ((static_cast<std::size_t>(raw.projections) - 1) * pitch + count) * columns * sample)
        throw InvalidArgument("reconstructRaw: " + std::to_string(count) + " rows x " +
                              std::to_string(raw.projections) + " projections x " + std::to_string(raw.columns) +
                              " columns in " + std::to_string(raw.values.size()) + " bytes (expected 1 to " +
                              std::to_string(maxRows) + " rows of " + std::to_string(projections) + " x " +
                              std::to_string(columns) + ", and flat-field constants of the same rows)");
}

RawRowsUpload::RawRowsUpload(int device, int projections, int columns, int blockRows)
    : m_device(device), m_projections(projections), m_columns(columns), m_blockRows(blockRows) {}

RawRowsUpload::Layout RawRowsUpload::layout(int rows, std::size_t sample) const {
    const std::size_t pixels = static_cast<std::size_t>(rows) * static_cast<std::size_t>(m_columns);
    Layout L;
    L.dark = (pixels * static_cast<std::size_t>(m_projections) * sample + kConstantsAlignment - 1) /
             kConstantsAlignment * kConstantsAlignment;
    L.scale = L.dark + pixels * sizeof(float);
    L.dead = L.scale + pixels * sizeof(float);
    L.total = L.dead + pixels;
    return L;
}

void RawRowsUpload::start(const RawRows& raw, cudaStream_t stream) {
    const std::size_t sample = sampleBytes(raw.type);
    if (m_sample < sample) {
        const Layout L = layout(m_blockRows, sample);
        for (Slot& s : m_slots) {
            s.h_rows.reset(); // for larger samples, allocated again when needed
            s.h_field.reset();
            s.d_raw.reset();
            s.h_field = PinnedBuffer<unsigned char>(L.total - L.dark, "the flat-field constants");
            s.d_raw = DeviceBuffer<unsigned char>(m_device, L.total, "the raw input buffers");
        }
        m_sample = sample;
    }
    if (!d_counters.get()) {
        d_counters = DeviceBuffer<unsigned long long>(m_device, kCounterWords, "the preprocessing counters");
        h_counters = PinnedBuffer<unsigned long long>(kCounterWords, "the preprocessing counters");
    }
    resetFlatFieldCounters(d_counters.get(), stream);
}

double RawRowsUpload::upload(int slot, const RawRows& raw, const FlatFieldRows& field, int first, int rows,
                             HostCopier& copier, cudaStream_t stream) {
    Slot& s = m_slots[slot];
    const auto start = std::chrono::steady_clock::now();
    const std::size_t sample = sampleBytes(raw.type);
    const Layout L = layout(rows, sample);
    const std::size_t columns = static_cast<std::size_t>(m_columns);
    const std::size_t pitch = static_cast<std::size_t>(raw.rowPitch > 0 ? raw.rowPitch : raw.rows);
    const std::size_t projections = static_cast<std::size_t>(raw.projections);
    // Rows [first, first + rows) of every angle: one strided block, gathered
    // into the pinned buffer unless the caller's rows are page-locked (then
    // the DMA engine gathers them).
    const std::size_t width = static_cast<std::size_t>(rows) * columns * sample;
    const std::byte* values = raw.values.data() + static_cast<std::size_t>(first) * columns * sample;
    const std::size_t valuesPitch = pitch * columns * sample;
    const bool direct = isPageLocked(values, (projections - 1) * valuesPitch + width);
    if (!direct) {
        const std::size_t staging = layout(m_blockRows, m_sample).dark;
        if (s.h_rows.size() < staging) {
            s.h_rows.reset(); // the old one freed before the new one is locked
            s.h_rows = PinnedBuffer<unsigned char>(staging, "the raw input buffers");
        }
        copier.copyRows(s.h_rows.get(), width, values, valuesPitch, width, projections);
    }
    const std::size_t fieldBytes = static_cast<std::size_t>(rows) * columns * sizeof(float);
    const std::size_t fieldOffset = static_cast<std::size_t>(first) * columns;
    unsigned char* constants = s.h_field.get(); // the layout from L.dark on
    std::memcpy(constants, field.dark.data() + fieldOffset, fieldBytes);
    std::memcpy(constants + (L.scale - L.dark), field.scale.data() + fieldOffset, fieldBytes);
    std::memcpy(constants + (L.dead - L.dark), field.dead.data() + fieldOffset, fieldBytes / sizeof(float));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (direct)
        TOMO_CUDA_CHECK(cudaMemcpy2DAsync(s.d_raw.get(), width, values, valuesPitch, width, projections,
                                          cudaMemcpyHostToDevice, stream));
    else
        TOMO_CUDA_CHECK(
            cudaMemcpyAsync(s.d_raw.get(), s.h_rows.get(), width * projections, cudaMemcpyHostToDevice, stream));
    TOMO_CUDA_CHECK(
        cudaMemcpyAsync(s.d_raw.get() + L.dark, constants, L.total - L.dark, cudaMemcpyHostToDevice, stream));
    return seconds;
}

void RawRowsUpload::correct(int slot, const RawRows& raw, const FlatFieldRows& field, int first, int rows,
                            float* d_out, cudaStream_t stream) const {
    const Slot& s = m_slots[slot];
    const Layout L = layout(rows, sampleBytes(raw.type));
    FlatFieldLaunch f;
    f.d_raw = s.d_raw.get();
    f.type = rawTypeOf(static_cast<int>(raw.type));
    f.projections = m_projections;
    f.rows = rows;
    f.columns = m_columns;
    f.d_dark = reinterpret_cast<const float*>(s.d_raw.get() + L.dark);
    f.d_scale = reinterpret_cast<const float*>(s.d_raw.get() + L.scale);
    f.d_dead = s.d_raw.get() + L.dead;
    f.saturation = field.saturation;
    f.interpolate = field.interpolate;
    f.d_out = d_out;
    f.d_counters = d_counters.get();
    f.rowOffset = first;
    launchFlatField(f, stream);
}

PreprocessStats RawRowsUpload::finish(const RawRows& raw, cudaStream_t stream) {
    TOMO_CUDA_CHECK(cudaMemcpyAsync(h_counters.get(), d_counters.get(), kCounterWords * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
    PreprocessStats stats;
    readFlatFieldStats(h_counters.get(), raw.source, raw.firstRow, raw.projections, raw.columns, stats);
    return stats;
}

std::size_t RawRowsUpload::deviceBytes() const {
    std::size_t bytes = d_counters.bytes();
    for (const Slot& s : m_slots) bytes += s.d_raw.bytes();
    return bytes;
}

} // namespace tomo::cuda
