// Lowercase hex encoding of byte strings.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bulwark {

std::string HexEncode(std::string_view bytes);
std::string HexEncode(std::span<const uint8_t> bytes);
// nullopt unless `hex` has even length and only [0-9a-fA-F].
std::optional<std::string> HexDecode(std::string_view hex);

// SHA-256 of `bytes` as 64 lowercase hex characters.
std::string Sha256Hex(std::string_view bytes);

}  // namespace bulwark
