bulwark_benchmark(NAME load_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/load_bench.cc DEPS bulwark_server)
