// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudorandom function on short inputs. The
// watermark uses it to rank each substitution group's variants under the writer's key, so that
// which variants are green is unpredictable without the key, at a few nanoseconds per call.
//
// Why not OpenSSL's SipHash (EVP_MAC "SIPHASH"): scoring a text hashes every variant of every
// substitution site, and each EVP_MAC call goes through a context and the provider's parameter
// machinery; for the watermark's 13-byte messages that cost 2 to 3 times this function per hash
// (a new context per call; about 2 times when one context is re-initialized), measured once on a
// loaded machine. This implementation is pinned to OpenSSL's by siphash_test.cc (equal outputs on
// random keys and messages of every tail length) and to the paper's test vectors by
// watermark_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace bulwark {

using SipHashKey = std::array<uint8_t, 16>;

// SipHash-2-4 of `data` under `key` (the reference implementation's byte order: the key and the
// message are read little-endian).
uint64_t SipHash24(const SipHashKey& key, std::string_view data);

}  // namespace bulwark
