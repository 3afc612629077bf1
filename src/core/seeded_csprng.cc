// ChaCha20 keystream generator (see seeded_csprng.h).
#include "core/seeded_csprng.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/hex.h"

namespace bulwark {

SeededCsprng::SeededCsprng(const Seed& seed) : seed_(seed) {}

SeededCsprng::Seed SeededCsprng::NewSeed(Env* env) {
  Seed seed;
  env->RandomBytes(seed);
  return seed;
}

std::string SeededCsprng::seed_hex() const { return HexEncode(std::span<const uint8_t>(seed_)); }

void SeededCsprng::Refill() {
  // The keystream of ChaCha20(key = seed) is the encryption of zeros. OpenSSL's 16-byte IV is a
  // 32-bit little-endian block counter followed by a 96-bit nonce; each refill starts at the next
  // unused block, so the stream is one continuous keystream.
  std::array<uint8_t, 16> iv{};
  for (int i = 0; i < 4; ++i) iv[i] = static_cast<uint8_t>(block_counter_ >> (8 * i));
  for (int i = 0; i < 4; ++i) iv[4 + i] = static_cast<uint8_t>(block_counter_ >> (32 + 8 * i));
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                      EVP_CIPHER_CTX_free);
  static const std::array<uint8_t, sizeof(buffer_)> kZeros{};
  int written = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_chacha20(), nullptr, seed_.data(), iv.data()) != 1 ||
      EVP_EncryptUpdate(ctx.get(), buffer_.data(), &written, kZeros.data(), sizeof(kZeros)) != 1 ||
      written != static_cast<int>(sizeof(buffer_))) {
    std::fputs("bulwark: OpenSSL ChaCha20 failed; refusing to continue without a CSPRNG\n", stderr);
    std::abort();
  }
  block_counter_ += sizeof(buffer_) / 64;
  used_ = 0;
}

void SeededCsprng::Fill(std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    if (used_ == buffer_.size()) Refill();
    const size_t n = std::min(out.size() - done, buffer_.size() - used_);
    std::memcpy(out.data() + done, buffer_.data() + used_, n);
    used_ += n;
    done += n;
  }
}

uint64_t SeededCsprng::NextU64() {
  uint8_t bytes[8];
  Fill(bytes);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return v;
}

uint64_t SeededCsprng::Uniform(uint64_t bound) {
  // Reject the lowest 2^64 mod bound values, so every residue is equally likely.
  const uint64_t threshold = (0 - bound) % bound;
  while (true) {
    const uint64_t x = NextU64();
    if (x >= threshold) return x % bound;
  }
}

}  // namespace bulwark
