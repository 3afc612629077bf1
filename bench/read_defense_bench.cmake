bulwark_benchmark(NAME read_defense_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/read_defense_bench.cc DEPS bulwark_retrieval)
