// The unsigned writer (DESIGN 2; SMSR "unsigned adversary"): it can write rows straight into the
// store's files but holds no signing key. It opens the store's SQLite database (bulwark.db) with
// storage/sqlite/raw_sql.h -- bypassing the API -- and plants poison rows whose embedding is the real
// embedding of the poison text (so retrieval would rank them first if it trusted them):
//   missing_tag    an empty tag
//   bogus_tag      32 random bytes
//   copied_tag     the tag and key id of an existing legitimate row of the namespace
//   tampered_text  an existing legitimate row's text and embedding replaced, its tag kept
// SMSR Component 1 must make every one of them unretrievable: never returned by Search or Get,
// and listed by Verify.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"

namespace bulwark::attack {

enum class UnsignedVariant { kMissingTag, kBogusTag, kCopiedTag, kTamperedText };
inline constexpr UnsignedVariant kAllUnsignedVariants[] = {
    UnsignedVariant::kMissingTag, UnsignedVariant::kBogusTag, UnsignedVariant::kCopiedTag,
    UnsignedVariant::kTamperedText};
std::string_view ToString(
    UnsignedVariant variant);  // "missing_tag", "bogus_tag", "copied_tag", "tampered_text"

struct UnsignedRow {
  UnsignedVariant variant;
  std::string id;  // the planted (or tampered) entry's id
  int64_t row_id = 0;
};

// Plants one row per variant into `store_dir`/bulwark.db (the store may be open in another
// connection; SQLite's locking serializes the writes). The texts are `poison_text`;
// `embedder` must be the store's. FailedPrecondition if the namespace has no legitimate row to
// copy from (copied_tag, tampered_text); Internal for SQLite errors.
[[nodiscard]] absl::StatusOr<std::vector<UnsignedRow>> InjectUnsignedRows(
    const std::filesystem::path& store_dir, std::string_view name_space, std::string_view poison_text,
    const Embedder& embedder, const std::vector<UnsignedVariant>& variants, uint64_t seed = 0);

}  // namespace bulwark::attack
