// WordNetGraph (see wordnet_graph.h). data.noun lines (WordNet's wndb(5)):
//   offset lex_filenum ss_type w_cnt(2 hex) {word lex_id(1 hex)}*w_cnt p_cnt(3 dec)
//   {pointer_symbol offset pos source/target(4 hex)}*p_cnt | gloss
// index.noun lines: lemma pos synset_cnt p_cnt {ptr_symbol}*p_cnt sense_cnt tagsense_cnt
//   {synset_offset}*synset_cnt
// Lines that start with a space are the licence header.
#include "attack/extraction/wordnet_graph.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark::extraction {
namespace {

constexpr uintmax_t kMaxFileBytes = 64u << 20;
constexpr int kMaxPointers = 1000;  // data.noun's largest p_cnt is below 700

absl::StatusOr<std::string> ReadWordNetFile(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("wordnet: cannot read ", path));
  if (size > kMaxFileBytes)
    return absl::ResourceExhaustedError(absl::StrCat("wordnet: ", path, " is too large"));
  std::ifstream in(path, std::ios::binary);
  std::string data(size, '\0');
  if (!in.read(data.data(), static_cast<std::streamsize>(size))) {
    return absl::NotFoundError(absl::StrCat("wordnet: cannot read ", path));
  }
  return data;
}

bool ParseNumber(std::string_view field, int base, uint64_t* out) {
  if (field.empty()) return false;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *out, base);
  return ec == std::errc() && end == field.data() + field.size();
}

// Splits `line` at single spaces into fields; stops at the gloss separator " | ".
std::vector<std::string_view> Fields(std::string_view line, std::string_view* gloss) {
  const size_t bar = line.find(" | ");
  if (gloss) *gloss = bar == std::string_view::npos ? std::string_view() : line.substr(bar + 3);
  std::vector<std::string_view> fields;
  for (absl::string_view f : absl::StrSplit(ToAbsl(line.substr(0, bar)), ' ', absl::SkipEmpty())) {
    fields.push_back(ToStd(f));
  }
  return fields;
}

std::string LemmaKey(std::string_view word) {
  std::string key = absl::AsciiStrToLower(ToAbsl(word));
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

}  // namespace

bool IsPlainLemma(std::string_view word) {
  if (word.size() < 3 || word.size() > 20) return false;
  return std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

std::string_view WordNetGraph::LexFileName(int lexfile) {
  static constexpr std::string_view kNames[] = {
      "adj.all",          "adj.pert",           "adv.all",
      "noun.Tops",        "noun.act",           "noun.animal",
      "noun.artifact",    "noun.attribute",     "noun.body",
      "noun.cognition",   "noun.communication", "noun.event",
      "noun.feeling",     "noun.food",          "noun.group",
      "noun.location",    "noun.motive",        "noun.object",
      "noun.person",      "noun.phenomenon",    "noun.plant",
      "noun.possession",  "noun.process",       "noun.quantity",
      "noun.relation",    "noun.shape",         "noun.state",
      "noun.substance",   "noun.time",          "verb.body",
      "verb.change",      "verb.cognition",     "verb.communication",
      "verb.competition", "verb.consumption",   "verb.contact",
      "verb.creation",    "verb.emotion",       "verb.motion",
      "verb.perception",  "verb.possession",    "verb.social",
      "verb.stative",     "verb.weather",       "adj.ppl"};
  if (lexfile < 0 || lexfile >= static_cast<int>(std::size(kNames))) return "";
  return kNames[lexfile];
}

absl::Status WordNetGraph::LoadData(const std::string& path) {
  BULWARK_ASSIGN_OR_RETURN(std::string data, ReadWordNetFile(path));
  // Pass 1: synsets and their lemmas; pointers are kept as offsets until every synset is known.
  absl::flat_hash_map<uint64_t, int32_t> by_offset;
  std::vector<std::vector<std::pair<bool, uint64_t>>> pending;  // (is_hypernym, offset)
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(ToAbsl(data), '\n', absl::SkipEmpty())) {
    ++line_no;
    if (raw.front() == ' ') continue;
    std::string_view gloss;
    std::vector<std::string_view> f = Fields(ToStd(raw), &gloss);
    auto bad = [&] {
      return absl::DataLossError(absl::StrCat("wordnet: ", path, ":", line_no, ": malformed"));
    };
    uint64_t offset = 0, lexfile = 0, words = 0, pointers = 0;
    if (f.size() < 4 || !ParseNumber(f[0], 10, &offset) || !ParseNumber(f[1], 10, &lexfile) ||
        !ParseNumber(f[3], 16, &words) || words == 0) {
      return bad();
    }
    size_t at = 4 + 2 * words;
    if (f.size() <= at || !ParseNumber(f[at], 10, &pointers) || pointers > kMaxPointers ||
        f.size() < at + 1 + 4 * pointers) {
      return bad();
    }
    Synset synset;
    synset.lexfile = static_cast<uint8_t>(std::min<uint64_t>(lexfile, 255));
    for (uint64_t w = 0; w < words; ++w) {
      std::string lemma(f[4 + 2 * w]);
      std::replace(lemma.begin(), lemma.end(), '_', ' ');
      synset.lemmas.push_back(std::move(lemma));
    }
    std::vector<std::pair<bool, uint64_t>> edges;
    for (uint64_t p = 0; p < pointers; ++p) {
      const std::string_view symbol = f[at + 1 + 4 * p];
      uint64_t target = 0;
      if (!ParseNumber(f[at + 2 + 4 * p], 10, &target)) return bad();
      if (f[at + 3 + 4 * p] != "n") continue;
      if (symbol == "@" || symbol == "@i") edges.push_back({true, target});
      if (symbol == "~" || symbol == "~i") edges.push_back({false, target});
    }
    synset.gloss = std::string(gloss);
    while (!synset.gloss.empty() && synset.gloss.back() == ' ') synset.gloss.pop_back();
    by_offset[offset] = static_cast<int32_t>(synsets_.size());
    synsets_.push_back(std::move(synset));
    pending.push_back(std::move(edges));
  }
  // Pass 2: resolve the pointers.
  for (size_t i = 0; i < synsets_.size(); ++i) {
    for (const auto& [up, offset] : pending[i]) {
      auto it = by_offset.find(offset);
      if (it == by_offset.end()) {
        return absl::DataLossError(absl::StrCat("wordnet: ", path, ": pointer to unknown offset ", offset));
      }
      (up ? synsets_[i].hypernyms : synsets_[i].hyponyms).push_back(it->second);
    }
  }
  index_by_offset_ = std::move(by_offset);
  return absl::OkStatus();
}

absl::Status WordNetGraph::LoadIndex(const std::string& path) {
  BULWARK_ASSIGN_OR_RETURN(std::string data, ReadWordNetFile(path));
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(ToAbsl(data), '\n', absl::SkipEmpty())) {
    ++line_no;
    if (raw.front() == ' ') continue;
    std::vector<std::string_view> f = Fields(ToStd(raw), nullptr);
    uint64_t synset_cnt = 0, p_cnt = 0;
    if (f.size() < 4 || !ParseNumber(f[2], 10, &synset_cnt) || !ParseNumber(f[3], 10, &p_cnt) ||
        f.size() != 4 + p_cnt + 2 + synset_cnt) {
      return absl::DataLossError(absl::StrCat("wordnet: ", path, ":", line_no, ": malformed"));
    }
    std::vector<int32_t> senses;
    for (uint64_t s = 0; s < synset_cnt; ++s) {
      uint64_t offset = 0;
      auto it =
          ParseNumber(f[6 + p_cnt + s], 10, &offset) ? index_by_offset_.find(offset) : index_by_offset_.end();
      if (it == index_by_offset_.end()) {
        return absl::DataLossError(absl::StrCat("wordnet: ", path, ":", line_no, ": unknown synset"));
      }
      senses.push_back(it->second);
    }
    senses_[std::string(f[0])] = std::move(senses);
  }
  index_by_offset_.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const WordNetGraph>> WordNetGraph::Shared(const std::string& dir) {
  ABSL_CONST_INIT static absl::Mutex mu(absl::kConstInit);
  static std::map<std::string, std::shared_ptr<const WordNetGraph>> cache;
  absl::MutexLock lock(&mu);
  if (auto it = cache.find(dir); it != cache.end()) return it->second;
  std::shared_ptr<WordNetGraph> graph(new WordNetGraph());
  BULWARK_RETURN_IF_ERROR(graph->LoadData(dir + "/data.noun"));
  BULWARK_RETURN_IF_ERROR(graph->LoadIndex(dir + "/index.noun"));
  cache[dir] = graph;
  return std::shared_ptr<const WordNetGraph>(graph);
}

std::vector<int32_t> WordNetGraph::Senses(std::string_view word) const {
  auto it = senses_.find(LemmaKey(word));
  return it == senses_.end() ? std::vector<int32_t>() : it->second;
}

std::vector<std::string> WordNetGraph::RelatedLemmas(std::string_view word, int hops, size_t limit,
                                                     int max_senses) const {
  const std::string self = absl::AsciiStrToLower(ToAbsl(word));
  std::vector<std::string> out;
  absl::flat_hash_set<std::string> emitted = {self};
  absl::flat_hash_set<int32_t> visited;
  std::deque<std::pair<int32_t, int>> queue;  // (synset, distance)
  std::vector<int32_t> senses = Senses(word);
  if (static_cast<int>(senses.size()) > max_senses) senses.resize(max_senses);
  for (int32_t s : senses) {
    if (visited.insert(s).second) queue.push_back({s, 0});
  }
  while (!queue.empty() && out.size() < limit) {
    const auto [index, distance] = queue.front();
    queue.pop_front();
    const Synset& synset = synsets_[index];
    for (const std::string& lemma : synset.lemmas) {
      std::string lower = absl::AsciiStrToLower(lemma);
      if (out.size() < limit && IsPlainLemma(lower) && emitted.insert(lower).second) out.push_back(lower);
    }
    if (distance == hops) continue;
    for (const auto* edges : {&synset.hypernyms, &synset.hyponyms}) {
      for (int32_t next : *edges) {
        if (visited.insert(next).second) queue.push_back({next, distance + 1});
      }
    }
  }
  return out;
}

}  // namespace bulwark::extraction
