// The retrieval-quality experiment (see retrieval_eval.h).
#include "eval/experiments/retrieval_eval.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include "core/status_macros.h"
#include "eval/experiments/rank_fusion.h"
#include "eval/report.h"
#include "index/bm25_index.h"
#include "store/memory_store_impl.h"

namespace bulwark::eval {
namespace {

using Json = nlohmann::json;

absl::Status LineError(size_t line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

// One labels line, already parsed as JSON.
absl::StatusOr<LabelledQuery> ParseLabelObject(const Json& j, size_t line, const LabelLimits& limits) {
  if (!j.is_object()) return LineError(line, "not a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "query" && key != "relevant" && key != "group") {
      return LineError(line, absl::StrCat("unknown field \"", key, "\""));
    }
  }
  LabelledQuery q;
  if (!j.contains("query") || !j["query"].is_string() || j["query"].get_ref<const std::string&>().empty()) {
    return LineError(line, "\"query\" must be a non-empty string");
  }
  q.query = j["query"].get<std::string>();
  if (!j.contains("relevant") || !j["relevant"].is_array() || j["relevant"].empty()) {
    return LineError(line, "\"relevant\" must be a non-empty array of memory texts");
  }
  if (j["relevant"].size() > limits.max_relevant) {
    return LineError(line, absl::StrCat("more than ", limits.max_relevant, " relevant texts"));
  }
  for (const Json& r : j["relevant"]) {
    if (!r.is_string() || r.get_ref<const std::string&>().empty()) {
      return LineError(line, "every relevant text must be a non-empty string");
    }
    if (std::find(q.relevant.begin(), q.relevant.end(), r.get_ref<const std::string&>()) !=
        q.relevant.end()) {
      return LineError(line, "a relevant text is listed twice");
    }
    q.relevant.push_back(r.get<std::string>());
  }
  if (j.contains("group")) {
    if (!j["group"].is_string() || j["group"].get_ref<const std::string&>().empty()) {
      return LineError(line, "\"group\" must be a non-empty string");
    }
    q.group = j["group"].get<std::string>();
  }
  return q;
}

absl::Status ValidateConfig(const RetrievalEvalConfig& config) {
  if (config.depth < 1 || config.depth > 1000)
    return absl::InvalidArgumentError("depth must be in 1 .. 1000");
  if (config.ndcg_k < 1 || config.ndcg_k > config.depth) {
    return absl::InvalidArgumentError(absl::StrCat("nDCG k must be in 1 .. depth (", config.depth, ")"));
  }
  if (config.recall_ks.empty()) return absl::InvalidArgumentError("no recall k given");
  for (int k : config.recall_ks) {
    if (k < 1 || k > config.depth) {
      return absl::InvalidArgumentError(
          absl::StrCat("recall k ", k, " is not in 1 .. depth (", config.depth, ")"));
    }
  }
  if ((config.ranking == Ranking::kBm25 || config.ranking == Ranking::kRrf) && config.tokenizer == nullptr) {
    return absl::InvalidArgumentError("the bm25 and rrf rankings need a tokenizer");
  }
  if (config.fusion_depth < config.depth || config.fusion_depth > 1000) {
    return absl::InvalidArgumentError("fusion depth must be in depth .. 1000");
  }
  return absl::OkStatus();
}

// Every relevant text must be one of the memories' texts.
absl::Status CheckLabels(std::span<const NewEntry> memories, std::span<const LabelledQuery> queries) {
  if (memories.empty()) return absl::InvalidArgumentError("no memories");
  if (queries.empty()) return absl::InvalidArgumentError("no labelled queries");
  absl::flat_hash_set<std::string_view> texts;
  for (const NewEntry& m : memories) texts.insert(m.text);
  for (size_t i = 0; i < queries.size(); ++i) {
    for (const std::string& r : queries[i].relevant) {
      if (!texts.contains(r)) {
        return absl::InvalidArgumentError(absl::StrCat("query ", i + 1, " (\"", queries[i].query,
                                                       "\"): relevant text is not among the memories: \"", r,
                                                       "\""));
      }
    }
  }
  return absl::OkStatus();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The written entries: texts by position (memories, then distractors), positions by entry id, and
// the BM25 index over positions when the ranking needs it.
struct BuiltStore {
  std::vector<std::string> texts;
  absl::flat_hash_map<std::string, int64_t> position_by_id;
  std::optional<Bm25Index> bm25;
};

// Writes all entries in one batch, then builds the BM25 index if the ranking needs it.
absl::StatusOr<BuiltStore> Build(MemoryStore& store, std::span<const NewEntry> memories,
                                 std::span<const NewEntry> distractors,
                                 std::span<const LabelledQuery> queries, const RetrievalEvalConfig& config,
                                 RetrievalEvalResult& result) {
  std::vector<NewEntry> all(memories.begin(), memories.end());
  all.insert(all.end(), distractors.begin(), distractors.end());
  auto start = std::chrono::steady_clock::now();
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> written,
                           store.AddBatch(config.name_space, all, config.principal));
  result.build_seconds = SecondsSince(start);
  absl::flat_hash_set<std::string_view> relevant;
  for (const LabelledQuery& q : queries) relevant.insert(q.relevant.begin(), q.relevant.end());
  BuiltStore built;
  for (size_t i = 0; i < written.size() && i < all.size(); ++i) {
    if (written[i].state != State::kActive) {
      ++result.quarantined;
      if (relevant.contains(all[i].text)) ++result.quarantined_relevant;
    }
    built.position_by_id[written[i].id] = static_cast<int64_t>(i);
    built.texts.push_back(all[i].text);
  }
  result.memories = memories.size();
  result.distractors = distractors.size();
  result.embedder = store.embedder().Fingerprint().ToString();
  result.ranking = config.ranking;
  if (config.ranking == Ranking::kBm25 || config.ranking == Ranking::kRrf) {
    start = std::chrono::steady_clock::now();
    built.bm25.emplace();
    for (size_t i = 0; i < built.texts.size(); ++i) {
      if (written[i].state != State::kActive) continue;  // as Search: quarantined entries are never retrieved
      BULWARK_RETURN_IF_ERROR(
          built.bm25->Add(static_cast<int64_t>(i), config.tokenizer->Tokens(built.texts[i])));
    }
    result.bm25_build_seconds = SecondsSince(start);
  }
  return built;
}

// Positions of the top `depth` entries by MemoryStore::Search.
absl::StatusOr<std::vector<int64_t>> VectorRanking(MemoryStore& store, const std::string& query, int depth,
                                                   const BuiltStore& built,
                                                   const RetrievalEvalConfig& config) {
  SearchOptions options;
  options.k = depth;
  options.record_query = false;
  BULWARK_ASSIGN_OR_RETURN(SearchResult found, store.Search(config.name_space, query, options));
  std::vector<int64_t> ranking;
  for (const SearchHit& hit : found.hits) {
    const auto it = built.position_by_id.find(hit.entry.id);
    if (it == built.position_by_id.end()) {
      return absl::InternalError(
          absl::StrCat("search returned entry ", hit.entry.id, " that the eval did not write"));
    }
    ranking.push_back(it->second);
  }
  return ranking;
}

std::vector<int64_t> Bm25Ranking(const std::string& query, int depth, const BuiltStore& built,
                                 const RetrievalEvalConfig& config) {
  std::vector<int64_t> ranking;
  for (const Bm25Hit& hit : built.bm25->Search(config.tokenizer->Tokens(query), depth))
    ranking.push_back(hit.id);
  return ranking;
}

absl::StatusOr<QueryOutcome> RunQuery(MemoryStore& store, const LabelledQuery& label, const BuiltStore& built,
                                      const RetrievalEvalConfig& config) {
  std::vector<int64_t> ranking;
  switch (config.ranking) {
    case Ranking::kVector:
    case Ranking::kHybrid: {
      BULWARK_ASSIGN_OR_RETURN(ranking, VectorRanking(store, label.query, config.depth, built, config));
      break;
    }
    case Ranking::kBm25:
      ranking = Bm25Ranking(label.query, config.depth, built, config);
      break;
    case Ranking::kRrf: {
      std::vector<std::vector<int64_t>> lists(2);
      BULWARK_ASSIGN_OR_RETURN(lists[0],
                               VectorRanking(store, label.query, config.fusion_depth, built, config));
      lists[1] = Bm25Ranking(label.query, config.fusion_depth, built, config);
      ranking = ReciprocalRankFusion(lists, config.rrf_k, config.depth);
      break;
    }
  }
  QueryOutcome outcome{.label = label, .ranks = {.relevant_count = static_cast<int>(label.relevant.size())}};
  for (size_t i = 0; i < ranking.size(); ++i) {
    const std::string& text = built.texts[static_cast<size_t>(ranking[i])];
    outcome.top.push_back(text);
    if (std::find(label.relevant.begin(), label.relevant.end(), text) != label.relevant.end()) {
      outcome.ranks.relevant_ranks.push_back(static_cast<int>(i) + 1);
    }
  }
  return outcome;
}

void Summarize(const RetrievalEvalConfig& config, RetrievalEvalResult& result) {
  std::map<std::string, std::vector<QueryRanks>> by_group;
  std::vector<QueryRanks> all;
  for (const QueryOutcome& q : result.queries) {
    all.push_back(q.ranks);
    by_group[q.label.group].push_back(q.ranks);
  }
  result.overall = SummarizeRetrieval(all, config.recall_ks, config.ndcg_k, config.bootstrap);
  for (const auto& [group, ranks] : by_group) {
    result.groups.push_back(
        {group, SummarizeRetrieval(ranks, config.recall_ks, config.ndcg_k, config.bootstrap)});
  }
}

void AddMetric(Json& j, const std::string& name, const MeanWithCi& m) {
  j[name] = m.mean;
  j[name + "_ci"] = {m.ci.lo, m.ci.hi};
}

Json SummaryJson(const RetrievalSummary& s) {
  Json j = {{"queries", s.queries}};
  for (size_t i = 0; i < s.recall.size(); ++i)
    AddMetric(j, absl::StrCat("recall_at_", s.recall_ks[i]), s.recall[i]);
  AddMetric(j, "mrr", s.mrr);
  AddMetric(j, absl::StrCat("ndcg_at_", s.ndcg_k), s.ndcg);
  return j;
}

std::vector<std::string> SummaryCells(const std::string& name, const RetrievalSummary& s) {
  std::vector<std::string> cells = {name, std::to_string(s.queries)};
  for (const MeanWithCi& m : s.recall) cells.push_back(FormatWithInterval(m.mean, m.ci));
  cells.push_back(FormatWithInterval(s.mrr.mean, s.mrr.ci));
  cells.push_back(FormatWithInterval(s.ndcg.mean, s.ndcg.ci));
  return cells;
}

}  // namespace

std::string_view ToString(Ranking ranking) {
  switch (ranking) {
    case Ranking::kVector:
      return "vector";
    case Ranking::kBm25:
      return "bm25";
    case Ranking::kRrf:
      return "rrf";
    case Ranking::kHybrid:
      return "hybrid";
  }
  return "vector";
}

std::optional<Ranking> ParseRanking(std::string_view name) {
  for (Ranking r : {Ranking::kVector, Ranking::kBm25, Ranking::kRrf, Ranking::kHybrid}) {
    if (name == ToString(r)) return r;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<LabelledQuery>> ParseRetrievalLabels(std::istream& in, const LabelLimits& limits) {
  std::vector<LabelledQuery> queries;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.size() > limits.max_line_bytes) {
      return LineError(number, absl::StrCat("longer than ", limits.max_line_bytes, " bytes"));
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (queries.size() >= limits.max_queries) {
      return absl::InvalidArgumentError(absl::StrCat("more than ", limits.max_queries, " queries"));
    }
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return LineError(number, "not valid JSON");
    BULWARK_ASSIGN_OR_RETURN(LabelledQuery q, ParseLabelObject(j, number, limits));
    queries.push_back(std::move(q));
  }
  if (queries.empty()) return absl::InvalidArgumentError("the labels file has no query");
  return queries;
}

absl::StatusOr<RetrievalEvalResult> RunRetrievalEval(MemoryStore& store, std::span<const NewEntry> memories,
                                                     std::span<const NewEntry> distractors,
                                                     std::span<const LabelledQuery> queries,
                                                     const RetrievalEvalConfig& config,
                                                     const std::function<void(size_t, size_t)>& progress) {
  BULWARK_RETURN_IF_ERROR(ValidateConfig(config));
  BULWARK_RETURN_IF_ERROR(CheckLabels(memories, queries));
  // The store's own ranking for kHybrid; the vector ranking for everything else (kRrf fuses it).
  BULWARK_RETURN_IF_ERROR(store.impl().retrieval->Set(
      config.name_space, config.ranking == Ranking::kHybrid ? Retrieval::kHybrid : Retrieval::kVector));
  RetrievalEvalResult result;
  BULWARK_ASSIGN_OR_RETURN(BuiltStore built, Build(store, memories, distractors, queries, config, result));
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < queries.size(); ++i) {
    BULWARK_ASSIGN_OR_RETURN(QueryOutcome outcome, RunQuery(store, queries[i], built, config));
    result.queries.push_back(std::move(outcome));
    if (progress) progress(i + 1, queries.size());
  }
  result.query_seconds = SecondsSince(start);
  Summarize(config, result);
  return result;
}

Json ToJson(const RetrievalEvalResult& result) {
  Json groups = Json::object();
  for (const GroupSummary& g : result.groups) groups[g.group] = SummaryJson(g.summary);
  Json queries = Json::array();
  for (const QueryOutcome& q : result.queries) {
    std::vector<std::string> top(q.top.begin(), q.top.begin() + std::min<size_t>(3, q.top.size()));
    queries.push_back({{"query", q.label.query},
                       {"group", q.label.group},
                       {"relevant", q.label.relevant},
                       {"ranks", q.ranks.relevant_ranks},
                       {"top", top}});
  }
  return {{"overall", SummaryJson(result.overall)},
          {"groups", groups},
          {"store",
           {{"memories", result.memories},
            {"distractors", result.distractors},
            {"entries", result.memories + result.distractors},
            {"quarantined", result.quarantined},
            {"quarantined_relevant", result.quarantined_relevant},
            {"embedder", result.embedder}}},
          {"ranking", ToString(result.ranking)},
          {"timing",
           {{"build_seconds", result.build_seconds},
            {"bm25_build_seconds", result.bm25_build_seconds},
            {"query_seconds", result.query_seconds}}},
          {"queries", queries}};
}

std::string ToMarkdown(const RetrievalEvalResult& result) {
  std::vector<std::string> headers = {"group", "queries"};
  for (int k : result.overall.recall_ks) headers.push_back(absl::StrCat("recall@", k));
  headers.push_back("MRR");
  headers.push_back(absl::StrCat("nDCG@", result.overall.ndcg_k));
  MarkdownTable table(headers);
  table.AddRow(SummaryCells("overall", result.overall));
  for (const GroupSummary& g : result.groups) table.AddRow(SummaryCells(g.group, g.summary));
  std::ostringstream md;
  md << "Retrieval: " << result.memories + result.distractors << " entries (" << result.memories
     << " memories + " << result.distractors << " distractors, " << result.quarantined
     << " quarantined by the write gate, " << result.quarantined_relevant
     << " of them labelled relevant), embedder " << result.embedder << ", ranking "
     << ToString(result.ranking) << "; build " << FormatNumber(result.build_seconds, 2) << " s, "
     << result.queries.size() << " queries " << FormatNumber(result.query_seconds, 2) << " s\n"
     << "recall@k: any relevant memory in the top k; 95 % percentile bootstrap intervals over queries\n\n"
     << table.Render();
  return md.str();
}

}  // namespace bulwark::eval
