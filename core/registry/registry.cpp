#include "tomo/registry.h"

#include "tomo/autotune.h"
#include "tomo/cpu_backends.h"
#include "tomo/error.h"
#include "tomo/iterative_plan.h"
#include "tomo/projector.h"

#if TOMO_WITH_CUDA
#include "tomo/cuda/cuda_backends.h"
#endif
#if TOMO_WITH_OPENCL
#include "tomo/opencl/opencl_backends.h"
#endif

#include <algorithm>
#include <cstdio>
#include <utility>

namespace tomo {

BackendRegistry& BackendRegistry::instance() {
    static BackendRegistry registry = [] {
        BackendRegistry r;
        r.add(makeCpuReferenceBackend());
        r.add(makeCpuBackend());
        r.add(makeGridrecCpuBackend());
#if TOMO_WITH_OPENCL
        opencl::registerBackends(r);
#endif
#if TOMO_WITH_CUDA
        cuda::registerBackends(r);
        setConeGpuBackprojector(&cuda::backprojectCone);
        setConeGpuFdk(&cuda::reconstructFdk);
        setConeGpuProjector(&cuda::makeCudaConeProjector);
#endif
        return r;
    }();
    return registry;
}

void BackendRegistry::add(std::unique_ptr<Backend> backend) {
    m_backends.push_back(std::move(backend));
}

std::vector<const Backend*> BackendRegistry::backends() const {
    std::vector<const Backend*> out;
    for (const auto& b : m_backends) out.push_back(b.get());
    return out;
}

const Backend* BackendRegistry::find(std::string_view name) const {
    for (const auto& b : m_backends)
        if (b->name() == name) return b.get();
    return nullptr;
}

namespace {

std::string knownNames(const BackendRegistry& registry) {
    std::string names = "auto";
    for (const Backend* b : registry.backends()) names += ", " + b->name();
    return names;
}

bool hasKernelParameters(const Backend& b, const ReconOptions& options) {
    const std::vector<std::string> candidates = b.tuningCandidates(options);
    return std::any_of(candidates.begin(), candidates.end(), [](const std::string& c) { return !c.empty(); });
}

/// A tuning given to a strategy without kernel parameters is refused, not
/// kept unused (and recorded as if it had run); the strategies with
/// parameters check theirs in checkOptions.
void checkTuning(const BackendRegistry& registry, const Backend& b, const ReconOptions& options) {
    if (options.tuning.empty() || hasKernelParameters(b, options)) return;
    std::string withParameters;
    for (const Backend* other : registry.backends())
        if (hasKernelParameters(*other, options)) withParameters += (withParameters.empty() ? "" : ", ") + other->name();
    std::string shown = options.tuning.substr(0, 40);
    for (char& c : shown)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    throw InvalidArgument("tuning '" + shown + (options.tuning.size() > 40 ? "...'" : "'") + ": strategy '" + b.name() +
                          "' has no kernel parameters (" +
                          (withParameters.empty() ? std::string("no strategy of this build has any")
                                                  : "only " + withParameters + " take them") +
                          "); leave the tuning out");
}

bool accepts(const BackendRegistry& registry, const Backend& b, const ReconOptions& options) {
    // Slices per pass 0 (chosen by the tuner): any the strategy takes.
    for (const int passes : options.slicesPerPass == 0 ? std::vector<int>{1, 2, 4} : std::vector<int>{options.slicesPerPass}) {
        try {
            ReconOptions o = options;
            o.slicesPerPass = passes;
            checkTuning(registry, b, o);
            b.checkOptions(o);
            return true;
        } catch (const InvalidArgument&) {
        }
    }
    return false;
}

/// Whether "auto" weighs the OpenCL strategies (see opencl::autoConsiders).
bool openclForAuto([[maybe_unused]] const ReconOptions& options) {
#if TOMO_WITH_OPENCL
    return opencl::autoConsiders(options.openclDevice);
#else
    return false;
#endif
}

} // namespace

const Backend& BackendRegistry::resolve(const ReconOptions& options, const ReconGeometry& geometry) const {
    return *find(resolveOptions(options, geometry).strategy);
}

void BackendRegistry::useDevice(const std::string& strategy, int device) const {
    for (const auto& b : m_backends)
        if (strategy == "auto" || b->name() == strategy) b->useDevice(device);
}

std::vector<const Backend*> BackendRegistry::autoCandidates(const ReconOptions& options) const {
    // The available exact backends that accept the options (and the
    // approximate ones when allowed), in registry order but OpenCL first
    // (its fallback preference is the last: CUDA, then the native CPU
    // strategies, then OpenCL). OpenCL on a CPU driver counts only when the
    // user chose it.
    std::vector<const Backend*> candidates;
    for (const auto& b : m_backends)
        if ((b->isExact() || options.allowApproximate) && b->unavailableReason().empty() && accepts(*this, *b, options) &&
            (b->family() != "opencl" || openclForAuto(options)))
            candidates.push_back(b.get());
    std::stable_partition(candidates.begin(), candidates.end(),
                          [](const Backend* b) { return b->family() == "opencl"; });
    return candidates;
}

namespace {

/// The strategies with a projector pair, for messages.
std::string projectorNames(const BackendRegistry& registry) {
    std::string names;
    for (const Backend* b : registry.backends())
        if (b->hasProjector()) names += (names.empty() ? "" : ", ") + b->name();
    return names.empty() ? std::string("none in this build") : names;
}

/// An iterative method on a strategy without a projector pair is refused.
void checkMethod(const BackendRegistry& registry, const Backend& b, const ReconOptions& options) {
    checkIterativeOptions(options);
    if (options.iterative.isIterative() && !b.hasProjector())
        throw InvalidArgument("strategy '" + b.name() + "' cannot run method " +
                              std::string(methodName(options.iterative.method)) +
                              ": it has no forward projector (the iterative methods run on " + projectorNames(registry) +
                              ")");
}

} // namespace

ReconOptions BackendRegistry::resolveOptions(const ReconOptions& options, const ReconGeometry& geometry) const {
    checkIterativeOptions(options);
    if (options.iterative.isIterative() && options.strategy == "auto") {
        // Iterative methods run on the family's projector pair, whatever FBP
        // kernel the tuner would pick: the preferred available strategy
        // (the last candidate: CUDA, else cpu) that has one.
        const std::vector<const Backend*> candidates = autoCandidates(options);
        for (auto it = candidates.rbegin(); it != candidates.rend(); ++it)
            if ((*it)->hasProjector()) {
                ReconOptions resolved = options;
                resolved.strategy = (*it)->name();
                resolved.tuning.clear();
                return resolved;
            }
        throw InvalidArgument("no available strategy can run method " +
                              std::string(methodName(options.iterative.method)) + " with these options (the iterative "
                              "methods run on " + projectorNames(*this) + ")");
    }
    if (options.strategy != "auto") {
        const Backend* b = find(options.strategy);
        if (!b)
            throw InvalidArgument("unknown strategy '" + options.strategy.substr(0, 40) +
                                  (options.strategy.size() > 40 ? "...'" : "'") + " (known: " + knownNames(*this) + ")");
        if (auto why = b->unavailableReason(); !why.empty())
            throw DeviceError("strategy '" + b->name() + "' is not available: " + why);
        checkTuning(*this, *b, options);
        b->checkOptions(options);
        checkMethod(*this, *b, options);
        return options;
    }
    const std::vector<const Backend*> candidates = autoCandidates(options);
    if (candidates.empty())
        throw InvalidArgument("no available strategy accepts these options (interpolation " +
                              std::string(interpolationName(options.interpolation)) + ", precision " +
                              std::string(precisionName(options.precision)) + ", slices per pass " +
                              (options.slicesPerPass == 0 ? std::string("auto") : std::to_string(options.slicesPerPass)) +
                              (options.tuning.empty() ? "" : ", tuning '" + options.tuning.substr(0, 40) + "'") + ")");
    const Autotuner::Choice choice = Autotuner::instance().chooseTuned(candidates, geometry, options);
    ReconOptions resolved = options;
    resolved.strategy = choice.backend->name();
    resolved.tuning = choice.tuning;
    resolved.slicesPerPass = choice.slicesPerPass;
    return resolved;
}

std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry, const ReconOptions& options) {
    const ReconOptions resolved = BackendRegistry::instance().resolveOptions(options, geometry);
    const Backend& backend = *BackendRegistry::instance().find(resolved.strategy);
    if (resolved.iterative.isIterative())
        return std::make_unique<IterativePlan>(geometry, resolved, backend.createProjector(geometry, resolved));
    return backend.createPlan(geometry, resolved);
}

ConeBackprojector coneBackprojectorFor(std::string_view strategy, bool anyBackend) {
    const BackendRegistry& registry = BackendRegistry::instance(); // installs the GPU back-projector
    if (strategy == "auto") return gpuDevices().empty() ? ConeBackprojector::Fast : ConeBackprojector::Cuda;
    for (ConeBackprojector b : {ConeBackprojector::Reference, ConeBackprojector::Fast, ConeBackprojector::Cuda})
        if (strategy == coneBackprojectorName(b)) return b;
    if (anyBackend)
        if (const Backend* b = registry.find(strategy))
            return b->family() == "cpu" ? ConeBackprojector::Fast : ConeBackprojector::Cuda;
    throw InvalidArgument("strategy '" + std::string(strategy) +
                          "' has no fan/cone-beam back-projector (expected auto, cpu, cpu-reference or cuda)");
}

std::vector<GpuDevice> gpuDevices() {
#if TOMO_WITH_CUDA
    return cuda::listDevices();
#else
    return {};
#endif
}

std::vector<OpenClDevice> openclDevices() {
#if TOMO_WITH_OPENCL
    return opencl::listDevices();
#else
    return {};
#endif
}

std::string openclStatus() {
#if TOMO_WITH_OPENCL
    return opencl::status();
#else
    return "this build has no OpenCL support (configure with -DTOMO_WITH_OPENCL=ON)";
#endif
}

std::vector<std::string> openclDeviceLines() {
    std::vector<std::string> lines;
    for (const OpenClDevice& d : openclDevices()) {
        char memory[32];
        std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(d.memoryBytes) / (1u << 30));
        std::string line = "OpenCL " + std::to_string(d.index) + ": " + d.name + " (" + d.platform + "), " + d.type +
                           ", " + std::to_string(d.computeUnits) + " units, " + memory;
        for (const auto& [has, feature] : {std::pair{d.images, "images"}, {d.fp16, "fp16"}, {d.fp64, "fp64"}})
            if (has) line += std::string(", ") + feature;
        lines.push_back(line);
    }
    if (lines.empty()) lines.push_back("OpenCL: none (" + openclStatus() + ")");
    return lines;
}

double measureTextureFetchRate(int device) {
#if TOMO_WITH_CUDA
    return cuda::measureTextureFetchRate(device);
#else
    (void)device;
    throw DeviceError("this build has no CUDA support: no texture fetch rate to measure");
#endif
}

} // namespace tomo
