bulwark_benchmark(NAME slow_clients_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/slow_clients_bench.cc DEPS bulwark_server)
