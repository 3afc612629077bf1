#include "core/hex.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace bulwark {
namespace {
constexpr char kDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string HexEncode(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

std::string HexEncode(std::string_view bytes) {
  return HexEncode(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

std::optional<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>((hi << 4) | lo);
  }
  return out;
}

std::string Sha256Hex(std::string_view bytes) {
  // OpenSSL 3's one-shot SHA256() looks the algorithm up in its provider tables on every call
  // (EVP_MD_fetch: a lock and a hash-table probe, about as long as hashing a short key); every
  // request hashes its credential, so the implementation is fetched once per process.
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  uint8_t digest[SHA256_DIGEST_LENGTH];
  unsigned int length = 0;
  if (kSha256 == nullptr || EVP_Digest(bytes.data(), bytes.size(), digest, &length, kSha256, nullptr) != 1 ||
      length != sizeof(digest)) {
    SHA256(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), digest);
  }
  return HexEncode(std::span<const uint8_t>(digest, sizeof(digest)));
}

}  // namespace bulwark
