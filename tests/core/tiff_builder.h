// Test helper: writes small TIFF files page by page with libtiff, so the
// readers are tested against files built independently of the writers.
#pragma once

#if TOMO_WITH_TIFF

#include "tomo/dataset.h"

#include <tiffio.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace tomo::test {

/// Writes one page per entry of `pages` (each w x h values) as uint8,
/// uint16 or float32 (deflate-compressed unless `compression` says
/// otherwise); tiled (16 x 16 tiles) or in strips of `rowsPerStrip`. Throws
/// std::runtime_error when libtiff fails.
inline void writeTiff(const std::filesystem::path& path, int w, int h, const std::vector<std::vector<float>>& pages,
                      SampleType type, bool tiled = false, int rowsPerStrip = 2,
                      std::uint16_t compression = COMPRESSION_ADOBE_DEFLATE) {
    TIFF* t = TIFFOpen(path.c_str(), "w");
    if (!t) throw std::runtime_error("cannot create " + path.string());
    const int bits = type == SampleType::UInt8 ? 8 : type == SampleType::UInt16 ? 16 : 32;
    const auto fail = [&](const char* what) {
        TIFFClose(t);
        throw std::runtime_error(std::string("cannot write ") + what + " of " + path.string());
    };
    for (const auto& page : pages) {
        TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
        TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
        TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bits);
        TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, type == SampleType::Float32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
        const std::size_t bytes = static_cast<std::size_t>(bits / 8);
        const auto pack = [&](float v, unsigned char* dst) {
            if (type == SampleType::UInt8) *dst = static_cast<std::uint8_t>(v);
            else if (type == SampleType::UInt16) {
                const auto u = static_cast<std::uint16_t>(v);
                std::memcpy(dst, &u, 2);
            } else std::memcpy(dst, &v, 4);
        };
        if (tiled) {
            const int tile = 16;
            TIFFSetField(t, TIFFTAG_TILEWIDTH, tile);
            TIFFSetField(t, TIFFTAG_TILELENGTH, tile);
            std::vector<unsigned char> buffer(tile * tile * bytes);
            for (int ty = 0; ty < h; ty += tile)
                for (int tx = 0; tx < w; tx += tile) {
                    std::fill(buffer.begin(), buffer.end(), 0);
                    for (int y = ty; y < std::min(ty + tile, h); ++y)
                        for (int x = tx; x < std::min(tx + tile, w); ++x)
                            pack(page[y * w + x], &buffer[((y - ty) * tile + (x - tx)) * bytes]);
                    if (TIFFWriteTile(t, buffer.data(), tx, ty, 0, 0) < 0) fail("a tile");
                }
        } else {
            TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, rowsPerStrip);
            std::vector<unsigned char> row(w * bytes);
            for (int y = 0; y < h; ++y) {
                for (int x = 0; x < w; ++x) pack(page[y * w + x], &row[x * bytes]);
                if (TIFFWriteScanline(t, row.data(), y, 0) < 0) fail("a row");
            }
        }
        if (!TIFFWriteDirectory(t)) fail("a page");
    }
    TIFFClose(t);
}

} // namespace tomo::test

#endif
