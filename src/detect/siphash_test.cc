// SipHash24 (the hand-written implementation the watermark hashes each site with) against
// OpenSSL's SipHash-2-4 (EVP_MAC "SIPHASH", EVP_MAC-Siphash(7)) on random keys and messages.
#include "detect/siphash.h"

#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <memory>
#include <random>
#include <string>

namespace bulwark {
namespace {

struct EvpMacFree {
  void operator()(EVP_MAC* mac) const { EVP_MAC_free(mac); }
};
struct EvpMacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};

// SipHash-2-4 of `data` under `key` with OpenSSL: an 8-byte tag (OSSL_MAC_PARAM_SIZE), 2
// compression and 4 finalization rounds (set explicitly, though they are the defaults), read as
// a little-endian integer as the reference implementation writes it. False on any OpenSSL error.
bool OpenSslSipHash24(EVP_MAC* mac, const SipHashKey& key, std::string_view data, uint64_t* out) {
  std::unique_ptr<EVP_MAC_CTX, EvpMacCtxFree> ctx(EVP_MAC_CTX_new(mac));
  if (ctx == nullptr) return false;
  size_t size = 8;
  unsigned int c_rounds = 2, d_rounds = 4;
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
                               OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_C_ROUNDS, &c_rounds),
                               OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_D_ROUNDS, &d_rounds),
                               OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(ctx.get(), key.data(), key.size(), params) != 1) return false;
  if (EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
    return false;
  unsigned char tag[16];
  size_t tag_size = 0;
  if (EVP_MAC_final(ctx.get(), tag, &tag_size, sizeof tag) != 1 || tag_size != 8) return false;
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | tag[i];
  *out = value;
  return true;
}

TEST(SipHashTest, EqualsOpenSslSipHash24) {
  std::unique_ptr<EVP_MAC, EvpMacFree> mac(EVP_MAC_fetch(nullptr, "SIPHASH", nullptr));
  ASSERT_TRUE(mac != nullptr) << "OpenSSL has no SIPHASH MAC";
  std::mt19937_64 rng(20261122);
  // Every length 0 to 40 (each tail length of the last 8-byte block, several blocks), then
  // random lengths up to 300.
  for (int trial = 0; trial < 400; ++trial) {
    SipHashKey key;
    for (auto& b : key) b = static_cast<uint8_t>(rng());
    const size_t length = trial <= 40 ? static_cast<size_t>(trial) : static_cast<size_t>(rng() % 301);
    std::string message(length, '\0');
    for (char& c : message) c = static_cast<char>(rng());
    uint64_t expected = 0;
    ASSERT_TRUE(OpenSslSipHash24(mac.get(), key, message, &expected)) << "trial " << trial;
    EXPECT_EQ(SipHash24(key, message), expected) << "trial " << trial << ", length " << length;
  }
  // The reference vector (SipHash paper, Appendix A) through OpenSSL too: key 00..0f, message 00..0e.
  SipHashKey key;
  for (int i = 0; i < 16; ++i) key[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  std::string message;
  for (int i = 0; i < 15; ++i) message.push_back(static_cast<char>(i));
  uint64_t reference = 0;
  ASSERT_TRUE(OpenSslSipHash24(mac.get(), key, message, &reference));
  EXPECT_EQ(reference, 0xa129ca6149be45e5ull);
}

}  // namespace
}  // namespace bulwark
