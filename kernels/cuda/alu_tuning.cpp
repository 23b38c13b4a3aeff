#include "alu_tuning.h"

#include "tomo/error.h"
#include "tomo/tuning_text.h"

#include <algorithm>
#include <string_view>

namespace tomo::cuda {

namespace {

AluCacheKind cacheKind(TextureKernel kernel, bool linear) {
    if (kernel == TextureKernel::Oversample) return AluCacheKind::Oversample;
    return linear ? AluCacheKind::Linear : AluCacheKind::Nearest;
}

bool shapeFits(TextureKernel kernel, int shape, const ReconOptions& options) {
    return aluSharedBytes(kernel, shape, options.slicesPerPass, options.interpolation == Interpolation::Linear) <=
           kMaxStaticSharedBytes;
}

/// The defaults: the fastest shape and share of each mode measured on the
/// H100 (docs/cuda_notes.md, "ALU strategies"): alu with 16 pixels per
/// thread in 64x64 tiles (shape 3) in every mode; oversample by mode;
/// hybrid with the 40-register shape 1, whose six blocks per SM make a share
/// of 6 in 16 two texture blocks per SM (4 slices: shape 5, share 10).
AluTuning defaultTuning(TextureKernel kernel, const ReconOptions& options) {
    AluTuning t;
    const int slices = options.slicesPerPass;
    switch (kernel) {
    case TextureKernel::Alu: t.shape = 3; break;
    case TextureKernel::Oversample: t.shape = slices == 1 ? 4 : slices == 2 ? 1 : 5; break;
    case TextureKernel::Hybrid:
        t.shape = slices == 4 ? 5 : 1;
        t.textureShare = slices == 4 ? 10 : 6;
        break;
    default: break;
    }
    return t;
}

} // namespace

std::string strategyName(TextureKernel kernel) {
    switch (kernel) {
    case TextureKernel::Standard: return "tex-standard";
    case TextureKernel::Optimized: return "tex-optimized";
    case TextureKernel::Alu: return "alu";
    case TextureKernel::Hybrid: return "hybrid";
    case TextureKernel::Oversample: return "oversample";
    }
    return "?";
}

std::size_t aluSharedBytes(TextureKernel kernel, int shape, int channels, bool linear) {
    return aluCacheBytes(cacheKind(kernel, linear), kAluShapes[shape], channels);
}

AluTuning parseAluTuning(TextureKernel kernel, const ReconOptions& options) {
    const std::string who = "strategy '" + strategyName(kernel) + "'";
    if (!isAluFamily(kernel)) {
        if (!options.tuning.empty())
            throw InvalidArgument(who + " takes no tuning (got '" + options.tuning +
                                  "'); alu, hybrid and oversample do");
        return {};
    }
    AluTuning t = defaultTuning(kernel, options);
    for (const TuningItem& item : tuningItems(options.tuning)) {
        const std::string_view key = item.key;
        if (key == "shape") {
            t.shape = static_cast<int>(tuningNumber(item, 0, kAluShapeCount - 1, true, who));
        } else if (key == "share" && kernel == TextureKernel::Hybrid) {
            t.textureShare = static_cast<int>(tuningNumber(item, 0, 16, true, who));
        } else {
            throw InvalidArgument(who + ": unknown tuning '" + std::string(item.text) + "' (expected shape=0.." +
                                  std::to_string(kAluShapeCount - 1) +
                                  (kernel == TextureKernel::Hybrid ? ", share=0..16" : "") + ", comma-separated)");
        }
    }
    if (!shapeFits(kernel, t.shape, options)) {
        const AluShape& s = kAluShapes[t.shape];
        throw InvalidArgument(who + ": shape " + std::to_string(t.shape) + " (" + std::to_string(s.tile) + "x" +
                              std::to_string(s.tile) + " pixels, " + std::to_string(s.group) +
                              " projections per step) needs " +
                              std::to_string(aluSharedBytes(kernel, t.shape, options.slicesPerPass,
                                                            options.interpolation == Interpolation::Linear)) +
                              " bytes of shared memory for " + std::to_string(options.slicesPerPass) +
                              " slice(s) per pass (at most " + std::to_string(kMaxStaticSharedBytes) + ")");
    }
    return t;
}

std::string aluTuningText(TextureKernel kernel, const AluTuning& tuning) {
    std::string text = "shape=" + std::to_string(tuning.shape);
    if (kernel == TextureKernel::Hybrid) text += ",share=" + std::to_string(tuning.textureShare);
    return text;
}

std::vector<std::string> aluTuningCandidates(TextureKernel kernel, const ReconOptions& options) {
    if (!isAluFamily(kernel)) return {""};
    ReconOptions plain = options;
    plain.tuning.clear();
    const AluTuning first = defaultTuning(kernel, plain);
    std::vector<std::string> out{aluTuningText(kernel, first)};
    const int shares[] = {first.textureShare, 4, 6, 8, 10};
    for (int shape = 0; shape < kAluShapeCount; ++shape) {
        if (!shapeFits(kernel, shape, plain)) continue;
        for (int share : shares) {
            if (kernel != TextureKernel::Hybrid && share != first.textureShare) continue;
            const std::string text = aluTuningText(kernel, AluTuning{shape, share});
            if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
        }
    }
    return out;
}

} // namespace tomo::cuda
