// Plain float32 image containers shared by every layer (no Qt, no CUDA).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace tomo {

/// One 2D float image, row-major: value (x, y) at data[y * width + x].
struct Image {
    int width = 0;
    int height = 0;
    std::vector<float> data;

    Image() = default;
    Image(int w, int h, float fill = 0.0f)
        : width(w), height(h), data(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), fill) {}

    float& at(int x, int y) { return data[static_cast<std::size_t>(y) * width + x]; }
    float at(int x, int y) const { return data[static_cast<std::size_t>(y) * width + x]; }
    std::size_t size() const { return data.size(); }
};

/// A stack of 2D float images of one size, image-major:
/// value (x, y, z) at data[(z * height + y) * width + x].
/// Used for sinogram stacks (z = detector row, y = angle, x = bin) and for
/// reconstructed volumes (z = slice, y = row, x = column).
struct ImageStack {
    int width = 0;
    int height = 0;
    int depth = 0;
    std::vector<float> data;

    ImageStack() = default;
    ImageStack(int w, int h, int d, float fill = 0.0f)
        : width(w), height(h), depth(d),
          data(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * static_cast<std::size_t>(d), fill) {}

    std::size_t imageSize() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(height); }
    std::span<float> image(int z) { return {data.data() + imageSize() * z, imageSize()}; }
    std::span<const float> image(int z) const { return {data.data() + imageSize() * z, imageSize()}; }
    /// A copy of image z as an Image.
    Image slice(int z) const {
        Image out(width, height);
        auto src = image(z);
        out.data.assign(src.begin(), src.end());
        return out;
    }
    /// The stack with depth and height swapped, [z][y][x] -> [y][z][x]:
    /// sinograms [row][view][column] <-> projections [view][row][column].
    ImageStack swapDepthAndHeight() const {
        ImageStack out(width, depth, height);
        const auto w = static_cast<std::size_t>(width);
        for (int z = 0; z < depth; ++z)
            for (int y = 0; y < height; ++y)
                std::copy_n(data.data() + (static_cast<std::size_t>(z) * height + y) * w, w,
                            out.data.data() + (static_cast<std::size_t>(y) * depth + z) * w);
        return out;
    }
};

} // namespace tomo
