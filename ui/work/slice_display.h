// Preparing a finished slice for the screen: colours, and the comparison
// with a reference (difference image and figures). Called on the worker
// thread that reconstructs, so the UI thread only shows ready images.
#pragma once

#include "work/recon_types.h"

#include <cstdint>
#include <functional>
#include <span>

namespace tomo::ui {

/// Colours `image` through the settings' colormap with their window, or
/// with the automatic window of `stats` when settings.autoWindow is set, and
/// shrinks it for a view at settings.sliceZoom (< 1).
/// Colouring runs on `pool` when given.
SliceDisplay prepareDisplay(const tomo::Image& image, const ImageStats& stats, const DisplaySettings& settings,
                            tomo::WorkerPool* pool = nullptr);


/// result − reference with the quality figures over the pixels where
/// `mask` is non-zero (every pixel when `mask` is empty), and the
/// difference coloured in the diverging map with a symmetric window: the
/// 99.5th percentile of |difference| over those pixels, shrunk for a view at
/// `zoom` (shrinkForView). The reference must match the result's size
/// (referenceFits); a mismatch sets `error`. The difference and its colours
/// are spread over `pool` when given. `abandoned` is asked between the steps
/// (figures, difference, colours, scaling): when it says true the work is
/// dropped with tomo::Cancelled (a newer slice makes it stale).
Comparison compareWithReference(const SliceResult& result, const ReferenceResult& reference,
                                std::span<const std::uint8_t> mask, double zoom = 1.0,
                                tomo::WorkerPool* pool = nullptr, const std::function<bool()>& abandoned = {});

} // namespace tomo::ui
