// Loads the Aiksaurus thesaurus files with every size and id checked (see thesaurus.h).
#include "embed/thesaurus.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <filesystem>

#include "core/status_macros.h"
#include "embed/shared_per_directory.h"
#include "embed/wordnet_files.h"

namespace bulwark {
namespace {

constexpr uint16_t kEnd = 0xFFFF;
constexpr size_t kMaxIds = 0xFFFF;  // ids are uint16 and 0xFFFF ends a record

// Reads the big-endian uint16 at bytes[*pos]; false if fewer than two bytes remain.
bool ReadU16(std::string_view bytes, size_t* pos, uint16_t* out) {
  if (bytes.size() - *pos < 2) return false;
  *out = static_cast<uint16_t>((static_cast<unsigned char>(bytes[*pos]) << 8) |
                               static_cast<unsigned char>(bytes[*pos + 1]));
  *pos += 2;
  return true;
}

// Reads ids up to and including the 0xFFFF terminator into *ids (at most `max` ids).
absl::Status ReadIdList(std::string_view bytes, size_t* pos, size_t max, const std::string& what,
                        std::vector<uint16_t>* ids) {
  ids->clear();
  uint16_t id = 0;
  while (true) {
    if (!ReadU16(bytes, pos, &id)) return absl::DataLossError(absl::StrCat(what, ": truncated id list"));
    if (id == kEnd) return absl::OkStatus();
    if (ids->size() == max) return absl::DataLossError(absl::StrCat(what, ": over ", max, " ids"));
    ids->push_back(id);
  }
}

bool IsThesaurusWordByte(char c) { return c > ' ' && c < 0x7f; }

}  // namespace

absl::StatusOr<std::shared_ptr<const Thesaurus>> Thesaurus::Shared(const std::string& dir) {
  return SharedPerDirectory<Thesaurus>(
      dir, [](const std::string& d) -> absl::StatusOr<std::shared_ptr<const Thesaurus>> {
        const std::filesystem::path base(d);
        BULWARK_ASSIGN_OR_RETURN(std::string words, ReadWordNetFile(base / "words.dat", kMaxFileBytes));
        BULWARK_ASSIGN_OR_RETURN(std::string meanings, ReadWordNetFile(base / "meanings.dat", kMaxFileBytes));
        return Parse(words, meanings);
      });
}

absl::Status Thesaurus::ParseMeanings(std::string_view bytes, std::vector<std::vector<uint16_t>>* out) {
  size_t pos = 0;
  std::vector<uint16_t> ids;
  while (pos < bytes.size()) {
    if (out->size() == kMaxIds) return absl::DataLossError("meanings.dat: over 65535 meanings");
    const std::string what = absl::StrCat("meanings.dat record ", out->size());
    BULWARK_RETURN_IF_ERROR(ReadIdList(bytes, &pos, kMaxMeaningWords, what, &ids));
    if (ids.size() < 2) return absl::DataLossError(absl::StrCat(what, ": fewer than two titles"));
    out->push_back(ids);
  }
  return absl::OkStatus();
}

absl::Status Thesaurus::ParseWords(std::string_view bytes, size_t meaning_count,
                                   std::vector<std::string>* texts, std::vector<uint32_t>* term_of) {
  size_t pos = 0;
  std::vector<uint16_t> ids;
  while (pos < bytes.size()) {
    if (texts->size() == kMaxIds) return absl::DataLossError("words.dat: over 65535 words");
    const std::string what = absl::StrCat("words.dat record ", texts->size());
    const size_t nul = bytes.find('\0', pos);
    if (nul == std::string_view::npos)
      return absl::DataLossError(absl::StrCat(what, ": no NUL after the word"));
    const std::string_view word = bytes.substr(pos, nul - pos);
    if (word.empty() || word.size() > kMaxWordBytes ||
        !std::all_of(word.begin(), word.end(), IsThesaurusWordByte)) {
      return absl::DataLossError(
          absl::StrCat(what, ": not a word of 1..", kMaxWordBytes, " printable bytes"));
    }
    pos = nul + 1;
    BULWARK_RETURN_IF_ERROR(ReadIdList(bytes, &pos, kMaxMeaningsPerWord, what, &ids));
    const bool single = word.find(':') == std::string_view::npos;
    std::string lower(word);
    for (char& c : lower) c = absl::ascii_tolower(static_cast<unsigned char>(c));
    for (const uint16_t m : ids) {
      if (m >= meaning_count)
        return absl::DataLossError(absl::StrCat(what, ": meaning ", m, " out of range"));
      if (!single) continue;
      std::vector<uint32_t>& mine = meanings_of_[lower];
      if (std::find(mine.begin(), mine.end(), m) == mine.end()) mine.push_back(m);
    }
    texts->push_back(lower);
    term_of->push_back(single ? TermId(lower) : UINT32_MAX);
  }
  return absl::OkStatus();
}

uint32_t Thesaurus::TermId(std::string_view lower) {
  if (auto it = term_ids_.find(lower); it != term_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(terms_.size());
  terms_.emplace_back(lower);
  term_ids_.emplace(std::string(lower), id);
  return id;
}

absl::StatusOr<std::shared_ptr<const Thesaurus>> Thesaurus::Parse(std::string_view words_dat,
                                                                  std::string_view meanings_dat) {
  std::shared_ptr<Thesaurus> t(new Thesaurus());
  std::vector<std::vector<uint16_t>> meanings;
  BULWARK_RETURN_IF_ERROR(t->ParseMeanings(meanings_dat, &meanings));
  std::vector<std::string> texts;
  std::vector<uint32_t> term_of;  // word id -> term id, UINT32_MAX for a multi-word entry
  BULWARK_RETURN_IF_ERROR(t->ParseWords(words_dat, meanings.size(), &texts, &term_of));
  t->meanings_.reserve(meanings.size());
  for (size_t m = 0; m < meanings.size(); ++m) {
    Meaning meaning;
    meaning.begin = static_cast<uint32_t>(t->words_.size());
    for (size_t i = 0; i < meanings[m].size(); ++i) {
      const uint16_t w = meanings[m][i];
      if (w >= term_of.size()) {
        return absl::DataLossError(absl::StrCat("meanings.dat record ", m, ": word ", w, " out of range"));
      }
      const uint32_t term = term_of[w];
      const auto first = t->words_.begin() + meaning.begin;
      if (term == UINT32_MAX || std::find(first, t->words_.end(), term) != t->words_.end()) continue;
      t->words_.push_back(term);
      if (i < 2) meaning.titles_end = static_cast<uint32_t>(t->words_.size());
    }
    if (meaning.titles_end == 0) meaning.titles_end = meaning.begin;
    meaning.end = static_cast<uint32_t>(t->words_.size());
    t->meanings_.push_back(meaning);
  }
  return std::shared_ptr<const Thesaurus>(std::move(t));
}

}  // namespace bulwark
