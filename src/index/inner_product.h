// Inner-product kernels that FlatIndex uses to score stored rows against a query.
//
// Each SIMD level (portable scalar reference, AVX2+FMA, AVX-512) implements the same two
// operations. The SIMD code is compiled with per-function target attributes, not with global
// -mavx2/-mavx512f flags, so the library runs on any x86-64 CPU; BestSimdLevel() picks the widest
// level that the CPU and the OS support at run time. Within one level, a row's score does not depend
// on which other rows are scored with it: `dot` and `dot_rows` give bit-identical results, so
// equal vectors always score equally and ties are broken consistently.
#pragma once

#include <cstddef>
#include <string_view>

namespace bulwark {

enum class SimdLevel { kScalar, kAvx2, kAvx512 };

std::string_view ToString(SimdLevel level);

// True if this CPU and OS can run the kernels of `level` (AVX2 also needs FMA; AVX-512 needs
// AVX-512F). Always true for kScalar; always false for the SIMD levels on non-x86 builds.
bool CpuSupports(SimdLevel level);

// The widest level for which CpuSupports() is true. Detected once, then cached.
SimdLevel BestSimdLevel();

// The kernels of one level. Neither takes alignment requirements; both read exactly `dim` floats
// of each vector (the SIMD tails use masked loads, which never touch memory past the end).
struct InnerProductKernels {
  SimdLevel level;
  // Returns sum_i a[i] * b[i] for i in [0, dim). dim may be 0 (returns 0).
  float (*dot)(const float* a, const float* b, size_t dim);
  // scores[r] = dot(query, rows[r], dim) for r in [0, count), bit-identical to `dot`. Rows are
  // scored several at a time (one pass over the query serves four rows) and the next rows are
  // prefetched, so `rows` may point anywhere, e.g. to the rows of a block that pass a filter.
  void (*dot_rows)(const float* query, const float* const* rows, size_t count, size_t dim, float* scores);
};

// The kernels of `level`. Precondition: CpuSupports(level); calling SIMD kernels on a CPU without
// the instructions raises SIGILL.
const InnerProductKernels& KernelsFor(SimdLevel level);

// KernelsFor(BestSimdLevel()): the kernels every caller that is not a kernel test wants.
const InnerProductKernels& BestKernels();

}  // namespace bulwark
