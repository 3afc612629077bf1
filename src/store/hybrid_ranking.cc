// The retrieval setting, its options and weighted reciprocal-rank fusion (see hybrid_ranking.h).
#include "store/hybrid_ranking.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {
namespace {

// Reads a number of `config[key]` into *out if present; InvalidArgument unless it is a finite
// number in [lo, hi].
absl::Status ReadNumber(const nlohmann::json& config, const char* key, double lo, double hi, double* out) {
  const auto it = config.find(key);
  if (it == config.end()) return absl::OkStatus();
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo ||
      it->get<double>() > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("retrieval_config.", key, " must be a number in [", lo, ", ", hi, "]"));
  }
  *out = it->get<double>();
  return absl::OkStatus();
}

absl::Status ReadBool(const nlohmann::json& config, const char* key, bool* out) {
  const auto it = config.find(key);
  if (it == config.end()) return absl::OkStatus();
  if (!it->is_boolean())
    return absl::InvalidArgumentError(absl::StrCat("retrieval_config.", key, " must be a boolean"));
  *out = it->get<bool>();
  return absl::OkStatus();
}

// The keys of StoreOptions::retrieval_config.
constexpr std::string_view kKeys[] = {"default",
                                      "rrf_k",
                                      "depth",
                                      "vector_weight",
                                      "lexical_weight",
                                      "stem",
                                      "stop_words",
                                      "query_question_words",
                                      "bm25_k1",
                                      "bm25_b",
                                      "concepts",
                                      "concept_weight",
                                      "concept_senses",
                                      "concept_up",
                                      "concept_min_depth",
                                      "concept_holonyms",
                                      "query_senses",
                                      "query_verbs",
                                      "glosses",
                                      "gloss_weight",
                                      "gloss_query_related",
                                      "gloss_senses",
                                      "answer_types",
                                      "answer_type_weight",
                                      "prf_docs",
                                      "prf_terms",
                                      "prf_weight",
                                      "thesaurus",
                                      "thesaurus_weight",
                                      "thesaurus_min_links",
                                      "thesaurus_members",
                                      "thesaurus_query_related"};

// The thesaurus keys of `config` into *options (see ParseRetrievalConfig).
absl::Status ReadThesaurusOptions(const nlohmann::json& config, HybridOptions* options) {
  double min_links = options->thesaurus_min_links;
  BULWARK_RETURN_IF_ERROR(ReadBool(config, "thesaurus", &options->thesaurus));
  BULWARK_RETURN_IF_ERROR(ReadNumber(config, "thesaurus_weight", 0, 1e6, &options->thesaurus_weight));
  BULWARK_RETURN_IF_ERROR(ReadNumber(config, "thesaurus_min_links", 1, 16, &min_links));
  BULWARK_RETURN_IF_ERROR(ReadBool(config, "thesaurus_members", &options->thesaurus_members));
  BULWARK_RETURN_IF_ERROR(
      ReadNumber(config, "thesaurus_query_related", 0, 1e6, &options->thesaurus_query_related));
  options->thesaurus_min_links = static_cast<int>(min_links);
  return absl::OkStatus();
}

}  // namespace

std::string_view ToString(Retrieval retrieval) {
  return retrieval == Retrieval::kHybrid ? "hybrid" : "vector";
}

absl::StatusOr<Retrieval> ParseRetrieval(std::string_view name) {
  if (name == "vector") return Retrieval::kVector;
  if (name == "hybrid") return Retrieval::kHybrid;
  return absl::InvalidArgumentError(
      absl::StrCat("retrieval must be \"vector\" or \"hybrid\", not \"", ToAbsl(name), "\""));
}

absl::StatusOr<HybridOptions> ParseRetrievalConfig(const nlohmann::json& config) {
  HybridOptions options;
  if (config.is_null()) return options;
  if (!config.is_object()) return absl::InvalidArgumentError("retrieval_config must be a JSON object");
  for (const auto& [key, value] : config.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      return absl::InvalidArgumentError(absl::StrCat("retrieval_config: unknown key \"", key, "\""));
    }
  }
  if (const auto it = config.find("default"); it != config.end()) {
    if (!it->is_string()) return absl::InvalidArgumentError("retrieval_config.default must be a string");
    auto parsed = ParseRetrieval(it->get<std::string>());
    if (!parsed.ok()) return parsed.status();
    options.default_retrieval = *parsed;
  }
  double depth = options.depth;
  if (auto s = ReadNumber(config, "rrf_k", 0, 1e6, &options.rrf_k); !s.ok()) return s;
  if (auto s = ReadNumber(config, "depth", 1, 1000, &depth); !s.ok()) return s;
  options.depth = static_cast<int>(depth);
  if (auto s = ReadNumber(config, "vector_weight", 0, 1e6, &options.vector_weight); !s.ok()) return s;
  if (auto s = ReadNumber(config, "lexical_weight", 0, 1e6, &options.lexical_weight); !s.ok()) return s;
  if (auto s = ReadNumber(config, "bm25_k1", 0, 100, &options.bm25.k1); !s.ok()) return s;
  if (auto s = ReadNumber(config, "bm25_b", 0, 1, &options.bm25.b); !s.ok()) return s;
  if (auto s = ReadBool(config, "stem", &options.tokenizer.stem); !s.ok()) return s;
  if (auto s = ReadBool(config, "stop_words", &options.tokenizer.stop_words); !s.ok()) return s;
  if (auto s = ReadBool(config, "query_question_words", &options.query_question_words); !s.ok()) return s;
  if (auto s = ReadBool(config, "concepts", &options.concepts); !s.ok()) return s;
  if (auto s = ReadNumber(config, "concept_weight", 0, 1e6, &options.concept_weight); !s.ok()) return s;
  ConceptOptions& doc = options.document_concepts;
  double senses = doc.senses, up = doc.up, min_depth = doc.min_depth, query_senses = options.query_senses;
  if (auto s = ReadNumber(config, "concept_senses", 1, WordNetConcepts::kMaxSenses, &senses); !s.ok())
    return s;
  if (auto s = ReadNumber(config, "concept_up", 0, WordNetConcepts::kMaxUp, &up); !s.ok()) return s;
  if (auto s = ReadNumber(config, "concept_min_depth", 0, 100, &min_depth); !s.ok()) return s;
  if (auto s = ReadNumber(config, "query_senses", 1, WordNetConcepts::kMaxSenses, &query_senses); !s.ok()) {
    return s;
  }
  if (auto s = ReadBool(config, "concept_holonyms", &doc.holonyms); !s.ok()) return s;
  if (auto s = ReadBool(config, "query_verbs", &options.query_verbs); !s.ok()) return s;
  double gloss_senses = options.gloss_senses;
  if (auto s = ReadBool(config, "glosses", &options.glosses); !s.ok()) return s;
  if (auto s = ReadNumber(config, "gloss_weight", 0, 1e6, &options.gloss_weight); !s.ok()) return s;
  if (auto s = ReadNumber(config, "gloss_query_related", 0, 1e6, &options.gloss_query_related); !s.ok())
    return s;
  if (auto s = ReadNumber(config, "gloss_senses", 1, WordNetGlosses::kMaxSenses, &gloss_senses); !s.ok())
    return s;
  options.gloss_senses = static_cast<int>(gloss_senses);
  BULWARK_RETURN_IF_ERROR(ReadBool(config, "answer_types", &options.answer_types));
  BULWARK_RETURN_IF_ERROR(ReadNumber(config, "answer_type_weight", 0, 1e6, &options.answer_type_weight));
  double prf_docs = options.prf_docs, prf_terms = options.prf_terms;
  BULWARK_RETURN_IF_ERROR(ReadNumber(config, "prf_docs", 0, 20, &prf_docs));
  BULWARK_RETURN_IF_ERROR(ReadNumber(config, "prf_terms", 1, 100, &prf_terms));
  BULWARK_RETURN_IF_ERROR(ReadNumber(config, "prf_weight", 0, 1e6, &options.prf_weight));
  BULWARK_RETURN_IF_ERROR(ReadThesaurusOptions(config, &options));
  options.prf_docs = static_cast<int>(prf_docs);
  options.prf_terms = static_cast<int>(prf_terms);
  doc.senses = static_cast<int>(senses);
  doc.up = static_cast<int>(up);
  doc.min_depth = static_cast<int>(min_depth);
  options.query_senses = static_cast<int>(query_senses);
  return options;
}

// Up to this many rows in all, FuseRankings sums without a hash map.
constexpr size_t kSmallFusion = 16;

std::vector<int64_t> FuseRankings(std::span<const int64_t> vector_ranking,
                                  std::span<const int64_t> lexical_ranking, const HybridOptions& options) {
  const auto term = [&](double weight, size_t r) {
    return weight / (options.rrf_k + static_cast<double>(r + 1));
  };
  std::vector<std::pair<double, int64_t>> order;
  order.reserve(vector_ranking.size() + lexical_ranking.size());
  if (vector_ranking.size() + lexical_ranking.size() <= kSmallFusion) {
    // Few rows (the honeypot observation fuses 2 x k_obs): a linear scan finds the repeated ids
    // faster than a hash map is built; the same sums in the same order.
    for (size_t r = 0; r < vector_ranking.size(); ++r)
      order.emplace_back(term(options.vector_weight, r), vector_ranking[r]);
    const size_t vector_rows = order.size();
    for (size_t r = 0; r < lexical_ranking.size(); ++r) {
      const auto both = std::find_if(order.begin(), order.begin() + static_cast<ptrdiff_t>(vector_rows),
                                     [&](const auto& row) { return row.second == lexical_ranking[r]; });
      const double add = term(options.lexical_weight, r);
      if (both != order.begin() + static_cast<ptrdiff_t>(vector_rows)) {
        both->first += add;
      } else {
        order.emplace_back(0.0 + add, lexical_ranking[r]);
      }
    }
  } else {
    absl::flat_hash_map<int64_t, double> fused;
    fused.reserve(vector_ranking.size() + lexical_ranking.size());
    const auto add = [&](std::span<const int64_t> ranking, double weight) {
      for (size_t r = 0; r < ranking.size(); ++r) fused[ranking[r]] += term(weight, r);
    };
    add(vector_ranking, options.vector_weight);
    add(lexical_ranking, options.lexical_weight);
    for (const auto& [id, score] : fused) order.emplace_back(score, id);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<int64_t> ids;
  ids.reserve(order.size());
  for (const auto& [score, id] : order) ids.push_back(id);
  return ids;
}

}  // namespace bulwark
