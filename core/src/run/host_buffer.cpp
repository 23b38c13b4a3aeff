#include "tomo/host_buffer.h"

#include "tomo/error.h"

#include <cstdlib>
#include <string>

namespace tomo {

HostBuffer HostBuffer::plain(std::size_t bytes) {
    if (bytes == 0) return {};
    void* data = std::malloc(bytes);
    if (!data) throw OutOfMemory("not enough host memory: asked " + std::to_string(bytes >> 20) + " MiB");
    return HostBuffer(data, bytes, [](void* p) { std::free(p); });
}

} // namespace tomo
