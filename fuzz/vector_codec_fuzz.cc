// libFuzzer target for the stored form of a vector (storage/sqlite/vector_codec.h,
// doc/store_format.md): any bytes of an `embedding` column either decode, and then encoding the
// floats and decoding again gives the same bit patterns, or are refused with DataLoss and an empty
// output — never a crash, an out-of-bounds read or another status.
//
//   scripts/fuzz [SECONDS]
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite/vector_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rows = bulwark::sqlite_rows;
  std::vector<float> decoded;
  const absl::Status status =
      rows::DecodeStoredVector(std::string_view(reinterpret_cast<const char*>(data), size), &decoded);
  if (!status.ok()) {
    if (status.code() != absl::StatusCode::kDataLoss || !decoded.empty()) std::abort();
    return 0;
  }
  const std::string again = rows::EncodeStoredVector(decoded);
  std::vector<float> twice;
  if (!rows::DecodeStoredVector(again, &twice).ok()) std::abort();
  if (twice.size() != decoded.size() ||
      (!decoded.empty() && std::memcmp(twice.data(), decoded.data(), decoded.size() * sizeof(float)) != 0)) {
    std::abort();
  }
  return 0;
}
