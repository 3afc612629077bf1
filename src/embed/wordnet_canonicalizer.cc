// Loads the WordNet database files into hash maps and implements the word -> canonical
// representative mapping described in wordnet_canonicalizer.h. Every field read from the files is
// bounds-checked: a damaged or hostile database yields DataLoss, never a crash.
#include "embed/wordnet_canonicalizer.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <system_error>

#include "core/hex.h"
#include "core/status_macros.h"
#include "embed/shared_per_directory.h"

namespace bulwark {
namespace {

constexpr std::array<std::string_view, 4> kPosNames = {"noun", "verb", "adj", "adv"};
constexpr uint64_t kMaxFileBytes = uint64_t{256} << 20;

// Function words that must never be mapped into a synset (WordNet lists many of them as nouns or
// verbs: "a" is vitamin A, "in" an inch, "it" information technology, "who" the World Health
// Organization, "will" volition). Changing this list changes the vectors: bump
// LexicalEmbedder::kAlgorithmVersion.
constexpr std::string_view kStopwords[] = {
    "a",          "about", "above",   "after", "again",   "against", "all",     "am",        "an",
    "and",        "any",   "are",     "as",    "at",      "be",      "because", "been",      "before",
    "being",      "below", "between", "both",  "but",     "by",      "can",     "could",     "d",
    "did",        "do",    "does",    "doing", "don",     "down",    "during",  "each",      "else",
    "ever",       "few",   "for",     "from",  "further", "had",     "has",     "have",      "having",
    "he",         "her",   "here",    "hers",  "herself", "him",     "himself", "his",       "how",
    "i",          "if",    "in",      "into",  "is",      "it",      "its",     "itself",    "just",
    "ll",         "m",     "may",     "me",    "might",   "more",    "most",    "must",      "my",
    "myself",     "no",    "nor",     "not",   "now",     "o",       "of",      "off",       "on",
    "once",       "only",  "or",      "other", "ought",   "our",     "ours",    "ourselves", "out",
    "over",       "own",   "re",      "s",     "same",    "shall",   "she",     "should",    "so",
    "some",       "such",  "t",       "than",  "that",    "the",     "their",   "theirs",    "them",
    "themselves", "then",  "there",   "these", "they",    "this",    "those",   "through",   "to",
    "too",        "under", "until",   "up",    "us",      "ve",      "very",    "was",       "we",
    "were",       "what",  "when",    "where", "which",   "while",   "who",     "whom",      "whose",
    "why",        "will",  "with",    "would", "yet",     "you",     "your",    "yours",     "yourself",
    "yourselves",
};

// Morphy's detachment rules (WordNet morph.c), per part of speech: {suffix, replacement}.
struct Detachment {
  std::string_view suffix;
  std::string_view ending;
};
constexpr Detachment kNounRules[] = {{"s", ""},      {"ses", "s"},   {"xes", "x"},   {"zes", "z"},
                                     {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}};
constexpr Detachment kVerbRules[] = {{"s", ""},   {"ies", "y"}, {"es", "e"},  {"es", ""},
                                     {"ed", "e"}, {"ed", ""},   {"ing", "e"}, {"ing", ""}};
constexpr Detachment kAdjRules[] = {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}};

std::span<const Detachment> RulesFor(WordNetPos pos) {
  switch (pos) {
    case WordNetPos::kNoun:
      return kNounRules;
    case WordNetPos::kVerb:
      return kVerbRules;
    case WordNetPos::kAdj:
      return kAdjRules;
    case WordNetPos::kAdv:
      return {};
  }
  return {};
}

bool IsLowerAlpha(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

bool IsTokenWord(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot stat ", path.string(), ": ", ec.message()));
  if (size > kMaxFileBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path.string(), " is ", size, " bytes; refusing files over ", kMaxFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  std::string data(size, '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) {
    return absl::DataLossError(absl::StrCat("short read from ", path.string()));
  }
  return data;
}

// Reads the space-separated fields of one line on demand (data.* lines run to hundreds of
// fields; the canonicalizer needs the first few).
class FieldReader {
 public:
  explicit FieldReader(std::string_view line) : rest_(line) {}
  // The next non-empty field, or an empty view at the end of the line.
  std::string_view Next() {
    while (!rest_.empty() && rest_.front() == ' ') rest_.remove_prefix(1);
    const size_t end = std::min(rest_.find(' '), rest_.size());
    std::string_view field = rest_.substr(0, end);
    rest_.remove_prefix(end);
    return field;
  }

 private:
  std::string_view rest_;
};

// Reads the lines of a file, without their newlines.
class LineReader {
 public:
  explicit LineReader(std::string_view file) : rest_(file) {}
  bool Next(std::string_view* line) {
    if (rest_.empty()) return false;
    const size_t end = std::min(rest_.find('\n'), rest_.size());
    *line = rest_.substr(0, end);
    rest_.remove_prefix(std::min(end + 1, rest_.size()));
    return true;
  }

 private:
  std::string_view rest_;
};

template <typename Int>
bool ParseInt(std::string_view s, Int* out, int base = 10) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// The line of a data.* file that starts at byte `offset`, without its newline.
std::string_view LineAt(std::string_view file, uint64_t offset) {
  if (offset >= file.size()) return {};
  std::string_view rest = file.substr(offset);
  return rest.substr(0, rest.find('\n'));
}

// The canonical representative of the synset at `offset` of a data.* file (rule 4 in the
// header), or DataLoss if the line there is not that synset's record.
absl::StatusOr<std::string> SynsetRepresentative(std::string_view data_file, uint64_t offset,
                                                 std::string_view file_name) {
  const std::string_view line = LineAt(data_file, offset);
  auto bad = [&](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat(std::string(file_name), ": bad synset record at offset ", offset, ": ", why));
  };
  FieldReader fields(line);
  uint64_t record_offset = 0;
  if (!ParseInt(fields.Next(), &record_offset) || record_offset != offset) {
    return bad("offset field does not match");
  }
  fields.Next();  // lex_filenum
  fields.Next();  // ss_type
  unsigned word_count = 0;
  if (!ParseInt(fields.Next(), &word_count, 16) || word_count == 0) return bad("bad w_cnt");
  std::string first;
  for (unsigned i = 0; i < word_count; ++i) {
    std::string word(fields.Next());
    fields.Next();  // lex_id
    if (const size_t paren = word.find('('); paren != std::string::npos) word.resize(paren);
    absl::AsciiStrToLower(&word);
    if (word.empty()) return bad("empty lemma");
    if (IsTokenWord(word)) return word;
    if (i == 0) first = std::move(word);
  }
  return first;
}

std::vector<std::string> RequiredFiles() {
  std::vector<std::string> files;
  for (std::string_view pos : kPosNames) {
    files.push_back("index." + std::string(pos));
    files.push_back("data." + std::string(pos));
    files.push_back(std::string(pos) + ".exc");
  }
  files.push_back("cntlist.rev");
  return files;
}

}  // namespace

bool WordNetCanonicalizer::IsStopword(std::string_view word) {
  static const auto* set = new absl::flat_hash_set<std::string_view, StringViewHash, StringViewEq>(
      std::begin(kStopwords), std::end(kStopwords));
  return set->contains(word);
}

absl::Status WordNetCanonicalizer::CheckDataPresent(const std::string& dir) {
  for (const std::string& name : RequiredFiles()) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return absl::NotFoundError(absl::StrCat("WordNet file ", path.string(), " not found"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const WordNetCanonicalizer>> WordNetCanonicalizer::Shared(
    const std::string& dir) {
  std::filesystem::path normal = std::filesystem::path(dir).lexically_normal();
  if (!normal.has_filename() && normal.has_relative_path()) normal = normal.parent_path();
  return SharedPerDirectory<WordNetCanonicalizer>(
      normal.string(),
      [](const std::string& key) -> absl::StatusOr<std::shared_ptr<const WordNetCanonicalizer>> {
        BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<WordNetCanonicalizer> loaded, Load(key));
        return std::shared_ptr<const WordNetCanonicalizer>(std::move(loaded));
      });
}

absl::StatusOr<std::unique_ptr<WordNetCanonicalizer>> WordNetCanonicalizer::Load(const std::string& dir) {
  std::unique_ptr<WordNetCanonicalizer> result(new WordNetCanonicalizer());
  BULWARK_RETURN_IF_ERROR(result->LoadFrom(dir));
  return result;
}

absl::Status WordNetCanonicalizer::LoadIndex(int p, const std::string& index_name,
                                             std::string_view index_file, const std::string& data_name,
                                             std::string_view data_file,
                                             absl::flat_hash_map<uint64_t, int32_t>* synset_ids) {
  // index.<pos>: lemma pos synset_cnt p_cnt [ptr_symbol]{p_cnt} sense_cnt tagsense_cnt
  //              synset_offset{synset_cnt}
  int line_number = 0;
  LineReader lines(index_file);
  for (std::string_view line; lines.Next(&line);) {
    ++line_number;
    if (line.empty() || line[0] == ' ') continue;  // license header
    auto bad = [&](absl::string_view why) {
      return absl::DataLossError(absl::StrCat(index_name, ":", line_number, ": ", why));
    };
    FieldReader f(line);
    const std::string_view lemma = f.Next();
    f.Next();  // pos
    unsigned synset_count = 0, pointer_count = 0, sense_count = 0, tagsense_count = 0;
    if (!ParseInt(f.Next(), &synset_count) || synset_count == 0) return bad("bad synset_cnt");
    if (!ParseInt(f.Next(), &pointer_count)) return bad("bad p_cnt");
    for (unsigned i = 0; i < pointer_count; ++i) f.Next();
    if (!ParseInt(f.Next(), &sense_count)) return bad("bad sense_cnt");
    if (!ParseInt(f.Next(), &tagsense_count)) return bad("bad tagsense_cnt");
    uint64_t first_offset = 0;
    if (!ParseInt(f.Next(), &first_offset) || first_offset >= (uint64_t{1} << 40)) {
      return bad("bad synset_offset");
    }
    if (!IsLowerAlpha(lemma)) continue;  // collocations and lemmas a token can never equal

    const uint64_t synset_key = (static_cast<uint64_t>(p) << 40) | first_offset;
    auto [it, inserted] = synset_ids->try_emplace(synset_key, 0);
    if (inserted) {
      BULWARK_ASSIGN_OR_RETURN(std::string rep, SynsetRepresentative(data_file, first_offset, data_name));
      it->second = static_cast<int32_t>(canonical_names_.size());
      canonical_names_.push_back(std::move(rep));
    }
    lemmas_[lemma][p].canonical = it->second;
  }
  return absl::OkStatus();
}

void WordNetCanonicalizer::LoadExceptions(int p, std::string_view exc_file) {
  // <pos>.exc: inflected_form base_form [base_form ...]
  LineReader exc_lines(exc_file);
  for (std::string_view line; exc_lines.Next(&line);) {
    FieldReader f(line);
    const std::string_view form = f.Next();
    if (!IsLowerAlpha(form)) continue;
    std::vector<std::string>& bases = exceptions_[p][form];
    for (std::string_view base = f.Next(); !base.empty(); base = f.Next()) bases.emplace_back(base);
    if (bases.empty()) exceptions_[p].erase(form);
  }
}

absl::Status WordNetCanonicalizer::LoadTagCounts(std::string_view counts_file) {
  // cntlist.rev: sense_key sense_number tag_cnt, sense_key = lemma%ss_type:lex_filenum:...
  // ss_type 1 noun, 2 verb, 3 adjective, 4 adverb, 5 adjective satellite.
  int line_number = 0;
  LineReader count_lines(counts_file);
  for (std::string_view line; count_lines.Next(&line);) {
    ++line_number;
    if (line.empty()) continue;
    FieldReader f(line);
    const std::string_view sense_key = f.Next();
    f.Next();  // sense_number
    int32_t tag_count = 0;
    const size_t percent = sense_key.find('%');
    if (percent == std::string_view::npos || percent + 1 >= sense_key.size() ||
        !ParseInt(f.Next(), &tag_count) || tag_count < 0) {
      return absl::DataLossError(absl::StrCat("cntlist.rev:", line_number, ": malformed line"));
    }
    const char ss_type = sense_key[percent + 1];
    if (ss_type < '1' || ss_type > '5') {
      return absl::DataLossError(absl::StrCat("cntlist.rev:", line_number, ": bad ss_type"));
    }
    const int p = ss_type == '5' ? 2 : ss_type - '1';
    auto it = lemmas_.find(sense_key.substr(0, percent));
    if (it == lemmas_.end() || it->second[p].canonical < 0) continue;
    PosSense& sense = it->second[p];
    sense.tag_count = static_cast<int32_t>(
        std::min<int64_t>(int64_t{sense.tag_count} + tag_count, std::numeric_limits<int32_t>::max()));
  }
  return absl::OkStatus();
}

absl::Status WordNetCanonicalizer::LoadFrom(const std::string& dir) {
  BULWARK_RETURN_IF_ERROR(CheckDataPresent(dir));
  std::string digest_input = "bulwark.wordnet.v1\n";
  absl::flat_hash_map<uint64_t, int32_t> synset_ids;  // (pos << 40 | offset) -> canonical id

  for (int p = 0; p < 4; ++p) {
    const std::string_view pos_name = kPosNames[p];
    const std::filesystem::path base(dir);
    const std::string index_name = "index." + std::string(pos_name);
    const std::string data_name = "data." + std::string(pos_name);
    const std::string exc_name = std::string(pos_name) + ".exc";
    BULWARK_ASSIGN_OR_RETURN(std::string index_file, ReadFile(base / index_name));
    BULWARK_ASSIGN_OR_RETURN(std::string data_file, ReadFile(base / data_name));
    BULWARK_ASSIGN_OR_RETURN(std::string exc_file, ReadFile(base / exc_name));
    for (const auto& [name, content] :
         {std::pair{&index_name, &index_file}, {&data_name, &data_file}, {&exc_name, &exc_file}}) {
      absl::StrAppend(&digest_input, *name, " ", content->size(), " ", Sha256Hex(*content), "\n");
    }
    BULWARK_RETURN_IF_ERROR(LoadIndex(p, index_name, index_file, data_name, data_file, &synset_ids));
    LoadExceptions(p, exc_file);
  }

  BULWARK_ASSIGN_OR_RETURN(std::string counts_file, ReadFile(std::filesystem::path(dir) / "cntlist.rev"));
  absl::StrAppend(&digest_input, "cntlist.rev ", counts_file.size(), " ", Sha256Hex(counts_file), "\n");
  BULWARK_RETURN_IF_ERROR(LoadTagCounts(counts_file));
  data_digest_ = Sha256Hex(digest_input);

  // Precompute the answer for every word the files list verbatim.
  for (const auto& [lemma, senses] : lemmas_) resolved_.emplace(lemma, Resolve(lemma));
  for (const auto& exceptions : exceptions_) {
    for (const auto& [form, bases] : exceptions) resolved_.emplace(form, Resolve(form));
  }
  return absl::OkStatus();
}

template <typename Fn>
void WordNetCanonicalizer::ForEachBaseForm(std::string_view word, WordNetPos pos, Fn&& fn) const {
  const int p = static_cast<int>(pos);
  auto emit_if_lemma = [&](std::string_view form) {
    auto it = lemmas_.find(form);
    if (it != lemmas_.end() && it->second[p].canonical >= 0) fn(form, it->second[p]);
  };
  emit_if_lemma(word);
  if (auto exc = exceptions_[p].find(word); exc != exceptions_[p].end()) {
    for (const std::string& base : exc->second) emit_if_lemma(base);
    return;  // morphy: a listed exception suppresses the detachment rules
  }
  char buffer[kMaxWordBytes + 8];
  for (const Detachment& rule : RulesFor(pos)) {
    if (word.size() <= rule.suffix.size() || !word.ends_with(rule.suffix)) continue;
    const size_t stem = word.size() - rule.suffix.size();
    if (stem + rule.ending.size() > sizeof(buffer)) continue;
    word.copy(buffer, stem);
    rule.ending.copy(buffer + stem, rule.ending.size());
    emit_if_lemma(std::string_view(buffer, stem + rule.ending.size()));
  }
}

int32_t WordNetCanonicalizer::Resolve(std::string_view word) const {
  int32_t best = -1;
  int32_t best_count = -1;
  for (int p = 0; p < 4; ++p) {
    ForEachBaseForm(word, static_cast<WordNetPos>(p), [&](std::string_view, const PosSense& s) {
      if (s.tag_count > best_count) {  // strict: ties keep the earlier POS / form
        best = s.canonical;
        best_count = s.tag_count;
      }
    });
  }
  return best;
}

std::string_view WordNetCanonicalizer::Canonicalize(std::string_view word) const {
  if (word.size() < 2 || word.size() > kMaxWordBytes || !IsLowerAlpha(word) || IsStopword(word)) {
    return word;
  }
  int32_t id;
  if (auto it = resolved_.find(word); it != resolved_.end()) {
    id = it->second;
  } else {
    id = Resolve(word);  // regular inflections ("cars", "purchased"): detachment rules only
  }
  return id < 0 ? word : std::string_view(canonical_names_[id]);
}

std::vector<std::string> WordNetCanonicalizer::BaseForms(std::string_view word, WordNetPos pos) const {
  std::vector<std::string> forms;
  if (word.size() > kMaxWordBytes) return forms;
  ForEachBaseForm(word, pos, [&](std::string_view form, const PosSense&) {
    if (std::find(forms.begin(), forms.end(), form) == forms.end()) forms.emplace_back(form);
  });
  return forms;
}

}  // namespace bulwark
