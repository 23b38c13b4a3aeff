// The FBP ramp filter (FFTW on the CPU; the GPU backends reuse filterResponse).
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace tomo {

enum class FilterWindow { RamLak, SheppLogan, Cosine, Hamming, Hann };
enum class Padding { Zero, Edge };

struct FilterOptions {
    FilterWindow window = FilterWindow::RamLak;
    /// How the row is extended to the padded length: zeros, or repeating
    /// the edge values (reduces cupping when the object exceeds the field).
    Padding padding = Padding::Edge;
};

/// "ram-lak", "shepp-logan", "cosine", "hamming", "hann".
std::string_view filterWindowName(FilterWindow w);
/// Inverse of filterWindowName; throws InvalidArgument listing the valid names.
FilterWindow parseFilterWindow(std::string_view name);
std::string_view paddingName(Padding p);
Padding parsePadding(std::string_view name);

/// Padded row length for `bins` detector bins: the smallest length >= 2 * bins
/// whose only prime factors are 2, 3, 5, 7 (fast for FFTW and cuFFT).
int paddedLength(int bins);

/// Real frequency response of the filter for an r2c transform of length
/// `padded`: padded / 2 + 1 values, already including the 1 / padded
/// normalisation of the inverse transform. The ramp is built from the
/// band-limited spatial kernel (Kak & Slaney eq. 61: h(0) = 1/4,
/// h(n odd) = -1 / (pi n)^2), which keeps the DC term right, times the window.
/// Filtered with this and summed with angularWeights(), an FBP returns
/// attenuation per pixel. Shared by every backend so all filter alike.
std::vector<float> filterResponse(int padded, const FilterOptions& options);

/// Filters sinogram rows with FFTW. Owns its plans and buffers; reuse it for
/// all sinograms of one width. Not thread-safe (one per thread).
class SinogramFilter {
public:
    /// Throws InvalidArgument for bins < 1.
    SinogramFilter(int bins, const FilterOptions& options);
    ~SinogramFilter();
    SinogramFilter(const SinogramFilter&) = delete;
    SinogramFilter& operator=(const SinogramFilter&) = delete;

    int bins() const { return m_bins; }
    int padded() const { return m_padded; }

    /// Filters `rowCount` rows of `bins` values in place, then multiplies row
    /// r by rowWeights[r % rowWeights.size()] (the angular weights; empty = 1).
    void apply(std::span<float> rows, int rowCount, std::span<const double> rowWeights = {});

private:
    struct Impl;
    int m_bins = 0;
    int m_padded = 0;
    Impl* m_impl = nullptr;
};

} // namespace tomo
