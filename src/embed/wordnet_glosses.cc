// Loads WordNet's synsets of all four parts of speech into gloss neighbourhoods (see
// wordnet_glosses.h): two passes, first each synset's own words and pointers, then each synset's
// related words resolved through its pointers.
#include "embed/wordnet_glosses.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
// Inline XXH3: Key() is on the embedder's hot path.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include "core/status_macros.h"
#include "core/strings.h"
#include "embed/idf_table.h"
#include "embed/shared_per_directory.h"
#include "embed/wordnet_files.h"

namespace bulwark {
namespace {

constexpr uint64_t kMaxGlossFileBytes = uint64_t{256} << 20;
constexpr uint32_t kMaxOffset = uint32_t{1} << 30;
constexpr std::array<std::string_view, 4> kGlossPosNames = {"noun", "verb", "adj", "adv"};

int PosOfSymbol(std::string_view pos) {
  if (pos == "n") return 0;
  if (pos == "v") return 1;
  if (pos == "a" || pos == "s") return 2;
  if (pos == "r") return 3;
  return -1;
}

uint64_t SynsetKey(int pos, uint32_t offset) { return (uint64_t{static_cast<uint32_t>(pos)} << 32) | offset; }

// Pointers whose targets' lemmas join a synset's related words.
bool IsRelatingPointer(std::string_view symbol) {
  return symbol == "@" || symbol == "@i" || symbol == "+" || symbol == "&" || symbol == "\\";
}

// The definition part of a gloss: the text before the first quoted example.
std::string_view Definition(std::string_view gloss) {
  const size_t quote = gloss.find('"');
  return quote == std::string_view::npos ? gloss : gloss.substr(0, quote);
}

}  // namespace

struct WordNetGlosses::ParsedSynset {
  std::vector<uint32_t> own;       // its lemmas' and definition's word ids
  std::vector<uint32_t> lemmas;    // its lemmas' word ids (what pointers to it contribute)
  std::vector<uint64_t> pointers;  // SynsetKey of relating pointer targets
};

absl::StatusOr<std::shared_ptr<const WordNetGlosses>> WordNetGlosses::Shared(const std::string& dir) {
  return SharedPerDirectory<WordNetGlosses>(
      dir, [](const std::string& d) -> absl::StatusOr<std::shared_ptr<const WordNetGlosses>> {
        std::shared_ptr<WordNetGlosses> loaded(new WordNetGlosses());
        BULWARK_RETURN_IF_ERROR(loaded->LoadFrom(d));
        return loaded;
      });
}

uint64_t WordNetGlosses::Key(std::string_view word) {
  return XXH3_64bits_withSeed(word.data(), word.size(), kKeySeed);
}

uint32_t WordNetGlosses::WordId(std::string_view word) {
  if (auto it = word_ids_.find(word); it != word_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(words_.size());
  words_.emplace_back(word);
  keys_.push_back(Key(word));
  idfs_.push_back(IdfLookup(word));
  word_ids_.emplace(std::string(word), id);
  return id;
}

void WordNetGlosses::AddWords(std::string_view text, std::vector<uint32_t>* out) {
  std::string lower;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) break;
    lower.assign(text.substr(start, i - start));
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.size() < 3 || lower.size() > WordNetCanonicalizer::kMaxWordBytes ||
        WordNetCanonicalizer::IsStopword(lower)) {
      continue;
    }
    out->push_back(WordId(canonicalizer_->Canonicalize(lower)));
  }
}

absl::Status WordNetGlosses::LoadFrom(const std::string& dir) {
  BULWARK_ASSIGN_OR_RETURN(canonicalizer_, WordNetCanonicalizer::Shared(dir));
  std::vector<ParsedSynset> parsed;
  for (int pos = 0; pos < 4; ++pos) BULWARK_RETURN_IF_ERROR(ParseData(dir, pos, &parsed));
  synsets_.resize(parsed.size());
  std::vector<uint32_t> ids;
  for (size_t s = 0; s < parsed.size(); ++s) {
    ids = parsed[s].own;
    for (uint64_t target : parsed[s].pointers) {
      const auto it = synset_at_.find(target);
      if (it == synset_at_.end()) {
        return absl::DataLossError(absl::StrCat("WordNet pointer to a missing synset (",
                                                ToAbsl(kGlossPosNames[target >> 32]), " ",
                                                target & 0xffffffffu, ")"));
      }
      const std::vector<uint32_t>& lemmas = parsed[it->second].lemmas;
      ids.insert(ids.end(), lemmas.begin(), lemmas.end());
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    synsets_[s].begin = static_cast<uint32_t>(related_.size());
    related_.insert(related_.end(), ids.begin(), ids.end());
    synsets_[s].end = static_cast<uint32_t>(related_.size());
  }
  for (int pos = 0; pos < 4; ++pos) BULWARK_RETURN_IF_ERROR(ParseIndex(dir, pos));
  synset_at_ = {};
  related_.shrink_to_fit();
  return absl::OkStatus();
}

// data.<pos>: offset lex_filenum ss_type w_cnt(hex) [word lex_id]{w_cnt} p_cnt
//             [symbol offset pos source/target]{p_cnt} [frames] | gloss
absl::Status WordNetGlosses::ParseData(const std::string& dir, int pos, std::vector<ParsedSynset>* parsed) {
  const std::string name = absl::StrCat("data.", ToAbsl(kGlossPosNames[pos]));
  BULWARK_ASSIGN_OR_RETURN(const std::string data,
                           ReadWordNetFile(std::filesystem::path(dir) / name, kMaxGlossFileBytes));
  std::string_view rest = data;
  for (uint64_t at = 0; !rest.empty();) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    const uint64_t line_at = at;
    at += end + 1;
    if (line.empty() || line[0] == ' ') continue;  // licence header
    auto bad = [&](std::string_view why) {
      return absl::DataLossError(absl::StrCat(name, " at byte ", line_at, ": ", ToAbsl(why)));
    };
    const size_t bar = line.find('|');
    const std::vector<std::string_view> f = WordNetFields(line.substr(0, bar));
    uint32_t offset = 0, words = 0, pointers = 0;
    if (f.size() < 4 || !ParseWordNetInt(f[0], &offset) || offset != line_at || offset >= kMaxOffset) {
      return bad("offset field does not match");
    }
    if (!ParseWordNetInt(f[3], &words, 16) || 4 + 2 * static_cast<size_t>(words) >= f.size()) {
      return bad("bad w_cnt");
    }
    const size_t p_at = 4 + 2 * static_cast<size_t>(words);
    if (!ParseWordNetInt(f[p_at], &pointers) || p_at + 1 + 4 * static_cast<size_t>(pointers) > f.size()) {
      return bad("bad p_cnt");
    }
    if (parsed->size() >= kMaxOffset) return bad("too many synsets");
    synset_at_[SynsetKey(pos, offset)] = static_cast<uint32_t>(parsed->size());
    ParsedSynset& synset = parsed->emplace_back();
    for (size_t w = 0; w < words; ++w) {
      std::string_view lemma = f[4 + 2 * w];
      if (const size_t paren = lemma.find('('); paren != std::string_view::npos)
        lemma = lemma.substr(0, paren);
      AddWords(lemma, &synset.lemmas);
    }
    synset.own = synset.lemmas;
    if (bar != std::string_view::npos) AddWords(Definition(line.substr(bar + 1)), &synset.own);
    for (size_t p = 0; p < pointers; ++p) {
      const std::string_view symbol = f[p_at + 1 + 4 * p];
      uint32_t target = 0;
      const int target_pos = PosOfSymbol(f[p_at + 3 + 4 * p]);
      if (!ParseWordNetInt(f[p_at + 2 + 4 * p], &target) || target >= kMaxOffset || target_pos < 0) {
        return bad("bad pointer");
      }
      if (IsRelatingPointer(symbol)) synset.pointers.push_back(SynsetKey(target_pos, target));
    }
  }
  return absl::OkStatus();
}

// index.<pos>: lemma pos synset_cnt p_cnt [symbol]{p_cnt} sense_cnt tagsense_cnt offset{synset_cnt}
absl::Status WordNetGlosses::ParseIndex(const std::string& dir, int pos) {
  const std::string name = absl::StrCat("index.", ToAbsl(kGlossPosNames[pos]));
  BULWARK_ASSIGN_OR_RETURN(const std::string index,
                           ReadWordNetFile(std::filesystem::path(dir) / name, kMaxGlossFileBytes));
  std::string_view lines = index;
  for (int number = 1; !lines.empty(); ++number) {
    const size_t end = std::min(lines.find('\n'), lines.size());
    const std::string_view line = lines.substr(0, end);
    lines.remove_prefix(std::min(end + 1, lines.size()));
    if (line.empty() || line[0] == ' ') continue;
    const std::optional<WordNetIndexLine> parsed = ParseWordNetIndexLine(line);
    if (!parsed.has_value()) return absl::DataLossError(absl::StrCat(name, ":", number, ": malformed line"));
    const std::string_view lemma = parsed->lemma();
    if (lemma.size() > WordNetCanonicalizer::kMaxWordBytes ||
        !std::all_of(lemma.begin(), lemma.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
      continue;  // collocations and odd spellings: a token never equals them
    }
    std::vector<SenseRef>& senses = lemmas_[lemma];
    for (size_t i = 0; i < parsed->offsets().size() && i < kMaxSenses; ++i) {
      uint32_t offset = 0;
      const auto it = ParseWordNetInt(parsed->offsets()[i], &offset) ? synset_at_.find(SynsetKey(pos, offset))
                                                                     : synset_at_.end();
      if (it == synset_at_.end())
        return absl::DataLossError(absl::StrCat(name, ":", number, ": unknown synset"));
      senses.push_back({it->second, static_cast<int32_t>(i)});
    }
  }
  return absl::OkStatus();
}

}  // namespace bulwark
