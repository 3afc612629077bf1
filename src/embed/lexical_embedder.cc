// The lexical embedder's hot path. One pass tokenizes and canonicalizes; features are hashed
// straight from byte ranges of a per-thread scratch buffer and counted in a per-thread
// open-addressing table, so steady-state embedding does no heap allocation.
#include "embed/lexical_embedder.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
// Inline XXH3 so that hashing the 3-5 byte n-grams compiles to a few instructions.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <absl/strings/str_cat.h>
#include <xxhash.h>

#include "core/hex.h"
#include "core/status_macros.h"
#include "embed/idf_table.h"

namespace bulwark {
namespace {

constexpr int kGroups = 4;
enum Group : uint32_t { kUnigram = 0, kBigram = 1, kChar = 2, kGloss = 3 };

struct Token {
  std::string_view text;  // canonical form; views scratch.lower or the canonicalizer
  float idf = 0;
  uint64_t unigram_hash = 0;
};

// One distinct feature of the text being embedded (16 bytes).
struct Slot {
  uint64_t key = 0;
  float idf = 0;
  uint32_t count_and_group = 0;  // count << 2 | group; 0 = empty slot
  uint32_t count() const { return count_and_group >> 2; }
  uint32_t group() const { return count_and_group & 3; }
};

// Scratch buffers above these sizes are released after the call instead of kept for the thread.
constexpr size_t kRetainedSlots = size_t{1} << 16;
constexpr size_t kRetainedTokens = size_t{1} << 12;
constexpr size_t kRetainedBytes = size_t{1} << 14;

// Per-thread buffers reused across calls.
struct Scratch {
  std::string lower;
  std::string padded;
  std::vector<Token> tokens;
  std::vector<Slot> slots;     // open addressing; only the first `capacity` are in use
  std::vector<uint32_t> used;  // occupied slot indices, in insertion order
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

bool IsWordByte(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80; }

bool IsWordByteAnyCase(unsigned char c) { return IsWordByte(c) || (c >= 'A' && c <= 'Z'); }

// The part of `text` that is embedded: at most kMaxTextBytes bytes, without the token (if any)
// that crosses the limit.
std::string_view EmbeddedPrefix(std::string_view text) {
  if (text.size() <= LexicalEmbedder::kMaxTextBytes) return text;
  size_t end = LexicalEmbedder::kMaxTextBytes;
  if (IsWordByteAnyCase(static_cast<unsigned char>(text[end]))) {
    while (end > 0 && IsWordByteAnyCase(static_cast<unsigned char>(text[end - 1]))) --end;
  }
  return text.substr(0, end);
}

void ReleaseLargeScratch(Scratch& scratch) {
  if (scratch.slots.size() > kRetainedSlots) {
    std::vector<Slot>().swap(scratch.slots);
    std::vector<uint32_t>().swap(scratch.used);
  }
  if (scratch.tokens.capacity() > kRetainedTokens) std::vector<Token>().swap(scratch.tokens);
  if (scratch.lower.capacity() > kRetainedBytes) std::string().swap(scratch.lower);
  if (scratch.padded.capacity() > kRetainedBytes) std::string().swap(scratch.padded);
}

uint64_t Hash(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

// Step 1 (and 2): fills scratch.lower and scratch.tokens; returns the number of char n-grams.
size_t Tokenize(std::string_view text, const WordNetCanonicalizer* canonicalizer, Scratch& scratch) {
  scratch.lower.assign(EmbeddedPrefix(text));
  for (char& c : scratch.lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  scratch.tokens.clear();
  size_t char_ngrams = 0;
  const std::string_view lower = scratch.lower;
  size_t i = 0;
  while (i < lower.size()) {
    while (i < lower.size() && !IsWordByte(static_cast<unsigned char>(lower[i]))) ++i;
    const size_t start = i;
    while (i < lower.size() && IsWordByte(static_cast<unsigned char>(lower[i]))) ++i;
    if (i == start) break;
    const std::string_view surface = lower.substr(start, i - start);
    Token token;
    token.text = canonicalizer ? canonicalizer->Canonicalize(surface) : surface;
    std::optional<float> idf = IdfFind(token.text);
    token.idf = idf ? *idf : IdfLookup(surface);
    token.unigram_hash = Hash(token.text, LexicalEmbedder::kUnigramSeed);
    const size_t padded = token.text.size() + 2;
    for (int n = LexicalEmbedder::kMinCharN; n <= LexicalEmbedder::kMaxCharN; ++n) {
      if (padded >= static_cast<size_t>(n)) char_ngrams += padded - n + 1;
    }
    scratch.tokens.push_back(token);
  }
  return char_ngrams;
}

class FeatureCounter {
 public:
  FeatureCounter(Scratch& scratch, size_t max_features) : scratch_(scratch) {
    const size_t capacity = std::bit_ceil(std::max<size_t>(64, 2 * max_features));
    if (scratch_.slots.size() < capacity) scratch_.slots.assign(capacity, Slot{});
    mask_ = capacity - 1;
    scratch_.used.clear();
  }
  // Leaves the table empty for the next call.
  ~FeatureCounter() {
    for (uint32_t i : scratch_.used) scratch_.slots[i] = Slot{};
  }

  void Add(uint64_t key, uint32_t group, float idf) {
    size_t i = (key >> 1) & mask_;
    while (true) {
      Slot& slot = scratch_.slots[i];
      if (slot.count_and_group == 0) {
        slot = Slot{key, idf, (1u << 2) | group};
        scratch_.used.push_back(static_cast<uint32_t>(i));
        return;
      }
      if (slot.key == key && slot.group() == group) {
        slot.count_and_group += 1u << 2;
        slot.idf = std::max(slot.idf, idf);
        return;
      }
      i = (i + 1) & mask_;
    }
  }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (uint32_t i : scratch_.used) fn(scratch_.slots[i]);
  }

 private:
  Scratch& scratch_;
  size_t mask_ = 0;
};

// Step 6: the gloss features of one canonical token: the token itself (value idf) and each word
// of its gloss neighbourhood (value related * idf of that word).
void AddGlossFeatures(const WordNetGlosses& glosses, const GlossOptions& options, std::string_view word,
                      float idf, FeatureCounter& counter) {
  counter.Add(WordNetGlosses::Key(word), kGloss, idf);
  glosses.ForEachRelated(word, options.senses, [&](uint32_t id) {
    counter.Add(glosses.key(id), kGloss, options.related * glosses.idf(id));
  });
}

// 1 + ln(count), the sublinear term frequency.
float SublinearTf(uint32_t count) {
  static const auto* table = [] {
    auto* t = new std::array<float, 64>();
    for (size_t i = 1; i < t->size(); ++i) {
      (*t)[i] = static_cast<float>(1.0 + std::log(static_cast<double>(i)));
    }
    return t;
  }();
  if (count < table->size()) return (*table)[count];
  return static_cast<float>(1.0 + std::log(static_cast<double>(count)));
}

// Sum of squares in double, in four interleaved partial sums (a fixed order, so the result is
// the same on every machine, but without one long dependency chain).
double SquaredNorm(std::span<const float> v) {
  double partial[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= v.size(); i += 4) {
    for (int k = 0; k < 4; ++k) partial[k] += static_cast<double>(v[i + k]) * v[i + k];
  }
  for (; i < v.size(); ++i) partial[0] += static_cast<double>(v[i]) * v[i];
  return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

void AddScaledNormalized(std::span<const float> group, float weight, std::span<float> out) {
  const double squared = SquaredNorm(group);
  if (squared == 0) return;
  const float scale = static_cast<float>(weight / std::sqrt(squared));
  for (size_t i = 0; i < out.size(); ++i) out[i] += group[i] * scale;
}

// Reads config["glosses"] (step 6) into *options, all but the loaded table. InvalidArgument for
// a non-object, an unknown key or a value out of range.
absl::Status ParseGlossOptions(const nlohmann::json& glosses, GlossOptions* options) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("lexical embedder: \"glosses\" ", why));
  };
  if (!glosses.is_object()) return bad("must be a JSON object");
  for (const auto& [key, value] : glosses.items()) {
    if (key != "weight" && key != "related" && key != "senses") {
      return bad(absl::StrCat("has an unknown key \"", key, "\" (known: weight, related, senses)"));
    }
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      return bad(absl::StrCat(key, " must be a number"));
  }
  options->weight = glosses.value("weight", options->weight);
  options->related = glosses.value("related", options->related);
  const double senses = glosses.value("senses", static_cast<double>(options->senses));
  if (!(options->weight > 0 && options->weight <= 100)) return bad("weight must be in (0, 100]");
  if (!(options->related > 0 && options->related <= 10)) return bad("related must be in (0, 10]");
  if (senses != std::floor(senses) || senses < 1 || senses > WordNetGlosses::kMaxSenses) {
    return bad(absl::StrCat("senses must be an integer in [1, ", WordNetGlosses::kMaxSenses, "]"));
  }
  options->senses = static_cast<int>(senses);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LexicalEmbedder>> LexicalEmbedder::FromConfig(
    const nlohmann::json& config, const std::string& default_wordnet_dir) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("lexical embedder: ", why));
  };
  if (!config.is_object()) return bad("config must be a JSON object");
  for (const auto& [key, value] : config.items()) {
    if (key != "kind" && key != "synonyms" && key != "wordnet_dir" && key != "glosses") {
      return bad(absl::StrCat("unknown field \"", key, "\" (known: kind, synonyms, wordnet_dir, glosses)"));
    }
  }
  std::optional<bool> synonyms;
  if (auto it = config.find("synonyms"); it != config.end()) {
    if (!it->is_boolean()) return bad("\"synonyms\" must be true or false");
    synonyms = it->get<bool>();
  }
  std::string wordnet_dir = default_wordnet_dir;
  const auto dir = config.find("wordnet_dir");
  const bool dir_given = dir != config.end();
  if (dir_given) {
    if (!dir->is_string() || dir->get_ref<const std::string&>().empty()) {
      return bad("\"wordnet_dir\" must be a non-empty string");
    }
    wordnet_dir = dir->get<std::string>();
  }
  GlossOptions gloss_options;
  const auto glosses = config.find("glosses");
  if (glosses != config.end()) {
    if (synonyms == false) return bad("\"glosses\" needs synonyms (WordNet); drop \"synonyms\": false");
    BULWARK_RETURN_IF_ERROR(ParseGlossOptions(*glosses, &gloss_options));
  }
  if (synonyms == false) return std::make_unique<LexicalEmbedder>(nullptr);

  const bool required = synonyms == true || dir_given || glosses != config.end();
  if (absl::Status present = WordNetCanonicalizer::CheckDataPresent(wordnet_dir); !present.ok()) {
    if (!required) return std::make_unique<LexicalEmbedder>(nullptr);
    return absl::FailedPreconditionError(absl::StrCat(
        "lexical embedder: WordNet synonyms requested but the data is missing: ", present.message(),
        ". Install Debian's wordnet-base, set \"wordnet_dir\", or set "
        "\"synonyms\": false"));
  }
  absl::StatusOr<std::shared_ptr<const WordNetCanonicalizer>> canonicalizer =
      WordNetCanonicalizer::Shared(wordnet_dir);
  if (!canonicalizer.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("lexical embedder: cannot load WordNet from ",
                                                      wordnet_dir, ": ", canonicalizer.status().message()));
  }
  if (glosses != config.end()) {
    absl::StatusOr<std::shared_ptr<const WordNetGlosses>> table = WordNetGlosses::Shared(wordnet_dir);
    if (!table.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("lexical embedder: cannot load WordNet glosses from ",
                                                        wordnet_dir, ": ", table.status().message()));
    }
    gloss_options.glosses = *std::move(table);
  }
  return std::make_unique<LexicalEmbedder>(*std::move(canonicalizer), std::move(gloss_options));
}

LexicalEmbedder::LexicalEmbedder(std::shared_ptr<const WordNetCanonicalizer> canonicalizer,
                                 GlossOptions glosses)
    : canonicalizer_(std::move(canonicalizer)), glosses_(std::move(glosses)) {
  if (canonicalizer_ == nullptr) glosses_.glosses = nullptr;
  nlohmann::json config = {
      {"algorithm", kAlgorithmVersion},
      {"dimension", kDimension},
      {"synonyms", canonicalizer_ != nullptr},
  };
  if (canonicalizer_) config["wordnet_digest"] = canonicalizer_->data_digest();
  if (glosses_.glosses) {
    config["glosses"] = {
        {"weight", glosses_.weight}, {"related", glosses_.related}, {"senses", glosses_.senses}};
  }
  fingerprint_.name = "lexical";
  fingerprint_.dimension = kDimension;
  fingerprint_.config_hash = Sha256Hex(config.dump());  // keys sorted, no spaces: canonical
}

absl::StatusOr<std::vector<float>> LexicalEmbedder::Embed(std::string_view text) const {
  std::vector<float> out(kDimension);
  EmbedInto(text, out);
  return out;
}

void LexicalEmbedder::EmbedInto(std::string_view text, std::span<float> out) const {
  assert(out.size() == static_cast<size_t>(kDimension));
  std::fill(out.begin(), out.end(), 0.0f);
  Scratch& scratch = ThreadScratch();
  const size_t char_ngrams = Tokenize(text, canonicalizer_.get(), scratch);
  const std::vector<Token>& tokens = scratch.tokens;
  if (tokens.empty()) {
    ReleaseLargeScratch(scratch);
    return;
  }

  const WordNetGlosses* glosses = glosses_.glosses.get();
  size_t gloss_features = 0;
  if (glosses != nullptr) {
    for (const Token& token : tokens) {
      ++gloss_features;
      glosses->ForEachRelated(token.text, glosses_.senses, [&](uint32_t) { ++gloss_features; });
    }
  }
  FeatureCounter counter(scratch, 2 * tokens.size() + char_ngrams + gloss_features);
  for (size_t t = 0; t < tokens.size(); ++t) {
    const Token& token = tokens[t];
    if (glosses != nullptr) AddGlossFeatures(*glosses, glosses_, token.text, token.idf, counter);
    counter.Add(token.unigram_hash, kUnigram, token.idf);
    if (t + 1 < tokens.size()) {
      const Token& next = tokens[t + 1];
      counter.Add(Hash(next.text, kBigramSeed ^ token.unigram_hash), kBigram, 0.5f * (token.idf + next.idf));
    }
    scratch.padded.clear();
    scratch.padded.push_back('<');
    scratch.padded.append(token.text);
    scratch.padded.push_back('>');
    const std::string_view padded = scratch.padded;
    for (int n = kMinCharN; n <= kMaxCharN; ++n) {
      for (size_t i = 0; i + n <= padded.size(); ++i) {
        counter.Add(Hash(padded.substr(i, n), kCharSeed), kChar, token.idf);
      }
    }
  }

  std::array<std::array<float, kDimension>, kGroups> groups{};
  counter.ForEach([&](const Slot& slot) {
    const size_t coordinate = static_cast<size_t>(((slot.key >> 32) * kDimension) >> 32);
    const float value = SublinearTf(slot.count()) * slot.idf;
    groups[slot.group()][coordinate] += (slot.key & 1) ? -value : value;
  });
  ReleaseLargeScratch(scratch);

  const std::array<float, kGroups> weights = {kUnigramWeight, kBigramWeight, kCharNgramWeight,
                                              glosses != nullptr ? glosses_.weight : 0.0f};
  for (int g = 0; g < kGroups; ++g) {
    if (weights[g] > 0) AddScaledNormalized(groups[g], weights[g], out);
  }
  const double squared = SquaredNorm(out);
  if (squared == 0) return;  // every group cancelled out exactly; leave the zero vector
  const float scale = static_cast<float>(1.0 / std::sqrt(squared));
  for (float& x : out) x *= scale;
}

std::vector<std::string> LexicalEmbedder::Tokens(std::string_view text) const {
  Scratch& scratch = ThreadScratch();
  Tokenize(text, canonicalizer_.get(), scratch);
  std::vector<std::string> out;
  out.reserve(scratch.tokens.size());
  for (const Token& token : scratch.tokens) out.emplace_back(token.text);
  ReleaseLargeScratch(scratch);
  return out;
}

}  // namespace bulwark
