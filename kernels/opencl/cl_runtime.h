// The OpenCL platforms and devices of this machine, found once through the
// ICD loader, and what the plans share per device: one context (programs
// are built once per context) and the error translation.
//
//   devices()          every device of every platform, in a fixed order
//                      (platform, then device): index i is "OpenCL device i"
//   noDeviceReason()   why there is none (empty when there is one)
//   selectDevice(spec) the index a user's choice names: "" = the
//                      environment's TOMO_OPENCL_DEVICE, else the first GPU
//                      or accelerator, else device 0; a number; or part of
//                      the device or platform name (case-insensitive)
//   rethrow(error)     cl::Error -> tomo::OutOfMemory / tomo::DeviceError
#pragma once

#include "tomo/registry.h"

#include <CL/opencl.hpp>

#include <string>
#include <vector>

namespace tomo::opencl {

struct DeviceEntry {
    cl::Platform platform;
    cl::Device device;
    OpenClDevice info;
};

/// Enumerated on the first call; never throws.
const std::vector<DeviceEntry>& devices();

/// Empty when devices() is not empty; otherwise why (no ICD loader entry, no
/// platform, platforms without devices).
const std::string& noDeviceReason();

/// Throws InvalidArgument naming the choice and listing the devices, or
/// DeviceError when there is none.
int selectDevice(const std::string& spec);

/// "OpenCL device 0 (<name>, <platform>)".
std::string deviceLabel(int index);

/// The context of device `index`, created on first use (thread-safe).
const cl::Context& contextFor(int index);

/// CL_SUCCESS -> "CL_SUCCESS", ... (the number for unknown codes).
std::string errorName(cl_int code);

/// Throws OutOfMemory for allocation failures, else DeviceError:
/// "<context>: <cl function> failed with <error name>".
[[noreturn]] void rethrow(const cl::Error& error, const std::string& context);

} // namespace tomo::opencl
