// Errors thrown by the Tomo Workstation libraries.
//
// Every failure a user can cause (bad file, impossible parameter, missing GPU,
// not enough memory) is reported by throwing one of these; the message names
// the file or field and says what was expected, so a front end can show it
// as-is. Programming errors are not reported this way (they assert).
#pragma once

#include <stdexcept>
#include <string>

namespace tomo {

/// Base of all errors this project throws.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A file could not be opened, read, written or renamed.
class IoError : public Error {
public:
    using Error::Error;
};

/// A file was read but its content is not what was expected
/// (wrong layout, missing dataset, wrong shape or dtype, truncated data).
class FormatError : public Error {
public:
    using Error::Error;
};

/// A parameter is out of range, inconsistent with the data, or a combination
/// of options the chosen backend does not support.
class InvalidArgument : public Error {
public:
    using Error::Error;
};

/// The data contain values that cannot be processed (NaN, inf).
class DataError : public Error {
public:
    using Error::Error;
};

/// A compute device (GPU, OpenCL platform) is missing or failed.
class DeviceError : public Error {
public:
    using Error::Error;
};

/// Host or device memory is not sufficient for the requested work.
class OutOfMemory : public Error {
public:
    using Error::Error;
};

/// The user cancelled a long operation (thrown from a progress callback).
class Cancelled : public Error {
public:
    Cancelled() : Error("cancelled by the user") {}
};

} // namespace tomo
