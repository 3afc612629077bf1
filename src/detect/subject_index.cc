#include "detect/subject_index.h"

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>

#include <algorithm>
#include <cmath>

#include "index/lexical_tokenizer.h"

namespace bulwark {
namespace {

constexpr size_t kMaxSubjectTextBytes = 16 * 1024;

// Words that say how a claim holds (modality, negation, time of the statement) or that are one of
// its values (weekdays and months are date slots: slot_extractor.h), not what it is about; the
// tokenizer's stop words already drop the function words. Stems, as the tokenizer gives them.
bool IsFrameWord(std::string_view w) {
  static const auto* words = new absl::flat_hash_set<std::string_view>{
      "must",   "may",     "might",     "shall",    "need",   "never",    "without", "cannot",  "now",
      "also",   "alway",   "everi",     "each",     "per",    "new",      "longer",  "anymor",  "updat",
      "note",   "pleas",   "still",     "alreadi",  "ani",    "all",      "none",    "onli",    "instead",
      "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",  "januari", "februari",
      "march",  "april",   "june",      "juli",     "august", "septemb",  "octob",   "novemb",  "decemb"};
  return words->contains(w);
}

bool HasDigit(std::string_view w) {
  return std::any_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether both texts name people or places and share none of them.
bool NamesDisjoint(const TextSlots& a, const TextSlots& b) {
  bool a_names = false, b_names = false;
  for (const Slot& x : a.slots) {
    if (x.kind != SlotKind::kName) continue;
    a_names = true;
    for (const Slot& y : b.slots) {
      if (y.kind == SlotKind::kName && y.value == x.value) return false;
    }
  }
  for (const Slot& y : b.slots) b_names |= y.kind == SlotKind::kName;
  return a_names && b_names;
}

}  // namespace

std::optional<SlotDiff> SubjectDiff(const TextSlots& original, const TextSlots& updated) {
  if (NamesDisjoint(original, updated)) return std::nullopt;
  SlotDiff diff = DiffSlots(original, updated);
  diff.changes.erase(std::remove_if(diff.changes.begin(), diff.changes.end(),
                                    [](const SlotChange& c) { return c.kind == SlotKind::kName; }),
                     diff.changes.end());
  if (!diff.contradicts()) return std::nullopt;
  return diff;
}

SubjectIndex::Terms SubjectIndex::TermsOf(std::string_view text) {
  static const LexicalTokenizer* tokenizer = new LexicalTokenizer();
  text = text.substr(0, std::min(text.size(), kMaxSubjectTextBytes));
  Terms out;
  for (const std::string& w : tokenizer->Tokens(text)) {
    if (w.size() < 3 || HasDigit(w) || IsFrameWord(w)) continue;
    out.push_back(absl::HashOf(w));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > kMaxTerms) out.resize(kMaxTerms);
  return out;
}

void SubjectIndex::Put(uint32_t row, Terms terms) {
  Remove(row);
  for (uint64_t t : terms) postings_[t].push_back(row);
  terms_[row] = std::move(terms);
}

void SubjectIndex::Remove(uint32_t row) {
  auto it = terms_.find(row);
  if (it == terms_.end()) return;
  for (uint64_t t : it->second) {
    auto p = postings_.find(t);
    if (p == postings_.end()) continue;
    std::vector<uint32_t>& rows = p->second;
    rows.erase(std::remove(rows.begin(), rows.end(), row), rows.end());
    if (rows.empty()) postings_.erase(p);
  }
  terms_.erase(it);
}

double SubjectIndex::Idf(size_t df) const {
  return std::log((static_cast<double>(terms_.size()) + 1.0) / (static_cast<double>(df) + 1.0)) + 1.0;
}

std::vector<std::pair<double, uint32_t>> SubjectIndex::Overlapping(const Terms& terms, double min_overlap,
                                                                   size_t limit) const {
  std::vector<std::pair<double, uint32_t>> out;
  if (terms.empty() || terms_.empty() || limit == 0) return out;
  thread_local absl::flat_hash_map<uint32_t, double> shared;
  shared.clear();
  double total = 0;
  const size_t max_scanned =
      std::min(kMaxPostingsScanned, std::max(kCommonShare, terms_.size() / kCommonShare));
  for (uint64_t t : terms) {
    auto p = postings_.find(t);
    const size_t df = p == postings_.end() ? 0 : p->second.size();
    const double idf = Idf(df);
    total += idf;
    if (df == 0 || df > max_scanned) continue;
    for (uint32_t row : p->second) shared[row] += idf;
  }
  if (total <= 0) return out;
  for (const auto& [row, weight] : shared) {
    const double overlap = weight / total;
    if (overlap >= min_overlap) out.push_back({overlap, row});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace bulwark
