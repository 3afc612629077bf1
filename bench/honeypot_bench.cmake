# MemPot session monitor cost per search (target <= 2 us) and the fit time for 10k memories
# (target <= 60 s; reads data/corpora and /usr/share/wordnet).
bulwark_benchmark(NAME honeypot_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/honeypot_bench.cc DEPS bulwark_honeypot)
if(TARGET honeypot_bench)
  target_compile_definitions(honeypot_bench PRIVATE BULWARK_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
