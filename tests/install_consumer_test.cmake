# install_consumer_test (tests/CMakeLists.txt), run with `cmake -P`: installs this build into a
# fresh prefix, configures and builds examples/consumer against it with find_package(bulwark),
# runs the program on a new store and checks what it prints. Fails on the first step that does.
#
# -D arguments: BUILD_DIR (this build), SOURCE_DIR (examples/consumer), WORK_DIR (scratch, made
# anew), CXX (the compiler of this build), FLAGS (compile and link flags the consumer needs to
# link this build's libraries: the sanitizers' in a sanitized build), GENERATOR.
cmake_minimum_required(VERSION 3.25)

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(installed include/bulwark/db.h include/bulwark/options.h)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "install did not put ${installed} under the prefix")
  endif()
endforeach()
# The internal store is not part of the installed API (issue #12 point 7).
foreach(internal include/bulwark/memory_store.h include/bulwark/store_options.h)
  if(EXISTS ${prefix}/${internal})
    message(FATAL_ERROR "install put the internal header ${internal} under the prefix")
  endif()
endforeach()
file(GLOB_RECURSE config ${prefix}/*/bulwarkConfig.cmake)
if(NOT config)
  message(FATAL_ERROR "install did not put bulwarkConfig.cmake under the prefix")
endif()
# The package must not name a file of the machine that built it: system libraries are found again
# by bulwarkConfig.cmake on the consumer's machine.
file(GLOB_RECURSE exported ${prefix}/*/bulwarkTargets*.cmake)
foreach(file IN LISTS exported)
  file(READ ${file} text)
  foreach(machine_path "/usr/lib" "/usr/local/lib" "${BUILD_DIR}")
    string(FIND "${text}" "${machine_path}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} names the build machine's ${machine_path}")
    endif()
  endforeach()
endforeach()

run("configure examples/consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}")
run("build examples/consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("run consumer" ${WORK_DIR}/build/consumer ${WORK_DIR}/store)

foreach(expected "added active\n" "poison quarantined\n" "hits 1\n"
                 "hit Alice prefers window seats on long flights\n" "verify ok rows 2\n")
  string(FIND "${last_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the consumer's output lacks \"${expected}\":\n${last_output}")
  endif()
endforeach()
message(STATUS "consumer output:\n${last_output}")
file(REMOVE_RECURSE ${WORK_DIR})
