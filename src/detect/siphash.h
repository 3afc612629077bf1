// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudorandom function on short inputs. The
// watermark uses it to rank each substitution group's variants under the writer's key, so that
// which variants are green is unpredictable without the key, at a few nanoseconds per call.
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
