# Exact search latency: FlatIndex vs FAISS IndexFlatIP vs the memory-bandwidth bound (DESIGN 4.4).
# Debian's faiss-config.cmake names OpenMP::OpenMP_CXX in faiss's link interface without finding
# OpenMP; GLOBAL makes the target visible where the faiss target was imported.
find_package(OpenMP REQUIRED COMPONENTS CXX GLOBAL)
bulwark_benchmark(NAME search_bench SRCS ${CMAKE_CURRENT_SOURCE_DIR}/search_bench.cc DEPS bulwark_index faiss)
