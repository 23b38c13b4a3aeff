// The corrections of the preprocessing stage (tomo/corrections.h) on the
// GPU: each one the device twin of its CPU definition, equal to it within
// 1e-5 relative (medians and sorts exactly; sums and FFTs to float rounding).
// Host-side C++20 classes: each owns its scratch memory and FFT plans,
// allocated once for a shape, and works in place on device arrays on the
// caller's stream. Kernels live in the *_kernels.cu files next to them, with
// plain launcher headers (C++17, as nvcc compiles them).
//
//   DeviceZingers        removeZingers on a batch of images
//   DeviceStripes        removeStripes (sorting, large, dead, all; wavelet
//                        through DeviceWaveletStripes) on a batch of sinograms
//   DevicePaganin        PaganinFilter::apply on every projection of a chunk
//   DeviceHalfAcquisition stitchHalfAcquisition on a batch of sinograms
//
// Layouts as the stage's: a sinogram is [projection][column]; a chunk is
// [block row][projection][column] (a batch of sinograms, one per row).
#pragma once

#include "kernel_launch.h"
#include "tomo/corrections.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace tomo::cuda {

/// removeZingers (tomo/corrections.h) of `count` images of height x width
/// stored one after another, in place, each image on its own (its own mean
/// |value| floor).
class DeviceZingers {
public:
    /// Scratch for up to maxCount images. Throws OutOfMemory, DeviceError.
    DeviceZingers(int device, int height, int width, int maxCount);
    ~DeviceZingers();
    DeviceZingers(const DeviceZingers&) = delete;
    DeviceZingers& operator=(const DeviceZingers&) = delete;

    struct Found {
        std::vector<std::size_t> counts;     ///< zingers replaced, per image
        /// Positions in images [listFirst, listLast): row = image index,
        /// projection = y, column = x, in (image, y, x) order, at most
        /// maxPositions of them (the first ones in that order).
        std::vector<PixelPosition> positions;
    };
    /// Runs on `stream` and waits for it (the counts come back to the host).
    /// Throws InvalidArgument for count > maxCount or a bad window.
    Found apply(float* d_images, int count, const ZingerOptions& options, ValueKind kind, StreamHandle stream,
                int listFirst, int listLast, std::size_t maxPositions);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Münch et al.'s wavelet-Fourier stripe removal (removeStripesWavelet) of
/// one sinogram: Daubechies-5 DWT levels by kernels, the vertical-detail
/// bands damped along the projections with cuFFT.
class DeviceWaveletStripes {
public:
    DeviceWaveletStripes(int device, int projections, int columns, int level, double sigma);
    ~DeviceWaveletStripes();
    DeviceWaveletStripes(const DeviceWaveletStripes&) = delete;
    DeviceWaveletStripes& operator=(const DeviceWaveletStripes&) = delete;
    /// In place on `stream` (asynchronous).
    void apply(float* d_sinogram, StreamHandle stream);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// removeStripes(options) of `count` sinograms (projections x columns, one
/// after another), in place. The detection steps of the large and dead
/// methods (tomo::detectStripes over one value per column) run on the host
/// with core's own function, so apply() may wait for the stream.
class DeviceStripes {
public:
    /// Scratch for up to maxCount sinograms. Throws InvalidArgument as
    /// RingOptions::validate, OutOfMemory, DeviceError.
    DeviceStripes(int device, int projections, int columns, const RingOptions& options, int maxCount);
    ~DeviceStripes();
    DeviceStripes(const DeviceStripes&) = delete;
    DeviceStripes& operator=(const DeviceStripes&) = delete;
    void apply(float* d_sinograms, int count, StreamHandle stream);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// PaganinFilter(rows, columns, options).apply on each projection of a
/// chunk: the rows x columns block of projection a is chunk values
/// [r][a][c]; it is edge-padded exactly as PaganinFilter pads, filtered with
/// cuFFT (R2C / C2R, batched over projections), and rows [firstKept,
/// firstKept + keptRows) of the result are written back (the others are left
/// as they were).
class DevicePaganin {
public:
    /// Scratch for batches of projections (bounded memory). Throws
    /// InvalidArgument as PaganinFilter, OutOfMemory, DeviceError.
    DevicePaganin(int device, int rows, int columns, const PaganinOptions& options);
    ~DevicePaganin();
    DevicePaganin(const DevicePaganin&) = delete;
    DevicePaganin& operator=(const DevicePaganin&) = delete;
    /// d_chunk holds rows x projections x columns values.
    void apply(float* d_chunk, int projections, int firstKept, int keptRows, StreamHandle stream);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// stitchHalfAcquisition(layout) of `count` sinograms (inputProjections x
/// layout.inputColumns each, one after another) into d_out
/// (layout.views.size() x layout.columns each).
class DeviceHalfAcquisition {
public:
    DeviceHalfAcquisition(int device, const HalfAcquisitionLayout& layout, int inputProjections);
    ~DeviceHalfAcquisition();
    DeviceHalfAcquisition(const DeviceHalfAcquisition&) = delete;
    DeviceHalfAcquisition& operator=(const DeviceHalfAcquisition&) = delete;
    void apply(const float* d_in, int count, float* d_out, StreamHandle stream) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace tomo::cuda
