# Optional parts of the build. Each TOMO_WITH_<X> is ON, OFF or AUTO (the
# default): AUTO turns the part on when its dependencies are found and says
# why when it is off; ON fails the configure step when they are missing.
include(FeatureSummary)
include(CheckLanguage)

function(tomo_feature name found why_missing)
  set(value "${TOMO_WITH_${name}}")
  string(TOUPPER "${value}" value)
  if(value STREQUAL "OFF")
    set(enabled OFF)
    message(STATUS "Tomo: ${name} disabled (TOMO_WITH_${name}=OFF)")
  elseif(found)
    set(enabled ON)
    message(STATUS "Tomo: ${name} enabled")
  elseif(value STREQUAL "ON")
    message(FATAL_ERROR "Tomo: TOMO_WITH_${name}=ON but ${why_missing}")
  else()
    set(enabled OFF)
    message(STATUS "Tomo: ${name} disabled: ${why_missing}")
  endif()
  set(TOMO_WITH_${name} ${enabled} PARENT_SCOPE)
  add_feature_info(${name} enabled "TOMO_WITH_${name}")
endfunction()

foreach(feature HDF5 TIFF CUDA OPENCL GUI MPI)
  set(TOMO_WITH_${feature} AUTO CACHE STRING "Build with ${feature} (ON, OFF, AUTO)")
  set_property(CACHE TOMO_WITH_${feature} PROPERTY STRINGS ON OFF AUTO)
endforeach()

# Required everywhere.
find_package(Threads REQUIRED)
# FFTW3 (single precision): pkg-config when present, else a plain search
# (the GPU machine has no pkg-config; FFTW is unpacked there from .debs).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(FFTW3F QUIET IMPORTED_TARGET fftw3f)
endif()
if(TARGET PkgConfig::FFTW3F)
  add_library(tomo::fftw3f ALIAS PkgConfig::FFTW3F)
else()
  find_path(FFTW3F_INCLUDE_DIR fftw3.h)
  find_library(FFTW3F_LIBRARY fftw3f)
  if(NOT FFTW3F_INCLUDE_DIR OR NOT FFTW3F_LIBRARY)
    message(FATAL_ERROR "FFTW3 (single precision) not found: apt-get install libfftw3-dev")
  endif()
  add_library(tomo::fftw3f UNKNOWN IMPORTED)
  set_target_properties(tomo::fftw3f PROPERTIES IMPORTED_LOCATION ${FFTW3F_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${FFTW3F_INCLUDE_DIR})
endif()
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

# HDF5: the serial build (Debian's VTK pulls in the MPI one too).
if(NOT TOMO_WITH_HDF5 STREQUAL "OFF")
  set(HDF5_PREFER_PARALLEL OFF)
  find_package(HDF5 COMPONENTS C QUIET)
endif()
tomo_feature(HDF5 "${HDF5_FOUND}" "HDF5 not found (apt-get install libhdf5-dev)")

if(NOT TOMO_WITH_TIFF STREQUAL "OFF")
  find_package(TIFF QUIET)
endif()
tomo_feature(TIFF "${TIFF_FOUND}" "libtiff not found (apt-get install libtiff-dev)")

if(NOT TOMO_WITH_CUDA STREQUAL "OFF")
  check_language(CUDA)
endif()
if(CMAKE_CUDA_COMPILER AND NOT TOMO_WITH_CUDA STREQUAL "OFF")
  set(tomo_cuda_found TRUE)
else()
  set(tomo_cuda_found FALSE)
endif()
tomo_feature(CUDA "${tomo_cuda_found}" "no CUDA compiler found (install the CUDA toolkit in /usr/local/cuda)")
if(TOMO_WITH_CUDA)
  # Hopper machine code plus PTX for newer GPUs; override with -DCMAKE_CUDA_ARCHITECTURES.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()

if(NOT TOMO_WITH_OPENCL STREQUAL "OFF")
  find_package(OpenCL QUIET)
endif()
tomo_feature(OPENCL "${OpenCL_FOUND}" "OpenCL not found (apt-get install ocl-icd-opencl-dev opencl-headers)")

if(NOT TOMO_WITH_GUI STREQUAL "OFF")
  find_package(Qt6 6.4 COMPONENTS Widgets Charts OpenGLWidgets Test QUIET)
endif()
tomo_feature(GUI "${Qt6_FOUND}" "Qt 6 not found (apt-get install qt6-base-dev qt6-charts-dev libqt6opengl6-dev)")

# MPI (tomo-recon --mpi): the C bindings of the system's MPI (Debian's Open
# MPI). The serial build needs none of it.
if(NOT TOMO_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
endif()
tomo_feature(MPI "${MPI_C_FOUND}" "MPI not found (apt-get install libopenmpi-dev openmpi-bin)")
