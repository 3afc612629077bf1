// The BM25 section of an index snapshot's namespace record (index_snapshot_stream.h): a namespace's
// Bm25Index as its postings, restored with Bm25Index::Restore (which derives and checks the rest).
// The reader bounds every count by the bytes left in the file before allocating anything.
#include <absl/strings/str_cat.h>

#include <utility>

#include "store/index_snapshot_stream.h"

namespace bulwark::snapshot_internal {
namespace {

struct Counts {
  uint64_t slots = 0, terms = 0, name_bytes = 0, postings = 0;
};

Counts CountsOf(const Bm25Index& lexical) {
  Counts c{.slots = lexical.slot_ids().size()};
  lexical.ForEachTerm([&](std::string_view term, std::span<const Bm25Index::Posting> postings) {
    ++c.terms;
    c.name_bytes += term.size();
    c.postings += postings.size();
  });
  return c;
}

// The bytes of the arrays after the counts; DataLoss if they exceed `available`.
absl::StatusOr<uint64_t> ArrayBytes(const Counts& c, uint64_t available) {
  uint64_t need = 0;
  for (const auto& [count, width] :
       {std::pair{c.slots, uint64_t{8}}, std::pair{c.terms, uint64_t{8}},
        std::pair{c.name_bytes, uint64_t{1}}, std::pair{c.postings, uint64_t{8}}}) {
    if (count > (available - need) / width)
      return absl::DataLossError("BM25 section counts exceed the index snapshot");
    need += count * width;
  }
  return need;
}

}  // namespace

uint64_t LexicalSectionBytes(const Bm25Index* lexical) {
  if (lexical == nullptr) return 1;
  const Counts c = CountsOf(*lexical);
  return 1 + 4 * 8 + c.slots * 8 + c.terms * 8 + c.name_bytes + c.postings * 8;
}

void WriteLexicalSection(SnapshotWriter& out, const Bm25Index* lexical) {
  out.Put(static_cast<uint8_t>(lexical != nullptr));
  if (lexical == nullptr) return;
  const Counts c = CountsOf(*lexical);
  for (const uint64_t v : {c.slots, c.terms, c.name_bytes, c.postings}) out.Put(v);
  out.Append(std::as_bytes(lexical->slot_ids()));
  lexical->ForEachTerm([&](std::string_view term, std::span<const Bm25Index::Posting>) {
    out.Put(static_cast<uint32_t>(term.size()));
  });
  lexical->ForEachTerm([&](std::string_view term, std::span<const Bm25Index::Posting>) {
    out.Append(std::as_bytes(std::span<const char>(term)));
  });
  lexical->ForEachTerm([&](std::string_view, std::span<const Bm25Index::Posting> postings) {
    out.Put(static_cast<uint32_t>(postings.size()));
  });
  lexical->ForEachTerm([&](std::string_view, std::span<const Bm25Index::Posting> postings) {
    out.Append(std::as_bytes(postings));
  });
}

absl::StatusOr<std::optional<Bm25Index>> ReadLexicalSection(SnapshotReader& in, const Bm25Options* options) {
  BULWARK_ASSIGN_OR_RETURN(const uint8_t present, in.Get<uint8_t>());
  if (present > 1) return absl::DataLossError("malformed BM25 section in the index snapshot");
  if (present == 0) return std::nullopt;
  Counts c;
  for (uint64_t* v : {&c.slots, &c.terms, &c.name_bytes, &c.postings}) {
    BULWARK_ASSIGN_OR_RETURN(*v, in.Get<uint64_t>());
  }
  BULWARK_ASSIGN_OR_RETURN(const uint64_t bytes, ArrayBytes(c, in.remaining()));
  if (options == nullptr) {  // other lexical terms: not used, but MACed with the rest
    BULWARK_RETURN_IF_ERROR(in.Skip(bytes));
    return std::nullopt;
  }
  std::vector<int64_t> ids;
  std::vector<uint32_t> name_lengths, counts;
  std::string names(static_cast<size_t>(c.name_bytes), '\0');
  std::vector<Bm25Index::Posting> postings;
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.slots, &ids));
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.terms, &name_lengths));
  BULWARK_RETURN_IF_ERROR(in.Read(std::as_writable_bytes(std::span<char>(names))));
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.terms, &counts));
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.postings, &postings));
  absl::StatusOr<Bm25Index> restored =
      Bm25Index::Restore(*options, ids, name_lengths, names, counts, postings);
  if (!restored.ok()) {
    return absl::DataLossError(
        absl::StrCat("BM25 section of the index snapshot: ", restored.status().message()));
  }
  return std::optional<Bm25Index>(*std::move(restored));
}

}  // namespace bulwark::snapshot_internal
