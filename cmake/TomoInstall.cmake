# What `cmake --install build --prefix P` puts under P, and CPack's Debian
# package of the same files (cpack -G DEB in the build folder; scripts/package.sh):
#   bin/                      tomo-recon, tomo-bench, tomo-stream, tomo-workstation (when built)
#   lib/python3/dist-packages/tomows   the Python module (TOMO_PYTHON_INSTALL_DIR)
#   share/man/man1/           a page per program, made from its --help at build time
#   share/applications/       tomo-workstation.desktop (with the GUI)
#   share/icons/hicolor/scalable/apps/tomo-workstation.svg
#   share/doc/tomo-workstation/README.md
# The libraries of the tree are static: nothing else of the build is needed.

set(tomo_programs tomo-recon tomo-bench tomo-stream)
if(TARGET tomo-workstation)
  list(APPEND tomo_programs tomo-workstation)
endif()
install(TARGETS ${tomo_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Man pages from --help (cmake/HelpToMan.cmake), rebuilt with their program.
set(tomo_man_dir ${CMAKE_BINARY_DIR}/man)
set(tomo_man_pages)
foreach(program ${tomo_programs})
  set(page ${tomo_man_dir}/${program}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DNAME=${program}
            -DVERSION=${PROJECT_VERSION} -DOUTPUT=${page} -P ${PROJECT_SOURCE_DIR}/cmake/HelpToMan.cmake
    DEPENDS ${program} ${PROJECT_SOURCE_DIR}/cmake/HelpToMan.cmake
    COMMENT "Man page of ${program} from its --help" VERBATIM)
  list(APPEND tomo_man_pages ${page})
endforeach()
add_custom_target(tomo_man_pages ALL DEPENDS ${tomo_man_pages})
install(FILES ${tomo_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

if(TARGET tomo-workstation)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/tomo-workstation.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/tomo-workstation.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/tomo-workstation)

# The install into a temporary prefix, then the installed programs and module
# used from there (packaging/check-install.sh).
if(TOMO_BUILD_TESTS)
  add_test(NAME install.prefix
           COMMAND bash ${PROJECT_SOURCE_DIR}/packaging/check-install.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/install-test "$<$<BOOL:${TOMO_WITH_PYTHON}>:${Python_EXECUTABLE}>")
  set_tests_properties(install.prefix PROPERTIES LABELS install TIMEOUT 600 RUN_SERIAL TRUE)
endif()

# ---- CPack: one Debian package; its dependencies are the Debian packages of
# the shared libraries the installed files link (dpkg-shlibdeps), plus Python's.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tomo-workstation)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Tomo Workstation")
set(CPACK_PACKAGE_CONTACT "Tomo Workstation maintainers <maintainers@tomo-workstation.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU parallel-beam tomography workstation, batch reconstruction and Python module")
set(CPACK_PACKAGE_DESCRIPTION
    "Reconstructs synchrotron X-ray tomography scans (DXchange, NXtomo, TIFF, raw): tomo-recon (batch), tomo-bench (benchmarks), tomo-stream (a live-acquisition sender for tests and demos), tomo-workstation (Qt desktop application, when built) and the Python module tomows.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(tomo_deb_depends)
if(TOMO_WITH_PYTHON)
  set(tomo_deb_depends "python3 (>= 3.${Python_VERSION_MINOR}), python3 (<< 3.${Python_VERSION_MINOR}.999), python3-numpy")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${tomo_deb_depends}")
set(tomo_deb_comma "")
if(tomo_deb_depends)
  set(tomo_deb_comma ", ")
endif()
# The HDF5 compression filters real scans use, and OpenCL on the CPU.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "hdf5-plugin-lzf, hdf5-filter-plugin, hdf5-filter-plugin-blosc-serial, bitshuffle, pocl-opencl-icd")
if(TOMO_WITH_CUDA)
  # cuFFT is not in Debian's archive: it comes from NVIDIA's CUDA repository
  # (libcufft-<major>-<minor>, the toolkit's version). A package for machines
  # without it is built with -DTOMO_WITH_CUDA=OFF.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS
         "${tomo_deb_comma}libcufft-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
endif()
set(CPACK_STRIP_FILES ON)
include(CPack)
