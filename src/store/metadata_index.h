// MetadataIndex: an in-memory inverted index from the top-level metadata fields of one namespace's
// indexed rows to their row ids, so a search with SearchOptions::metadata_filter knows which rows
// can match without reading any of them from storage (a filter that matches nothing costs no row
// reads at all).
//
// It is a pre-filter, never the last word: Candidates returns a superset of the rows whose
// metadata matches, and the store still checks the filter against each candidate's verified row
// as read from storage. The metadata indexed is the row's as the store last wrote or loaded it.
//
// Matching follows MatchesMetadata in the store: a row matches when every key of the filter is
// present in its metadata with a value that nlohmann::json's operator== calls equal -- including
// across number types (1 == 1.0 == 1u). Values are indexed by a 64-bit hash that is equal for equal
// values: numbers hash by their value as a double, objects and arrays recursively. The one case
// such a hash cannot serve is an unsigned integer above INT64_MAX, which nlohmann compares with
// signed integers after a wrap (2^64-1 == -1) but with floats by value: a row holding one (at any
// depth) under a key is a candidate for every filter on that key, and a filter value holding one
// does not narrow the candidates. Hash collisions only add candidates.
//
// Thread safety: not internally synchronized; the store mutates it under its exclusive lock and
// reads it under its shared lock.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace bulwark {

class MetadataIndex {
 public:
  // Indexes the top-level fields of `metadata` (a JSON object; anything else indexes no fields)
  // under `row_id`, replacing what was indexed for it before.
  void Add(int64_t row_id, const nlohmann::json& metadata);
  // Forgets `row_id`; a row id that is not indexed is ignored.
  void Remove(int64_t row_id);

  // The row ids (each once, in no particular order) whose metadata may match `filter`, a JSON
  // object of exact-match fields; nullopt when the filter cannot narrow the rows (it is empty or
  // every value is an unsigned integer above INT64_MAX), meaning every row may match. Costs
  // O(number of filter fields * rows holding the rarest filtered (key, value)).
  std::optional<std::vector<int64_t>> Candidates(const nlohmann::json& filter) const;

  size_t rows() const { return rows_.size(); }

 private:
  struct RowFields {
    std::vector<uint64_t> terms;             // hashes of (key, value), one per unambiguous field
    std::vector<std::string> wildcard_keys;  // keys whose value cannot be hashed (see above)
  };

  absl::flat_hash_map<uint64_t, std::vector<int64_t>> postings_;      // term -> rows
  absl::flat_hash_map<std::string, std::vector<int64_t>> wildcards_;  // key -> rows matching any value
  absl::flat_hash_map<int64_t, RowFields> rows_;
};

}  // namespace bulwark
