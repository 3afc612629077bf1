# MemPot session monitor cost per search observation (target <= 2 us).
bulwark_benchmark(NAME honeypot_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/honeypot_bench.cc DEPS bulwark_honeypot)
