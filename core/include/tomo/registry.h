// All back-projection strategies of this build, by name.
#pragma once

#include "tomo/backend.h"

#include <memory>
#include <string_view>
#include <vector>

namespace tomo {

class BackendRegistry {
public:
    /// The registry with every backend compiled into this build (CPU always;
    /// CUDA and OpenCL when built with them).
    static BackendRegistry& instance();

    void add(std::unique_ptr<Backend> backend);

    /// All backends, available or not, in a stable order (CPU first).
    std::vector<const Backend*> backends() const;

    /// The backend of that name, or nullptr.
    const Backend* find(std::string_view name) const;

    /// The backend to use for `options.strategy`: a named one (throws
    /// InvalidArgument listing the names if unknown, DeviceError with the
    /// reason if unavailable) or, for "auto", the fastest available exact
    /// strategy for these options (autotuned on GPUs, see autotune.h).
    const Backend& resolve(const ReconOptions& options, const ReconGeometry& geometry) const;

private:
    std::vector<std::unique_ptr<Backend>> m_backends;
};

/// Shortcut: resolve the strategy and create its plan.
std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry, const ReconOptions& options);

} // namespace tomo
