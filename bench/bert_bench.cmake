# Native bert embedder speed on a random all-MiniLM-L6-v2-shaped model: ms per entry at 16, 64 and
# 256 tokens, batch throughput across cores, and model load time.
bulwark_benchmark(NAME bert_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/bert_bench.cc DEPS bulwark_embed_bert)
