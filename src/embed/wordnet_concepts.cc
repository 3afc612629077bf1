// Loads WordNet's noun and verb synsets with their hypernym and part-holonym pointers and expands
// words into concept terms (see wordnet_concepts.h). Every field read from the files is
// bounds-checked: a damaged database yields DataLoss, never a crash.
#include "embed/wordnet_concepts.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "core/status_macros.h"
#include "embed/shared_per_directory.h"
#include "embed/wordnet_files.h"

namespace bulwark {
namespace {

constexpr uint64_t kMaxConceptFileBytes = uint64_t{256} << 20;
constexpr uint32_t kMaxSynsetOffset = uint32_t{1} << 30;
constexpr int kDepthInProgress = -2;  // depth marker while a synset's ancestors are visited

bool IsConceptWord(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

uint32_t Key(uint32_t offset, bool verb) { return (offset << 1) | (verb ? 1u : 0u); }

}  // namespace

absl::StatusOr<std::shared_ptr<const WordNetConcepts>> WordNetConcepts::Shared(const std::string& dir) {
  return SharedPerDirectory<WordNetConcepts>(
      dir, [](const std::string& d) -> absl::StatusOr<std::shared_ptr<const WordNetConcepts>> {
        std::shared_ptr<WordNetConcepts> loaded(new WordNetConcepts());
        BULWARK_RETURN_IF_ERROR(loaded->LoadFrom(d));
        return loaded;
      });
}

absl::Status WordNetConcepts::LoadFrom(const std::string& dir) {
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const WordNetCanonicalizer> morphy,
                           WordNetCanonicalizer::Shared(dir));
  morphy_ = std::move(morphy);
  BULWARK_RETURN_IF_ERROR(LoadPos(dir, WordNetPos::kNoun));
  BULWARK_RETURN_IF_ERROR(LoadPos(dir, WordNetPos::kVerb));
  ComputeDepths();
  return absl::OkStatus();
}

absl::Status WordNetConcepts::LoadPos(const std::string& dir, WordNetPos pos) {
  const bool verb = pos == WordNetPos::kVerb;
  const std::string name = verb ? "verb" : "noun";
  absl::StatusOr<std::string> data =
      ReadWordNetFile(std::filesystem::path(dir) / ("data." + name), kMaxConceptFileBytes);
  BULWARK_RETURN_IF_ERROR(data.status());
  absl::StatusOr<std::string> index =
      ReadWordNetFile(std::filesystem::path(dir) / ("index." + name), kMaxConceptFileBytes);
  BULWARK_RETURN_IF_ERROR(index.status());

  // data.<pos>: offset lex_filenum ss_type w_cnt(hex) [word lex_id]{w_cnt} p_cnt
  //             [symbol offset pos source/target]{p_cnt} ... | gloss
  std::string_view rest = *data;
  for (uint64_t at = 0; !rest.empty();) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    const uint64_t line_at = at;
    at += end + 1;
    if (line.empty() || line[0] == ' ') continue;  // license header
    auto bad = [&](std::string_view why) {
      return absl::DataLossError(absl::StrCat("data.", name, " at byte ", line_at, ": ", std::string(why)));
    };
    const std::vector<std::string_view> f = WordNetFields(line.substr(0, line.find('|')));
    uint32_t offset = 0, words = 0, pointers = 0;
    if (f.size() < 4 || !ParseWordNetInt(f[0], &offset) || offset != line_at || offset >= kMaxSynsetOffset) {
      return bad("offset field does not match");
    }
    if (!ParseWordNetInt(f[3], &words, 16) || 4 + 2 * static_cast<size_t>(words) >= f.size())
      return bad("bad w_cnt");
    const size_t p_at = 4 + 2 * static_cast<size_t>(words);
    if (!ParseWordNetInt(f[p_at], &pointers) || p_at + 1 + 4 * static_cast<size_t>(pointers) > f.size()) {
      return bad("bad p_cnt");
    }
    Synset& synset = synsets_[Key(offset, verb)];
    for (size_t p = 0; p < pointers; ++p) {
      const std::string_view symbol = f[p_at + 1 + 4 * p];
      const std::string_view target_pos = f[p_at + 3 + 4 * p];
      uint32_t target = 0;
      if (!ParseWordNetInt(f[p_at + 2 + 4 * p], &target) || target >= kMaxSynsetOffset)
        return bad("bad pointer offset");
      if (target_pos != "n" && target_pos != "v") continue;
      const uint32_t key = Key(target, target_pos == "v");
      if (symbol == "@" || symbol == "@i") synset.hypernyms.push_back(key);
      if (symbol == "#p") synset.holonyms.push_back(key);
    }
  }

  // index.<pos>: lemma pos synset_cnt p_cnt [symbol]{p_cnt} sense_cnt tagsense_cnt offset{synset_cnt}
  auto& senses = senses_[verb ? 1 : 0];
  std::string_view lines = *index;
  for (int number = 1; !lines.empty(); ++number) {
    const size_t end = std::min(lines.find('\n'), lines.size());
    const std::string_view line = lines.substr(0, end);
    lines.remove_prefix(std::min(end + 1, lines.size()));
    if (line.empty() || line[0] == ' ') continue;
    const std::optional<WordNetIndexLine> parsed = ParseWordNetIndexLine(line);
    if (!parsed.has_value()) {
      return absl::DataLossError(absl::StrCat("index.", name, ":", number, ": malformed line"));
    }
    if (!IsConceptWord(parsed->lemma())) continue;  // collocations: a token never equals them
    std::vector<uint32_t>& keys = senses[parsed->lemma()];
    for (const std::string_view text : parsed->offsets()) {
      uint32_t offset = 0;
      if (!ParseWordNetInt(text, &offset) || !synsets_.contains(Key(offset, verb))) {
        return absl::DataLossError(absl::StrCat("index.", name, ":", number, ": unknown synset"));
      }
      keys.push_back(Key(offset, verb));
    }
  }
  return absl::OkStatus();
}

void WordNetConcepts::ComputeDepths() {
  // Iterative: a synset's depth is 0 without hypernyms, else 1 + the smallest depth of its
  // hypernyms. A cycle (not in WordNet 3.0, possible in a damaged file) counts as a root.
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (auto& [start, unused] : synsets_) {
    if (synsets_.find(start)->second.depth >= 0) continue;
    stack.push_back({start, 0});
    synsets_.find(start)->second.depth = kDepthInProgress;
    while (!stack.empty()) {
      auto& [key, next] = stack.back();
      Synset& s = synsets_.find(key)->second;
      if (next < s.hypernyms.size()) {
        const uint32_t parent = s.hypernyms[next++];
        auto it = synsets_.find(parent);
        if (it != synsets_.end() && it->second.depth == -1) {
          it->second.depth = kDepthInProgress;
          stack.push_back({parent, 0});
        }
        continue;
      }
      int depth = -1;
      for (uint32_t parent : s.hypernyms) {
        auto it = synsets_.find(parent);
        if (it == synsets_.end() || it->second.depth < 0) continue;
        depth = depth < 0 ? it->second.depth + 1 : std::min(depth, it->second.depth + 1);
      }
      s.depth = std::max(depth, 0);
      stack.pop_back();
    }
  }
}

const std::vector<uint32_t>* WordNetConcepts::SensesOf(std::string_view word, WordNetPos pos) const {
  const auto& senses = senses_[pos == WordNetPos::kVerb ? 1 : 0];
  if (auto it = senses.find(word); it != senses.end()) return &it->second;
  for (const std::string& base : morphy_->BaseForms(word, pos)) {
    if (auto it = senses.find(base); it != senses.end()) return &it->second;
  }
  return nullptr;
}

std::string WordNetConcepts::Term(uint32_t key) {
  return absl::StrCat(std::string(1, kPrefix), (key & 1) ? "v" : "n", key >> 1);
}

void WordNetConcepts::DocumentConcepts(std::string_view word, const ConceptOptions& options,
                                       std::vector<std::string>* out) const {
  if (word.size() < 3 || word.size() > WordNetCanonicalizer::kMaxWordBytes || !IsConceptWord(word) ||
      WordNetCanonicalizer::IsStopword(word)) {
    return;
  }
  absl::flat_hash_set<uint32_t> emitted;
  std::vector<uint32_t> level, next_level;
  for (WordNetPos pos : {WordNetPos::kNoun, WordNetPos::kVerb}) {
    if (pos == WordNetPos::kVerb && !options.verbs) continue;
    const std::vector<uint32_t>* senses = SensesOf(word, pos);
    if (senses == nullptr) continue;
    level.assign(
        senses->begin(),
        senses->begin() + std::min<size_t>(senses->size(), std::clamp(options.senses, 0, kMaxSenses)));
    for (int up = 0; up <= std::clamp(options.up, 0, kMaxUp) && !level.empty(); ++up) {
      next_level.clear();
      for (uint32_t key : level) {
        const auto it = synsets_.find(key);
        if (it == synsets_.end()) continue;
        if (it->second.depth >= options.min_depth && emitted.insert(key).second) out->push_back(Term(key));
        next_level.insert(next_level.end(), it->second.hypernyms.begin(), it->second.hypernyms.end());
        if (up == 0 && options.holonyms) {
          for (uint32_t holonym : it->second.holonyms) {
            const auto h = synsets_.find(holonym);
            if (h != synsets_.end() && h->second.depth >= options.min_depth &&
                emitted.insert(holonym).second) {
              out->push_back(Term(holonym));
            }
          }
        }
      }
      level.swap(next_level);
    }
  }
}

void WordNetConcepts::QueryConcepts(std::string_view word, const ConceptOptions& options,
                                    std::vector<std::string>* out) const {
  if (word.size() < 3 || word.size() > WordNetCanonicalizer::kMaxWordBytes || !IsConceptWord(word) ||
      WordNetCanonicalizer::IsStopword(word)) {
    return;
  }
  for (WordNetPos pos : {WordNetPos::kNoun, WordNetPos::kVerb}) {
    if (pos == WordNetPos::kVerb && !options.verbs) continue;
    const std::vector<uint32_t>* senses = SensesOf(word, pos);
    if (senses == nullptr) continue;
    const size_t n = std::min<size_t>(senses->size(), std::clamp(options.senses, 0, kMaxSenses));
    for (size_t i = 0; i < n; ++i) {
      const auto it = synsets_.find((*senses)[i]);
      if (it != synsets_.end() && it->second.depth >= options.min_depth) out->push_back(Term((*senses)[i]));
    }
  }
}

int WordNetConcepts::Depth(std::string_view term) const {
  if (term.size() < 3 || term[0] != kPrefix || (term[1] != 'n' && term[1] != 'v')) return -1;
  uint32_t offset = 0;
  if (!ParseWordNetInt(term.substr(2), &offset) || offset >= kMaxSynsetOffset) return -1;
  const auto it = synsets_.find(Key(offset, term[1] == 'v'));
  return it == synsets_.end() ? -1 : it->second.depth;
}

std::string WordNetConcepts::SynsetTerm(std::string_view lemma, WordNetPos pos, int sense) const {
  if (pos != WordNetPos::kNoun && pos != WordNetPos::kVerb) return "";
  const std::vector<uint32_t>* senses = SensesOf(lemma, pos);
  if (senses == nullptr || sense < 0 || static_cast<size_t>(sense) >= senses->size()) return "";
  return Term((*senses)[sense]);
}

}  // namespace bulwark
