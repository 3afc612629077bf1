# Write-gate cost per entry (composite and memsad alone) at m = 20, 200, 1000, d = 384.
bulwark_benchmark(NAME gate_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/gate_bench.cc DEPS bulwark_detect)
