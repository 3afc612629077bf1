bulwark_benchmark(NAME add_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/add_bench.cc DEPS bulwark_store)
