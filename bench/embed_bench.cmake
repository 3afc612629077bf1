# Lexical embedding time per ~30-word memory entry, synonyms on and off.
bulwark_benchmark(NAME embed_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/embed_bench.cc DEPS bulwark_embed)
