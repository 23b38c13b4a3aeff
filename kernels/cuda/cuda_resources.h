// Error checking and RAII owners for the CUDA runtime and cuFFT objects the
// plans hold. Host-only C++ (includes the CUDA runtime API, not the kernels).
//
//   TOMO_CUDA_CHECK(call)   throws tomo::DeviceError naming the call, file, line
//   TOMO_CUFFT_CHECK(call)  the same for cuFFT (allocation failures become
//                           tomo::OutOfMemory)
//   DeviceBuffer<T>, PinnedBuffer<T>, Stream, Event, TextureObject, CudaArray,
//   FftPlan: move-only owners; destructors never throw.
#pragma once

#include "tomo/error.h"

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cstddef>
#include <string>
#include <utility>

namespace tomo::cuda {

namespace detail {
[[noreturn]] void throwCudaError(cudaError_t error, const char* call, const char* file, int line);
[[noreturn]] void throwCufftError(cufftResult result, const char* call, const char* file, int line);
} // namespace detail

/// Throws tomo::DeviceError("<call> failed: <CUDA message> (<file>:<line>)").
#define TOMO_CUDA_CHECK(call)                                                                      \
    do {                                                                                           \
        const cudaError_t tomo_cuda_error_ = (call);                                               \
        if (tomo_cuda_error_ != cudaSuccess)                                                       \
            ::tomo::cuda::detail::throwCudaError(tomo_cuda_error_, #call, __FILE__, __LINE__);     \
    } while (0)

#define TOMO_CUFFT_CHECK(call)                                                                     \
    do {                                                                                           \
        const cufftResult tomo_cufft_result_ = (call);                                             \
        if (tomo_cufft_result_ != CUFFT_SUCCESS)                                                   \
            ::tomo::cuda::detail::throwCufftError(tomo_cufft_result_, #call, __FILE__, __LINE__);  \
    } while (0)

/// "CUDA device 0 (NVIDIA H100 80GB HBM3)".
std::string deviceLabel(int device);

/// Throws tomo::OutOfMemory: "<label>: not enough device memory for <what>:
/// asked X MiB, Y MiB free of Z MiB".
[[noreturn]] void throwDeviceOutOfMemory(int device, const std::string& what, std::size_t bytes);

namespace detail {
void* allocateDevice(int device, std::size_t bytes, const std::string& what);
void freeDevice(void* ptr) noexcept;
/// Page-locked host memory, or nullptr where the system refuses to lock it
/// (throws OutOfMemory when there is no memory at all).
void* tryAllocatePinned(std::size_t bytes);
/// Throws OutOfMemory naming `what` where the system refuses.
void* allocatePinned(std::size_t bytes, const std::string& what);
void freePinned(void* ptr) noexcept;
} // namespace detail

/// Copies host memory to the device on `stream` and returns when the values
/// are on the device, so kernels on any stream see them (a host table the
/// kernels read, uploaded once).
void copyToDeviceNow(void* d_dst, const void* h_src, std::size_t bytes, cudaStream_t stream);

/// Makes `device` current for the lifetime of the scope, then restores the
/// previous one. A thread that had no device yet (no CUDA context current:
/// a new thread) keeps `device`: restoring the default GPU 0 would make it
/// a context there, so a process of GPU 1 would be seen on GPU 0 too.
class DeviceScope {
public:
    explicit DeviceScope(int device);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int m_previous = -1; ///< -1: nothing to restore
};

/// Makes `device` the calling thread's device from now on (cudaSetDevice;
/// Backend::useDevice). Nothing without a CUDA device or for an index this
/// machine does not have (creating a plan there says so). Throws DeviceError.
void useDevice(int device);

/// Device memory of `count` values of T (uninitialised).
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    /// Throws OutOfMemory naming `what` when the device cannot hold it.
    DeviceBuffer(int device, std::size_t count, const std::string& what);
    ~DeviceBuffer() { reset(); }
    DeviceBuffer(DeviceBuffer&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)), m_count(std::exchange(o.m_count, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            m_ptr = std::exchange(o.m_ptr, nullptr);
            m_count = std::exchange(o.m_count, 0);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() const { return m_ptr; }
    std::size_t size() const { return m_count; }
    std::size_t bytes() const { return m_count * sizeof(T); }
    void reset();

private:
    T* m_ptr = nullptr;
    std::size_t m_count = 0;
};

/// Page-locked host memory (cudaHostAlloc) for asynchronous transfers.
template <class T>
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    /// Throws OutOfMemory naming `what` when the host cannot pin it.
    PinnedBuffer(std::size_t count, const std::string& what);
    ~PinnedBuffer() { reset(); }
    PinnedBuffer(PinnedBuffer&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)), m_count(std::exchange(o.m_count, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            m_ptr = std::exchange(o.m_ptr, nullptr);
            m_count = std::exchange(o.m_count, 0);
        }
        return *this;
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;

    T* get() const { return m_ptr; }
    std::size_t size() const { return m_count; }
    void reset();

private:
    T* m_ptr = nullptr;
    std::size_t m_count = 0;
};

/// A non-blocking stream (no implicit synchronisation with the legacy stream).
class Stream {
public:
    Stream() = default;
    /// highPriority: the device's greatest stream priority.
    static Stream create(bool highPriority = false);
    ~Stream();
    Stream(Stream&& o) noexcept : m_stream(std::exchange(o.m_stream, nullptr)) {}
    Stream& operator=(Stream&& o) noexcept;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return m_stream; }

private:
    cudaStream_t m_stream = nullptr;
};

class Event {
public:
    Event() = default;
    /// timing = false: cheaper event for ordering only.
    static Event create(bool timing);
    ~Event();
    Event(Event&& o) noexcept : m_event(std::exchange(o.m_event, nullptr)) {}
    Event& operator=(Event&& o) noexcept;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return m_event; }

private:
    cudaEvent_t m_event = nullptr;
};

class TextureObject {
public:
    TextureObject() = default;
    TextureObject(const cudaResourceDesc& resource, const cudaTextureDesc& texture);
    ~TextureObject();
    TextureObject(TextureObject&& o) noexcept : m_texture(std::exchange(o.m_texture, 0)) {}
    TextureObject& operator=(TextureObject&& o) noexcept;
    TextureObject(const TextureObject&) = delete;
    TextureObject& operator=(const TextureObject&) = delete;
    cudaTextureObject_t get() const { return m_texture; }

private:
    cudaTextureObject_t m_texture = 0;
};

class CudaArray {
public:
    CudaArray() = default;
    /// Throws OutOfMemory naming `what`.
    CudaArray(int device, const cudaChannelFormatDesc& format, int width, int height, const std::string& what);
    ~CudaArray();
    CudaArray(CudaArray&& o) noexcept : m_array(std::exchange(o.m_array, nullptr)), m_bytes(std::exchange(o.m_bytes, 0)) {}
    CudaArray& operator=(CudaArray&& o) noexcept;
    CudaArray(const CudaArray&) = delete;
    CudaArray& operator=(const CudaArray&) = delete;
    cudaArray_t get() const { return m_array; }
    std::size_t bytes() const { return m_bytes; }

private:
    cudaArray_t m_array = nullptr;
    std::size_t m_bytes = 0;
};

/// The layout of a batched cuFFT transform: cufftMakePlanMany64's arguments.
struct FftLayout {
    int rank = 1;
    long long n[3] = {};
    long long inembed[3] = {}, istride = 1, idist = 0;
    long long onembed[3] = {}, ostride = 1, odist = 0;
    cufftType type = CUFFT_C2C;
    long long batch = 1;
};

/// A cuFFT plan: batched 1D complex-to-complex, or any layout.
class FftPlan {
public:
    FftPlan() = default;
    /// Throws OutOfMemory when cuFFT cannot allocate its work area.
    FftPlan(int device, int length, int batch);
    /// `layout`, planned without a work area: the caller gives it one
    /// (cufftSetWorkArea; plans that run one after another on one stream can
    /// share one). Throws OutOfMemory naming `what`, DeviceError.
    FftPlan(int device, const FftLayout& layout, const std::string& what);
    ~FftPlan();
    FftPlan(FftPlan&& o) noexcept
        : m_plan(std::exchange(o.m_plan, 0)), m_valid(std::exchange(o.m_valid, false)), m_workBytes(o.m_workBytes) {}
    FftPlan& operator=(FftPlan&& o) noexcept;
    FftPlan(const FftPlan&) = delete;
    FftPlan& operator=(const FftPlan&) = delete;
    cufftHandle get() const { return m_plan; }
    std::size_t workBytes() const { return m_workBytes; }

private:
    cufftHandle m_plan = 0;
    bool m_valid = false;
    std::size_t m_workBytes = 0;
};

template <class T>
DeviceBuffer<T>::DeviceBuffer(int device, std::size_t count, const std::string& what)
    : m_ptr(static_cast<T*>(detail::allocateDevice(device, count * sizeof(T), what))), m_count(count) {}

template <class T>
void DeviceBuffer<T>::reset() {
    detail::freeDevice(m_ptr);
    m_ptr = nullptr;
    m_count = 0;
}

template <class T>
PinnedBuffer<T>::PinnedBuffer(std::size_t count, const std::string& what)
    : m_ptr(static_cast<T*>(detail::allocatePinned(count * sizeof(T), what))), m_count(count) {}

template <class T>
void PinnedBuffer<T>::reset() {
    detail::freePinned(m_ptr);
    m_ptr = nullptr;
    m_count = 0;
}

} // namespace tomo::cuda
