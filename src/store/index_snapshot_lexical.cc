// The BM25 section body of an index snapshot (index_snapshot_stream.h): a namespace's Bm25Index as
// its postings, restored with Bm25Index::Restore (which derives and checks the rest). The reader
// bounds every count by the bytes left in the section before allocating anything.
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

uint64_t LexicalBodyBytes(const Bm25Index& lexical) {
  const Counts c = CountsOf(lexical);
  return 4 * 8 + c.slots * 8 + c.terms * 8 + c.name_bytes + c.postings * 8;
}

void WriteLexicalBody(SnapshotWriter& out, const Bm25Index& lexical) {
  const Counts c = CountsOf(lexical);
  for (const uint64_t v : {c.slots, c.terms, c.name_bytes, c.postings}) out.Put(v);
  out.Append(std::as_bytes(lexical.slot_ids()));
  lexical.ForEachTerm([&](std::string_view term, std::span<const Bm25Index::Posting>) {
    out.Put(static_cast<uint32_t>(term.size()));
  });
  lexical.ForEachTerm([&](std::string_view term, std::span<const Bm25Index::Posting>) {
    out.Append(std::as_bytes(std::span<const char>(term)));
  });
  lexical.ForEachTerm([&](std::string_view, std::span<const Bm25Index::Posting> postings) {
    out.Put(static_cast<uint32_t>(postings.size()));
  });
  lexical.ForEachTerm([&](std::string_view, std::span<const Bm25Index::Posting> postings) {
    out.Append(std::as_bytes(postings));
  });
}

absl::StatusOr<LexicalArrays> ReadLexicalBody(SnapshotReader& in) {
  Counts c;
  for (uint64_t* v : {&c.slots, &c.terms, &c.name_bytes, &c.postings}) {
    BULWARK_ASSIGN_OR_RETURN(*v, in.Get<uint64_t>());
  }
  BULWARK_RETURN_IF_ERROR(ArrayBytes(c, in.remaining()).status());
  LexicalArrays a;
  a.names.resize(static_cast<size_t>(c.name_bytes));
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.slots, &a.ids));
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.terms, &a.name_lengths));
  BULWARK_RETURN_IF_ERROR(in.Read(std::as_writable_bytes(std::span<char>(a.names))));
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.terms, &a.counts));
  BULWARK_RETURN_IF_ERROR(in.ReadArray(c.postings, &a.postings));
  return a;
}

}  // namespace bulwark::snapshot_internal
