// The stored vector's two forms (see vector_codec.h).
#include "storage/sqlite/vector_codec.h"

#include <absl/strings/str_cat.h>

#include <bit>
#include <cstdint>
#include <cstring>

namespace bulwark::sqlite_rows {
namespace {

constexpr size_t kHeaderBytes = 2;
constexpr size_t kMaxPackedDimension = 65535;

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// The padding that makes a packed value of `unpadded` bytes 1 modulo 4 long.
size_t Padding(size_t unpadded) { return (5 - unpadded % 4) % 4; }

absl::Status Bad(const char* what, std::vector<float>* out) {
  out->clear();
  return absl::DataLossError(absl::StrCat("stored vector: ", what));
}

absl::Status DecodeRaw(std::string_view bytes, std::vector<float>* out) {
  out->resize(bytes.size() / sizeof(float));
  if (!bytes.empty()) std::memcpy(out->data(), bytes.data(), bytes.size());  // little-endian host
  return absl::OkStatus();
}

absl::Status DecodePacked(std::string_view bytes, std::vector<float>* out) {
  if (bytes.size() < kHeaderBytes) return Bad("too short", out);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t d = p[0] | (size_t{p[1]} << 8);
  const size_t bitmap_bytes = (d + 7) / 8;
  if (bytes.size() < kHeaderBytes + bitmap_bytes) return Bad("shorter than its bitmap", out);
  const unsigned char* bitmap = p + kHeaderBytes;
  size_t set = 0;
  for (size_t i = 0; i < bitmap_bytes; ++i) set += std::popcount(static_cast<unsigned>(bitmap[i]));
  if (d % 8 != 0 && (bitmap[bitmap_bytes - 1] >> (d % 8)) != 0)
    return Bad("bits set past its dimension", out);
  const size_t unpadded = kHeaderBytes + bitmap_bytes + set * sizeof(float);
  if (bytes.size() != unpadded + Padding(unpadded)) return Bad("length does not match its bitmap", out);
  for (size_t i = unpadded; i < bytes.size(); ++i) {
    if (p[i] != 0) return Bad("padding is not zero", out);
  }
  out->assign(d, 0.0f);
  // Set bits only (a search decodes every candidate it verifies): no branch per component.
  const unsigned char* value = p + kHeaderBytes + bitmap_bytes;
  float* dst = out->data();
  for (size_t byte = 0; byte < bitmap_bytes; ++byte) {
    for (unsigned bits = bitmap[byte]; bits != 0; bits &= bits - 1) {
      std::memcpy(dst + byte * 8 + std::countr_zero(bits), value, sizeof(float));
      value += sizeof(float);
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeStoredVector(std::span<const float> vector) {
  const size_t d = vector.size();
  const size_t raw_bytes = d * sizeof(float);
  size_t set = 0;
  for (float f : vector) set += Bits(f) != 0;
  const size_t unpadded = kHeaderBytes + (d + 7) / 8 + set * sizeof(float);
  const size_t packed_bytes = unpadded + Padding(unpadded);
  if (d > kMaxPackedDimension || packed_bytes >= raw_bytes) {
    std::string raw(raw_bytes, '\0');
    if (raw_bytes > 0) std::memcpy(raw.data(), vector.data(), raw_bytes);  // little-endian host
    return raw;
  }
  std::string packed(packed_bytes, '\0');
  auto* p = reinterpret_cast<unsigned char*>(packed.data());
  p[0] = static_cast<unsigned char>(d & 0xff);
  p[1] = static_cast<unsigned char>(d >> 8);
  unsigned char* bitmap = p + kHeaderBytes;
  unsigned char* value = bitmap + (d + 7) / 8;
  for (size_t i = 0; i < d; ++i) {
    if (Bits(vector[i]) == 0) continue;
    bitmap[i / 8] |= static_cast<unsigned char>(1u << (i % 8));
    std::memcpy(value, &vector[i], sizeof(float));
    value += sizeof(float);
  }
  return packed;
}

absl::Status DecodeStoredVector(std::string_view bytes, std::vector<float>* out) {
  switch (bytes.size() % 4) {
    case 0:
      return DecodeRaw(bytes, out);
    case 1:
      return DecodePacked(bytes, out);
    default:
      return Bad("length is neither a raw nor a packed vector's", out);
  }
}

}  // namespace bulwark::sqlite_rows
