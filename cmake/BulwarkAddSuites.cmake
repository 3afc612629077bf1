# Registers one CTest test per GoogleTest suite of a test executable: run after the executable is
# built (bulwark_test's POST_BUILD step), it lists the executable's tests and writes CTEST_FILE with
#   add_test(<PREFIX><Suite> <executable> --gtest_filter=<Suite>.*)
# for each suite, in the order the executable lists them. A suite's tests then share one process:
# its start (sanitizer runtime, static tables such as the WordNet lexicon) and any SetUpTestSuite
# work happen once per suite instead of once per test, which is most of the time of a suite of short
# tests under ASan. Every test still runs and a failing test fails its suite's CTest test, with the
# test's name in the output; run one test alone with `<executable> --gtest_filter=Suite.Test`.
#
#   cmake -DTEST_EXECUTABLE=... -DTEST_WORKING_DIR=... -DTEST_PREFIX=... -DTEST_LABELS=...
#         -DCTEST_FILE=... -P BulwarkAddSuites.cmake
cmake_minimum_required(VERSION 3.25)

execute_process(
  COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
  WORKING_DIRECTORY "${TEST_WORKING_DIR}"
  TIMEOUT 60
  OUTPUT_VARIABLE output
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}):\n${output}")
endif()

# Suite lines start in column 0 and end with '.', optionally followed by "  # TypeParam = ...";
# test lines are indented. Suite names are C++ identifiers, possibly with a "Prefix/" of a
# parameterized instantiation and a "/N" of a typed test: nothing CMake or CTest would misread.
string(REPLACE "," ";" labels "${TEST_LABELS}")
# Brackets and semicolons (in printed test parameters) would break the list of lines: no suite
# name has them, so they are blanked first.
string(REGEX REPLACE "[][;]" "_" output "${output}")
string(REPLACE "\n" ";" lines "${output}")
set(script "")
# Any other unindented line fails the build rather than leaving a suite out.
foreach(line IN LISTS lines)
  if(line STREQUAL "" OR line MATCHES "^  " OR line MATCHES "^Running main\\(\\) from .*gtest_main")
    continue()
  elseif(NOT line MATCHES "^([A-Za-z_][A-Za-z0-9_/]*)\\.( *#.*)?$")
    message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests: unexpected line '${line}'")
  else()
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND script
      "add_test([=[${TEST_PREFIX}${suite}]=] \"${TEST_EXECUTABLE}\" [=[--gtest_filter=${suite}.*]=])\n"
      "set_tests_properties([=[${TEST_PREFIX}${suite}]=] PROPERTIES"
      " WORKING_DIRECTORY \"${TEST_WORKING_DIR}\" LABELS [=[${labels}]=])\n")
  endif()
endforeach()
if(script STREQUAL "")
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suite:\n${output}")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
