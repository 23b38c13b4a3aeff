# Fails when the test functions of a QTest suite (EXE -functions) and the
# ones tests/gui/CMakeLists.txt lists for CTest differ: a function missing
# from the list would never run, a listed one that is gone fails by name.
execute_process(COMMAND ${EXE} -functions OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} -functions failed (${rc})")
endif()
string(REGEX REPLACE "\\(\\)" "" out "${out}")
string(REGEX REPLACE "\n" ";" functions "${out}")
list(REMOVE_ITEM functions "")
string(REPLACE "," ";" listed "${LISTED}")
set(missing ${functions})
list(REMOVE_ITEM missing ${listed})
set(gone ${listed})
list(REMOVE_ITEM gone ${functions})
if(missing OR gone)
  message(FATAL_ERROR "tests/gui/CMakeLists.txt is out of date: not listed (never run): '${missing}'; "
                      "listed but not in the suite: '${gone}'")
endif()
