# Short target definitions, in the manner of Abseil's absl_cc_library.
#
#   bulwark_library(NAME foo SRCS a.cc b.cc DEPS bar absl::status)
#   bulwark_test(NAME foo_test SRCS foo_test.cc DEPS foo)
#   bulwark_benchmark(NAME foo_bench SRCS foo_bench.cc DEPS foo)
#
# Every library is static, sees include/ and src/, and gets the project warnings.

include(GNUInstallDirs)

function(bulwark_apply_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter -Wno-missing-field-initializers)
  # Clang checks ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations (GCC ignores them).
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
  if(BULWARK_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Compile options of test code (test executables, not the libraries they test). The release build
# compiles it at -O1. The sanitizer build compiles it at -O0: test code runs little but its gtest
# and JSON templates cost most of that build's compile time (a test batch: 28.5 s at -O1 with
# coverage, 8.9 s at -O0 without, clang 14). The libraries under test keep -O1 and ASan/UBSan.
function(bulwark_test_code_options target)
  # -pthread on all test code, as some dependencies (cpp-httplib's pkg-config flags) add it: the
  # shared precompiled header must be compiled with the same thread setting as every user.
  target_compile_options(${target} PRIVATE -pthread)
  # Tests that run other binaries of the build find them under BULWARK_BUILD_DIR. Every user of
  # the precompiled header must have the same definitions as the header (gcc refuses it otherwise).
  target_compile_definitions(${target} PRIVATE BULWARK_BUILD_DIR="${PROJECT_BINARY_DIR}")
  if(BULWARK_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  else()
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  endif()
endfunction()

# One precompiled header for all test code: gtest, gmock, nlohmann/json, the Abseil status
# headers and the standard headers tests use most, parsed once per build instead of once per test
# batch (about 1.4 s of a 6 s batch under the sanitizer build). Every test executable reuses it
# (bulwark_use_test_pch), so it is built with exactly the test code's options. Called once from the
# top-level CMakeLists.txt after find_package(GTest).
function(bulwark_add_test_pch)
  add_library(bulwark_test_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/test_pch.cc)
  target_link_libraries(bulwark_test_pch PRIVATE GTest::gmock GTest::gtest nlohmann_json::nlohmann_json
                        absl::status absl::statusor absl::strings)
  bulwark_apply_warnings(bulwark_test_pch)
  bulwark_test_code_options(bulwark_test_pch)
  target_precompile_headers(bulwark_test_pch PRIVATE
    <gtest/gtest.h> <gmock/gmock.h> <nlohmann/json.hpp> <absl/status/status.h>
    <absl/status/statusor.h> <absl/strings/str_cat.h> <absl/strings/string_view.h>
    <algorithm> <atomic> <chrono> <cmath> <filesystem> <fstream> <functional> <map> <memory>
    <optional> <random> <set> <sstream> <string> <thread> <vector>)
endfunction()

# Test code compiles with the shared precompiled header (bulwark_add_test_pch).
function(bulwark_use_test_pch target)
  target_precompile_headers(${target} REUSE_FROM bulwark_test_pch)
endfunction()

function(bulwark_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SRCS})
  # Installed (cmake/BulwarkInstall.cmake), a library offers the public headers alone.
  target_include_directories(${ARG_NAME} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
  bulwark_apply_warnings(${ARG_NAME})
endfunction()

function(bulwark_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT BULWARK_BUILD_TESTS)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  bulwark_apply_warnings(${ARG_NAME})
  bulwark_test_code_options(${ARG_NAME})
  bulwark_use_test_pch(${ARG_NAME})
  bulwark_add_suites(${ARG_NAME} "${ARG_LABELS}")
endfunction()

# Registers the GoogleTest executable `target` as one CTest test per suite, named
# <target>.<Suite> (cmake/BulwarkAddSuites.cmake lists the suites once the executable is built).
# The tests of a suite share one process; see that file for why.
function(bulwark_add_suites target labels)
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  string(REPLACE ";" "," labels "${labels}")  # one command-line word; the script splits it again
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DTEST_EXECUTABLE=$<TARGET_FILE:${target}>
            -DTEST_WORKING_DIR=${CMAKE_CURRENT_BINARY_DIR} -DTEST_PREFIX=${target}. "-DTEST_LABELS=${labels}"
            -DCTEST_FILE=${ctest_file} -P ${PROJECT_SOURCE_DIR}/cmake/BulwarkAddSuites.cmake
    BYPRODUCTS ${ctest_file}
    VERBATIM)
  # CTest reads the suites when they have been listed; before that the target shows as not built.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  file(WRITE ${include_file}
    "if(EXISTS \"${ctest_file}\")\n  include(\"${ctest_file}\")\nelse()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()

function(bulwark_benchmark)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  if(NOT BULWARK_BUILD_BENCHMARKS)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  bulwark_apply_warnings(${ARG_NAME})
endfunction()
