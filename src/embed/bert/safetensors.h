// SafetensorsFile: a checked, read-only view of a safetensors file (the weight format of Hugging
// Face checkpoints) held in memory. The format is
//   [u64 little-endian N][N bytes of JSON header][data region]
// where the header maps tensor names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// relative to the data region) plus an optional "__metadata__" object of strings.
//
// The bytes are untrusted: Parse checks everything before any tensor can be read, so a crafted
// file cannot make a reader allocate or touch memory outside the buffer (hnswlib issue #673 is the
// cautionary tale). Checks, each failing with DataLoss naming what is wrong:
//   - the buffer holds the 8-byte length and N fits in it; N <= limits.max_header_bytes
//   - the header is one JSON object; every entry but "__metadata__" is an object with exactly
//     "dtype" (a known safetensors dtype), "shape" (at most kMaxRank non-negative integers) and
//     "data_offsets" (two integers, begin <= end <= data size)
//   - the element count (product of the shape, overflow-checked) times the dtype's size equals
//     end - begin
//   - the tensors tile the data region exactly, as the reference implementation requires: sorted
//     by begin they start at 0, each begins where the previous one ended (no overlap, no gap), and
//     the last ends at the end of the buffer
//   - at most limits.max_tensors tensors
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark::bert {

enum class SafetensorsDtype {
  kBool,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kF64,
  kI64,
  kU64,
};

// Bytes per element of `dtype` (1, 2, 4 or 8).
size_t DtypeSize(SafetensorsDtype dtype);
// The name used in the header ("F32", "BF16", ...).
std::string_view DtypeName(SafetensorsDtype dtype);

struct SafetensorsTensor {
  SafetensorsDtype dtype;
  std::vector<int64_t> shape;  // empty for a scalar
  std::string_view bytes;      // inside the parsed buffer; exactly elements * DtypeSize(dtype)

  // Product of `shape` (1 for a scalar). Parse guarantees it does not overflow.
  int64_t elements() const;
};

struct SafetensorsLimits {
  // Largest JSON header accepted. Default 16 MiB (all-MiniLM-L6-v2's is about 20 KiB; the
  // reference implementation allows 100 MB).
  uint64_t max_header_bytes = 16 << 20;
  // Most tensors accepted. Default 65536.
  size_t max_tensors = 65536;
};

class SafetensorsFile {
 public:
  static constexpr size_t kMaxRank = 8;

  // Parses and checks `buffer` (see the file comment). The result points into `buffer`, which must
  // outlive it. Errors: DataLoss for any failed check, naming the tensor when there is one.
  [[nodiscard]] static absl::StatusOr<SafetensorsFile> Parse(std::string_view buffer,
                                                             const SafetensorsLimits& limits = {});

  // The tensor called `name`, or nullptr.
  const SafetensorsTensor* Find(std::string_view name) const;

  // Tensor names in data order.
  std::vector<std::string> Names() const;
  size_t size() const { return tensors_.size(); }

 private:
  absl::flat_hash_map<std::string, SafetensorsTensor> tensors_;
};

// Converts a floating-point tensor (F32, F16 or BF16) to F32 into `out`, which must hold exactly
// tensor.elements() floats. Values are read little-endian from unaligned memory. Errors:
// InvalidArgument for another dtype or a wrong `out` size.
[[nodiscard]] absl::Status TensorToFloat(const SafetensorsTensor& tensor, std::span<float> out);

}  // namespace bulwark::bert
