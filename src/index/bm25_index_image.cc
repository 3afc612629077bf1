// Bm25Index (see bm25_index.h): what an index snapshot (store/index_snapshot.h) reads and writes of
// it, so that a store's open need not tokenize every memory again. The postings are taken and given
// back as they are (slots, ascending order, term frequencies); everything else (the id and term
// maps, document lengths, N, avgdl, the max-score bounds) is derived from them on Restore, so a
// restored index holds nothing the postings do not imply.
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <limits>

#include "index/bm25_index.h"

namespace bulwark {

size_t Bm25Index::posting_count() const {
  size_t total = 0;
  for (const std::vector<Posting>& postings : postings_) total += postings.size();
  return total;
}

void Bm25Index::ForEachTerm(
    absl::FunctionRef<void(std::string_view term, std::span<const Posting> postings)> visit) const {
  for (size_t t = 0; t < postings_.size(); ++t) {
    if (!postings_[t].empty()) visit(term_names_[t], postings_[t]);  // empty: a free term id
  }
}

absl::StatusOr<Bm25Index> Bm25Index::Restore(Bm25Options options, std::span<const int64_t> ids,
                                             std::span<const uint32_t> name_lengths, std::string_view names,
                                             std::span<const uint32_t> counts,
                                             std::span<const Posting> postings) {
  if (name_lengths.size() != counts.size() || ids.size() >= std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError("BM25 image: term arrays of different sizes, or too many documents");
  }
  Bm25Index index(options);
  index.ids_.assign(ids.begin(), ids.end());
  index.position_by_id_.reserve(ids.size());
  for (size_t slot = 0; slot < ids.size(); ++slot) {
    if (ids[slot] == kFreeSlot) {
      index.free_slots_.push_back(static_cast<uint32_t>(slot));
    } else if (!index.position_by_id_.emplace(ids[slot], static_cast<uint32_t>(slot)).second) {
      return absl::InvalidArgumentError(absl::StrCat("BM25 image: document ", ids[slot], " repeated"));
    }
  }
  // First pass: every bound checked, each document's length and distinct terms counted.
  std::vector<uint64_t> lengths(ids.size(), 0);
  std::vector<uint32_t> distinct(ids.size(), 0);
  size_t name_at = 0, posting_at = 0;
  for (size_t t = 0; t < counts.size(); ++t) {
    if (name_lengths[t] > names.size() - name_at || counts[t] == 0 ||
        counts[t] > postings.size() - posting_at) {
      return absl::InvalidArgumentError(absl::StrCat("BM25 image: term ", t, " exceeds the image"));
    }
    name_at += name_lengths[t];
    int64_t previous = -1;
    for (const Posting& p : postings.subspan(posting_at, counts[t])) {
      if (p.doc >= ids.size() || ids[p.doc] == kFreeSlot || p.tf == 0 || int64_t{p.doc} <= previous) {
        return absl::InvalidArgumentError(absl::StrCat("BM25 image: a bad posting of term ", t));
      }
      previous = p.doc;
      lengths[p.doc] += p.tf;
      ++distinct[p.doc];
    }
    posting_at += counts[t];
  }
  if (name_at != names.size() || posting_at != postings.size()) {
    return absl::InvalidArgumentError("BM25 image: the terms do not cover its names and postings");
  }
  index.lengths_.resize(ids.size());
  for (size_t slot = 0; slot < ids.size(); ++slot) {
    if (lengths[slot] >= std::numeric_limits<uint32_t>::max())
      return absl::InvalidArgumentError("BM25 image: a document is too long");
    index.lengths_[slot] = static_cast<uint32_t>(lengths[slot]);
    index.total_length_ += lengths[slot];
  }
  // Second pass: the term maps, postings, bounds and each document's term ids (ascending, as Add
  // leaves them).
  index.terms_.resize(ids.size());
  for (size_t slot = 0; slot < ids.size(); ++slot) index.terms_[slot].reserve(distinct[slot]);
  index.term_ids_.reserve(counts.size());
  index.postings_.resize(counts.size());
  index.bounds_.resize(counts.size());
  index.term_names_.reserve(counts.size());
  name_at = posting_at = 0;
  for (size_t t = 0; t < counts.size(); ++t) {
    const uint32_t term_id = static_cast<uint32_t>(t);
    std::string name(names.substr(name_at, name_lengths[t]));
    name_at += name_lengths[t];
    if (!index.term_ids_.emplace(name, term_id).second)
      return absl::InvalidArgumentError(absl::StrCat("BM25 image: term ", t, " repeated"));
    index.term_names_.push_back(std::move(name));
    const std::span<const Posting> own = postings.subspan(posting_at, counts[t]);
    posting_at += counts[t];
    index.postings_[t].assign(own.begin(), own.end());
    TermBound& bound = index.bounds_[t];
    for (const Posting& p : own) {
      bound.max_tf = std::max(bound.max_tf, p.tf);
      bound.min_length = std::min(bound.min_length, index.lengths_[p.doc]);
      index.terms_[p.doc].push_back(term_id);
    }
  }
  return index;
}

}  // namespace bulwark
