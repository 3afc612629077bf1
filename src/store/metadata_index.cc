// MetadataIndex: value hashing consistent with nlohmann::json equality, postings per (key, value)
// hash, and candidate intersection.
#include "store/metadata_index.h"

#include <absl/hash/hash.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace bulwark {
namespace {

// Tags keep values of different JSON kinds apart (numbers share one tag: they compare across types).
enum class Tag : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject, kBinary, kOther };

uint64_t NumberHash(double value) {
  if (value == 0) value = 0;  // -0.0 == 0.0
  return absl::HashOf(Tag::kNumber, value);
}

// A hash with a == b  =>  ValueHash(a) == ValueHash(b) under nlohmann::json's operator==, or
// nullopt for a value holding an unsigned integer above INT64_MAX (see the header).
std::optional<uint64_t> ValueHash(const nlohmann::json& value) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::null:
      return absl::HashOf(Tag::kNull);
    case Type::boolean:
      return absl::HashOf(Tag::kBool, value.get<bool>());
    case Type::number_integer:
      return NumberHash(static_cast<double>(value.get<int64_t>()));
    case Type::number_unsigned: {
      const uint64_t u = value.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return NumberHash(static_cast<double>(u));
    }
    case Type::number_float:
      return NumberHash(value.get<double>());
    case Type::string:
      return absl::HashOf(Tag::kString, value.get_ref<const std::string&>());
    case Type::array: {
      uint64_t h = absl::HashOf(Tag::kArray, value.size());
      for (const nlohmann::json& element : value) {
        const std::optional<uint64_t> e = ValueHash(element);
        if (!e) return std::nullopt;
        h = absl::HashOf(h, *e);
      }
      return h;
    }
    case Type::object: {
      uint64_t h = absl::HashOf(Tag::kObject, value.size());
      for (const auto& [key, element] : value.items()) {  // std::map: sorted by key
        const std::optional<uint64_t> e = ValueHash(element);
        if (!e) return std::nullopt;
        h = absl::HashOf(h, key, *e);
      }
      return h;
    }
    case Type::binary:
      return absl::HashOf(Tag::kBinary, static_cast<const std::vector<uint8_t>&>(value.get_binary()));
    case Type::discarded:
      break;
  }
  return absl::HashOf(Tag::kOther);
}

uint64_t TermHash(const std::string& key, uint64_t value_hash) { return absl::HashOf(key, value_hash); }

void EraseOne(std::vector<int64_t>& rows, int64_t row_id) {
  const auto it = std::find(rows.begin(), rows.end(), row_id);
  if (it == rows.end()) return;
  *it = rows.back();
  rows.pop_back();
}

}  // namespace

void MetadataIndex::Add(int64_t row_id, const nlohmann::json& metadata) {
  Remove(row_id);
  RowFields& fields = rows_[row_id];
  if (!metadata.is_object()) return;
  for (const auto& [key, value] : metadata.items()) {
    if (const std::optional<uint64_t> hash = ValueHash(value)) {
      const uint64_t term = TermHash(key, *hash);
      fields.terms.push_back(term);
      postings_[term].push_back(row_id);
    } else {
      fields.wildcard_keys.push_back(key);
      wildcards_[key].push_back(row_id);
    }
  }
}

void MetadataIndex::Remove(int64_t row_id) {
  const auto it = rows_.find(row_id);
  if (it == rows_.end()) return;
  for (uint64_t term : it->second.terms) {
    auto posting = postings_.find(term);
    EraseOne(posting->second, row_id);
    if (posting->second.empty()) postings_.erase(posting);
  }
  for (const std::string& key : it->second.wildcard_keys) {
    auto rows = wildcards_.find(key);
    EraseOne(rows->second, row_id);
    if (rows->second.empty()) wildcards_.erase(rows);
  }
  rows_.erase(it);
}

std::optional<std::vector<int64_t>> MetadataIndex::Candidates(const nlohmann::json& filter) const {
  // One condition per filter field that can narrow: the rows holding (key, value), plus the rows
  // whose value under key cannot be hashed.
  struct Condition {
    const std::string* key;
    uint64_t term;
    const std::vector<int64_t>* exact;     // may be null: no row holds (key, value)
    const std::vector<int64_t>* wildcard;  // may be null
    size_t size() const { return (exact ? exact->size() : 0) + (wildcard ? wildcard->size() : 0); }
  };
  std::vector<Condition> conditions;
  if (!filter.is_object()) return std::nullopt;
  for (const auto& [key, value] : filter.items()) {
    const std::optional<uint64_t> hash = ValueHash(value);
    if (!hash) continue;  // cannot narrow on this field
    Condition c{&key, TermHash(key, *hash), nullptr, nullptr};
    if (auto it = postings_.find(c.term); it != postings_.end()) c.exact = &it->second;
    if (auto it = wildcards_.find(key); it != wildcards_.end()) c.wildcard = &it->second;
    conditions.push_back(c);
  }
  if (conditions.empty()) return std::nullopt;
  // Walk the rarest condition's rows; keep those that meet every other condition.
  std::sort(conditions.begin(), conditions.end(),
            [](const Condition& a, const Condition& b) { return a.size() < b.size(); });
  std::vector<int64_t> out;
  const Condition& rarest = conditions.front();
  for (const std::vector<int64_t>* rows : {rarest.exact, rarest.wildcard}) {
    if (rows == nullptr) continue;
    for (int64_t row_id : *rows) {
      const RowFields& fields = rows_.at(row_id);
      const bool all = std::all_of(conditions.begin() + 1, conditions.end(), [&](const Condition& c) {
        return std::find(fields.terms.begin(), fields.terms.end(), c.term) != fields.terms.end() ||
               std::find(fields.wildcard_keys.begin(), fields.wildcard_keys.end(), *c.key) !=
                   fields.wildcard_keys.end();
      });
      if (all) out.push_back(row_id);
    }
  }
  // A row can be in both lists of the rarest condition only through a hash collision of the term
  // with a key it holds unhashably; keep each row once.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace bulwark
