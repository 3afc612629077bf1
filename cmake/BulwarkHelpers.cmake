# Short target definitions, in the manner of Abseil's absl_cc_library.
#
#   bulwark_library(NAME foo SRCS a.cc b.cc DEPS bar absl::status)
#   bulwark_test(NAME foo_test SRCS foo_test.cc DEPS foo)
#   bulwark_benchmark(NAME foo_bench SRCS foo_bench.cc DEPS foo)
#
# Every library is static, sees include/ and src/, and gets the project warnings.

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

function(bulwark_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
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
  # Test code itself needs no -O2 (the libraries it calls keep theirs); -O1 compiles faster.
  if(NOT BULWARK_SANITIZE)
    target_compile_options(${ARG_NAME} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  endif()
  # Tests that run other binaries of the build find them under BULWARK_BUILD_DIR.
  target_compile_definitions(${ARG_NAME} PRIVATE BULWARK_BUILD_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${ARG_NAME}." PROPERTIES LABELS "${ARG_LABELS}")
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
