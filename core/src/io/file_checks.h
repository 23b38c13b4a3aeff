// Internal: checks on the paths users give before anything opens them. A
// FIFO or a device would block open() or never end, a symbolic link loop or
// a folder without permission must not read as "no such file", and every
// file-system failure must name the path with the system's reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tomo::detail {

/// The type of `path`, following symbolic links; file_type::not_found when
/// nothing is there (a dangling link included). Throws IoError naming the
/// path and the system's reason for any other failure (a link loop, a
/// parent folder without permission, a name too long).
std::filesystem::file_type fileType(const std::filesystem::path& path);

/// "a directory", "a FIFO (named pipe)", "a socket", "a device", ...
std::string fileTypeName(std::filesystem::file_type type);

/// Throws IoError naming `path` and `what` it should be (e.g. "angles
/// file") unless it is, or links to, a regular file: "no such file", a link
/// loop, a directory, a FIFO, a socket or a device are each said as such.
void requireRegularFile(const std::filesystem::path& path, const std::string& what);

/// Size of a regular file in bytes. Throws IoError naming the path.
std::uintmax_t fileSize(const std::filesystem::path& path);

/// The whole content of a small regular text file (a run config, a list of
/// angles): requireRegularFile, then refused when larger than maxBytes
/// (a mistaken multi-gigabyte file must not fill the memory). Throws
/// IoError naming the file.
std::string readSmallFile(const std::filesystem::path& path, const std::string& what, std::uintmax_t maxBytes);

/// "12.3 MiB", "4.0 GiB", "512 bytes": sizes in messages.
std::string formatBytes(double bytes);

} // namespace tomo::detail
