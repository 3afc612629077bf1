// How the SQLite backend stores an entry's vector in the `embedding` column (schema version 7,
// doc/store_format.md). Two forms, told apart by their length alone:
//
//   raw     4 * d bytes: the floats in host (little-endian) order. Every store before version 7
//           wrote this; version 7 writes it when the packed form would not be smaller.
//   packed  [d: 2 bytes, little-endian][bitmap: ceil(d / 8) bytes; bit i (byte i / 8, bit i % 8)
//           is set iff float i's bit pattern is not all zeros][4 bytes per set bit: those floats,
//           in order][0-3 zero bytes of padding, so that the whole length is 1 modulo 4]
//
// A packed value is never a multiple of 4 bytes long, so it cannot be mistaken for a raw one. The
// packing is lossless (bit patterns are compared and copied: -0.0 and NaN payloads survive), so
// the signed entry a row decodes to is the entry that was signed. It pays off for sparse vectors:
// the default lexical embedder's (d = 384) have about half of their components exactly zero, and
// pack to about 810 bytes instead of 1,536, which lets a 4 KiB page hold three rows instead of two.
// Dense vectors (a neural embedder's) are stored raw, as before.
#pragma once

#include <absl/status/status.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark::sqlite_rows {

// The stored bytes of `vector`: the packed form if it is shorter than the raw one (and d <= 65535),
// else the raw form.
std::string EncodeStoredVector(std::span<const float> vector);

// Decodes either form into `out` (resized; its capacity is reused). On success `out` holds exactly
// the floats that were encoded. DataLoss, with `out` cleared, if `bytes` is neither: a length that
// is 1 modulo 4 but does not match its header and bitmap, padding or unused bitmap bits that are
// not zero, or a length of 2 or 3 modulo 4. Never reads outside `bytes`.
[[nodiscard]] absl::Status DecodeStoredVector(std::string_view bytes, std::vector<float>* out);

}  // namespace bulwark::sqlite_rows
