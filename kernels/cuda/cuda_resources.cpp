#include "cuda_resources.h"

#include "tomo/worker_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <cstdio>
#include <string>

#include <sys/mman.h>

namespace tomo::cuda {

namespace {

std::string mib(std::size_t bytes) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return text;
}

const char* cufftMessage(cufftResult r) {
    switch (r) {
    case CUFFT_SUCCESS: return "success";
    case CUFFT_INVALID_PLAN: return "invalid plan";
    case CUFFT_ALLOC_FAILED: return "allocation failed";
    case CUFFT_INVALID_VALUE: return "invalid value";
    case CUFFT_INTERNAL_ERROR: return "internal error";
    case CUFFT_EXEC_FAILED: return "execution failed";
    case CUFFT_SETUP_FAILED: return "setup failed (is the CUDA driver usable?)";
    case CUFFT_INVALID_SIZE: return "invalid size";
    case CUFFT_INVALID_DEVICE: return "invalid device";
    case CUFFT_NO_WORKSPACE: return "no workspace";
    case CUFFT_NOT_IMPLEMENTED: return "not implemented";
    case CUFFT_NOT_SUPPORTED: return "not supported";
    default: return "unknown cuFFT error";
    }
}

} // namespace

namespace detail {

void throwCudaError(cudaError_t error, const char* call, const char* file, int line) {
    // Clear a non-sticky error so later calls are not blamed for it.
    (void)cudaGetLastError();
    throw DeviceError(std::string(call) + " failed: " + cudaGetErrorString(error) + " (" + cudaGetErrorName(error) +
                      ", " + file + ":" + std::to_string(line) + ")");
}

void throwCufftError(cufftResult result, const char* call, const char* file, int line) {
    const std::string message = std::string(call) + " failed: cuFFT " + cufftMessage(result) + " (" + file + ":" +
                                std::to_string(line) + ")";
    if (result == CUFFT_ALLOC_FAILED) throw OutOfMemory(message);
    throw DeviceError(message);
}

void* allocateDevice(int device, std::size_t bytes, const std::string& what) {
    if (bytes == 0) return nullptr;
    void* ptr = nullptr;
    const cudaError_t error = cudaMalloc(&ptr, bytes);
    if (error == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        throwDeviceOutOfMemory(device, what, bytes);
    }
    if (error != cudaSuccess) throwCudaError(error, ("cudaMalloc for " + what).c_str(), __FILE__, __LINE__);
    return ptr;
}

void freeDevice(void* ptr) noexcept {
    if (ptr) (void)cudaFree(ptr);
}

void* tryAllocatePinned(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    // Whole pages (no two buffers share one), touched by several threads,
    // then registered. On the H100 machine cudaHostAlloc locks 2-3 GB/s,
    // registering untouched pages 2.7 GB/s (the kernel faults them in one by
    // one), touched 4 KiB pages 6 GB/s, touched transparent huge pages
    // 16 GB/s (704 MiB: 126 ms -> 45 ms; freed in 16 ms instead of 76 ms).
    // Huge pages are asked for (MADV_HUGEPAGE) where the kernel gives them
    // on request only; elsewhere the advice is ignored.
    constexpr std::size_t kPage = 4096, kHugePage = std::size_t{2} << 20, kPart = std::size_t{32} << 20;
    const std::size_t align = bytes >= kHugePage ? kHugePage : kPage;
    const std::size_t rounded = (bytes + align - 1) / align * align;
    void* ptr = std::aligned_alloc(align, rounded);
    if (!ptr) throw OutOfMemory("not enough host memory: asked " + mib(bytes));
    if (align == kHugePage) (void)::madvise(ptr, rounded, MADV_HUGEPAGE);
    try {
        const int parts = static_cast<int>((rounded + kPart - 1) / kPart);
        WorkerPool touch(std::clamp(parts, 1, 8));
        touch.parallelFor(parts, [&](int part, int) {
            const std::size_t begin = static_cast<std::size_t>(part) * kPart;
            std::memset(static_cast<char*>(ptr) + begin, 0, std::min(kPart, rounded - begin));
        });
    } catch (...) {
        std::free(ptr);
        throw;
    }
    if (cudaHostRegister(ptr, rounded, cudaHostRegisterPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        std::free(ptr);
        return nullptr;
    }
    return ptr;
}

void* allocatePinned(std::size_t bytes, const std::string& what) {
    if (bytes == 0) return nullptr;
    void* ptr = tryAllocatePinned(bytes);
    if (!ptr) throw OutOfMemory("not enough page-locked host memory for " + what + ": asked " + mib(bytes));
    return ptr;
}

void freePinned(void* ptr) noexcept {
    if (!ptr) return;
    (void)cudaHostUnregister(ptr);
    std::free(ptr);
}

} // namespace detail

std::string deviceLabel(int device) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return "CUDA device " + std::to_string(device);
    }
    return "CUDA device " + std::to_string(device) + " (" + prop.name + ")";
}

void throwDeviceOutOfMemory(int device, const std::string& what, std::size_t bytes) {
    std::size_t freeBytes = 0, totalBytes = 0;
    std::string state;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
        state = mib(freeBytes) + " free of " + mib(totalBytes);
    else {
        (void)cudaGetLastError();
        state = "free memory unknown";
    }
    throw OutOfMemory(deviceLabel(device) + ": not enough device memory for " + what + ": asked " + mib(bytes) + ", " +
                      state);
}

void copyToDeviceNow(void* d_dst, const void* h_src, std::size_t bytes, cudaStream_t stream) {
    TOMO_CUDA_CHECK(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, stream));
    TOMO_CUDA_CHECK(cudaStreamSynchronize(stream));
}

namespace {

/// Whether the calling thread has a CUDA context current (the driver's
/// cuCtxGetCurrent, reached through the runtime so that nothing links the
/// driver library). A new thread has none until a call needs one; unknown
/// counts as yes.
bool threadHasContext() {
    using GetCurrent = int (*)(void** context);
    static const GetCurrent getCurrent = [] {
        void* function = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            function = nullptr;
        }
        return reinterpret_cast<GetCurrent>(function);
    }();
    void* context = nullptr;
    return !getCurrent || getCurrent(&context) != 0 || context != nullptr;
}

} // namespace

DeviceScope::DeviceScope(int device) {
    int previous = 0;
    TOMO_CUDA_CHECK(cudaGetDevice(&previous));
    const bool restore = threadHasContext();
    if (previous != device) TOMO_CUDA_CHECK(cudaSetDevice(device));
    if (restore && previous != device) m_previous = previous;
}

DeviceScope::~DeviceScope() {
    if (m_previous >= 0) (void)cudaSetDevice(m_previous);
}

void useDevice(int device) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    if (device < 0 || device >= count) return;
    TOMO_CUDA_CHECK(cudaSetDevice(device));
}

Stream Stream::create(bool highPriority) {
    Stream s;
    int least = 0, greatest = 0;
    TOMO_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    TOMO_CUDA_CHECK(cudaStreamCreateWithPriority(&s.m_stream, cudaStreamNonBlocking, highPriority ? greatest : least));
    return s;
}

Stream::~Stream() {
    if (m_stream) (void)cudaStreamDestroy(m_stream);
}

Stream& Stream::operator=(Stream&& o) noexcept {
    if (this != &o) {
        if (m_stream) (void)cudaStreamDestroy(m_stream);
        m_stream = std::exchange(o.m_stream, nullptr);
    }
    return *this;
}

Event Event::create(bool timing) {
    Event e;
    TOMO_CUDA_CHECK(cudaEventCreateWithFlags(&e.m_event, timing ? cudaEventDefault : cudaEventDisableTiming));
    return e;
}

Event::~Event() {
    if (m_event) (void)cudaEventDestroy(m_event);
}

Event& Event::operator=(Event&& o) noexcept {
    if (this != &o) {
        if (m_event) (void)cudaEventDestroy(m_event);
        m_event = std::exchange(o.m_event, nullptr);
    }
    return *this;
}

TextureObject::TextureObject(const cudaResourceDesc& resource, const cudaTextureDesc& texture) {
    TOMO_CUDA_CHECK(cudaCreateTextureObject(&m_texture, &resource, &texture, nullptr));
}

TextureObject::~TextureObject() {
    if (m_texture) (void)cudaDestroyTextureObject(m_texture);
}

TextureObject& TextureObject::operator=(TextureObject&& o) noexcept {
    if (this != &o) {
        if (m_texture) (void)cudaDestroyTextureObject(m_texture);
        m_texture = std::exchange(o.m_texture, 0);
    }
    return *this;
}

CudaArray::CudaArray(int device, const cudaChannelFormatDesc& format, int width, int height, const std::string& what) {
    const std::size_t bytes = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
                              static_cast<std::size_t>((format.x + format.y + format.z + format.w) / 8);
    const cudaError_t error = cudaMallocArray(&m_array, &format, width, height);
    if (error == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        throwDeviceOutOfMemory(device, what, bytes);
    }
    if (error != cudaSuccess) detail::throwCudaError(error, "cudaMallocArray", __FILE__, __LINE__);
    m_bytes = bytes;
}

CudaArray::~CudaArray() {
    if (m_array) (void)cudaFreeArray(m_array);
}

CudaArray& CudaArray::operator=(CudaArray&& o) noexcept {
    if (this != &o) {
        if (m_array) (void)cudaFreeArray(m_array);
        m_array = std::exchange(o.m_array, nullptr);
        m_bytes = std::exchange(o.m_bytes, 0);
    }
    return *this;
}

namespace {

/// Destroys a plan whose planning failed (its owner's destructor does not
/// run for a constructor that throws) and throws what cuFFT said.
[[noreturn]] void throwPlanFailure(cufftHandle plan, cufftResult result, int device, const std::string& what,
                                   std::size_t bytes, const char* call) {
    (void)cufftDestroy(plan);
    if (result == CUFFT_ALLOC_FAILED) throwDeviceOutOfMemory(device, what, bytes);
    detail::throwCufftError(result, call, __FILE__, __LINE__);
}

} // namespace

FftPlan::FftPlan(int device, int length, int batch) {
    TOMO_CUFFT_CHECK(cufftCreate(&m_plan));
    std::size_t work = 0;
    const cufftResult result = cufftMakePlan1d(m_plan, length, CUFFT_C2C, batch, &work);
    if (result != CUFFT_SUCCESS)
        throwPlanFailure(m_plan, result, device,
                         "the cuFFT plan (" + std::to_string(batch) + " rows of " + std::to_string(length) + ")",
                         work ? work : static_cast<std::size_t>(length) * batch * 8, "cufftMakePlan1d");
    m_valid = true;
    m_workBytes = work;
}

FftPlan::FftPlan(int device, const FftLayout& l, const std::string& what) {
    TOMO_CUFFT_CHECK(cufftCreate(&m_plan));
    std::size_t work = 0;
    cufftResult result = cufftSetAutoAllocation(m_plan, 0);
    if (result == CUFFT_SUCCESS) {
        long long n[3], inembed[3], onembed[3];
        std::copy_n(l.n, 3, n);
        std::copy_n(l.inembed, 3, inembed);
        std::copy_n(l.onembed, 3, onembed);
        result = cufftMakePlanMany64(m_plan, l.rank, n, inembed, l.istride, l.idist, onembed, l.ostride, l.odist,
                                     l.type, l.batch, &work);
    }
    if (result != CUFFT_SUCCESS) throwPlanFailure(m_plan, result, device, what, work, "cufftMakePlanMany64");
    m_valid = true;
    m_workBytes = work;
}

FftPlan::~FftPlan() {
    if (m_valid) (void)cufftDestroy(m_plan);
}

FftPlan& FftPlan::operator=(FftPlan&& o) noexcept {
    if (this != &o) {
        if (m_valid) (void)cufftDestroy(m_plan);
        m_plan = std::exchange(o.m_plan, 0);
        m_valid = std::exchange(o.m_valid, false);
        m_workBytes = o.m_workBytes;
    }
    return *this;
}

} // namespace tomo::cuda
