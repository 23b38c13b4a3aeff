#include "io/file_checks.h"

#include "tomo/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

namespace tomo::detail {

namespace fs = std::filesystem;

fs::file_type fileType(const fs::path& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found) return fs::file_type::not_found;
    if (ec) {
        if (ec == std::errc::too_many_symbolic_link_levels)
            throw IoError(path.string() + ": a loop of symbolic links (" + ec.message() + ")");
        throw IoError(path.string() + ": cannot be examined: " + ec.message());
    }
    return status.type();
}

std::string fileTypeName(fs::file_type type) {
    switch (type) {
    case fs::file_type::regular: return "a regular file";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::not_found: return "missing";
    default: return "of an unknown kind";
    }
}

void requireRegularFile(const fs::path& path, const std::string& what) {
    const fs::file_type type = fileType(path);
    if (type == fs::file_type::regular) return;
    if (type == fs::file_type::not_found) {
        std::error_code ec;
        const bool danglingLink = fs::is_symlink(fs::symlink_status(path, ec));
        throw IoError(path.string() + ": no such file" + (danglingLink ? " (a symbolic link to nothing)" : "") +
                      "; expected " + what);
    }
    throw IoError(path.string() + " is " + fileTypeName(type) + "; expected " + what);
}

std::uintmax_t fileSize(const fs::path& path) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw IoError(path.string() + ": cannot read the file size: " + ec.message());
    return size;
}

std::string readSmallFile(const fs::path& path, const std::string& what, std::uintmax_t maxBytes) {
    requireRegularFile(path, what);
    const std::uintmax_t size = fileSize(path);
    if (size > maxBytes)
        throw IoError(path.string() + " has " + formatBytes(static_cast<double>(size)) + "; expected " + what +
                      " of at most " + formatBytes(static_cast<double>(maxBytes)));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path.string() + ": cannot open " + what + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw IoError(path.string() + ": read error in " + what);
    return text.str();
}

std::string formatBytes(double bytes) {
    char text[48];
    if (bytes < 1024.0) std::snprintf(text, sizeof text, "%.0f bytes", bytes);
    else if (bytes < 1024.0 * 1024.0) std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
    else if (bytes < 1024.0 * 1024.0 * 1024.0) std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
    else if (bytes < 1024.0 * 1024.0 * 1024.0 * 1024.0) std::snprintf(text, sizeof text, "%.1f GiB", bytes / 1073741824.0);
    else std::snprintf(text, sizeof text, "%.3g TiB", bytes / 1099511627776.0);
    return text;
}

} // namespace tomo::detail
