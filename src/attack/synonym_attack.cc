// Greedy synonym substitution against the write-time detectors (MemSAD Eq. 11).
#include "attack/synonym_attack.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "attack/attack.h"
#include "core/status_macros.h"
#include "detect/detector_registry.h"
#include "detect/write_gate.h"
#include "store/memory_store_impl.h"

namespace bulwark::attack {
namespace {

struct Word {
  size_t begin = 0, size = 0;
  std::string lower;
};

std::vector<Word> Words(std::string_view text) {
  std::vector<Word> out;
  size_t i = 0;
  while (i < text.size()) {
    if (!absl::ascii_isalpha(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && absl::ascii_isalpha(static_cast<unsigned char>(text[j]))) ++j;
    out.push_back({i, j - i, absl::AsciiStrToLower(std::string(text.substr(i, j - i)))});
    i = j;
  }
  return out;
}

std::string MatchCase(std::string_view original, std::string replacement) {
  if (!original.empty() && absl::ascii_isupper(static_cast<unsigned char>(original[0])) &&
      !replacement.empty())
    replacement[0] = absl::ascii_toupper(static_cast<unsigned char>(replacement[0]));
  return replacement;
}

struct Evaluation {
  double objective = 0;
  bool flagged = false;
  bool in_top_k = true;
  double similarity = 0;
  std::map<std::string, double> scores;
};

class Scorer {
 public:
  Scorer(MemoryStore& store, std::string_view name_space, const SynonymAttackOptions& options,
         std::vector<std::vector<float>> queries, std::vector<double> kth)
      : store_(store),
        name_space_(name_space),
        options_(options),
        queries_(std::move(queries)),
        kth_(std::move(kth)) {}

  absl::StatusOr<Evaluation> Evaluate(const std::string& text) const {
    BULWARK_ASSIGN_OR_RETURN(auto embedding, store_.embedder().Embed(text));
    const GateReport report = store_.impl().defenses->gate().Evaluate({name_space_, text, embedding});
    Evaluation ev;
    double worst = -std::numeric_limits<double>::infinity(), sum = 0;
    for (const std::string& name : options_.detectors) {
      const DetectorVerdict* verdict = nullptr;
      for (const DetectorVerdict& v : report.verdicts)
        if (v.detector() == name) verdict = &v;
      if (verdict == nullptr)
        return absl::InvalidArgumentError("synonym attack: detector not enabled: " + name);
      const double sign = verdict->by->descriptor().flags == FlagSide::kBelow ? -1.0 : 1.0;
      const double margin =
          sign * (verdict->score - verdict->threshold) / std::max(std::abs(verdict->threshold), 1e-3);
      worst = std::max(worst, margin);
      sum += margin;
      ev.flagged |= verdict->flagged;
      ev.scores[name] = verdict->score;
    }
    ev.objective = worst + 1e-3 * sum;
    for (size_t i = 0; i < queries_.size(); ++i) {
      const double sim = Cosine(queries_[i], embedding);
      ev.similarity += sim / static_cast<double>(queries_.size());
      if (!(sim > kth_[i])) ev.in_top_k = false;
    }
    return ev;
  }

 private:
  MemoryStore& store_;
  std::string name_space_;
  const SynonymAttackOptions& options_;
  std::vector<std::vector<float>> queries_;
  std::vector<double> kth_;  // per victim query: the k-th best score among stored active entries
};

// Per victim query, the k-th best score among the namespace's active entries (-inf with fewer than
// k), from the stored embeddings (white-box; no search).
absl::StatusOr<std::vector<double>> KthStoredScores(MemoryStore& store, std::string_view name_space,
                                                    const std::vector<std::vector<float>>& queries, int k) {
  std::vector<std::vector<double>> best(queries.size());
  auto visited = store.Export(name_space, 1u << static_cast<int>(State::kActive), [&](const Entry& e) {
    for (size_t i = 0; i < queries.size(); ++i) {
      auto& b = best[i];
      b.push_back(Cosine(queries[i], e.embedding));
      std::sort(b.begin(), b.end(), std::greater<>());
      if (b.size() > static_cast<size_t>(k)) b.pop_back();
    }
    return absl::OkStatus();
  });
  BULWARK_RETURN_IF_ERROR(visited.status());
  std::vector<double> kth;
  for (const auto& b : best)
    kth.push_back(b.size() < static_cast<size_t>(k) ? -std::numeric_limits<double>::infinity() : b.back());
  return kth;
}

}  // namespace

absl::StatusOr<SynonymAttackResult> RunSynonymAttack(MemoryStore& store, std::string_view name_space,
                                                     std::string_view poison_text,
                                                     const std::vector<std::string>& victim_queries,
                                                     const SynonymTable& synonyms,
                                                     const SynonymAttackOptions& options) {
  if (poison_text.empty() || victim_queries.empty())
    return absl::InvalidArgumentError("synonym attack: a poison text and victim queries are required");
  if (options.k < 1 || options.k > 1000 || options.max_substitutions < 0 || options.detectors.empty())
    return absl::InvalidArgumentError(
        "synonym attack: k in 1..1000, max_substitutions >= 0, detectors non-empty");
  BULWARK_ASSIGN_OR_RETURN(auto queries, store.embedder().EmbedBatch(victim_queries));
  BULWARK_ASSIGN_OR_RETURN(std::vector<double> kth, KthStoredScores(store, name_space, queries, options.k));
  Scorer scorer(store, name_space, options, std::move(queries), std::move(kth));

  SynonymAttackResult out;
  out.original = std::string(poison_text);
  out.text = out.original;
  auto current = scorer.Evaluate(out.text);
  BULWARK_RETURN_IF_ERROR(current.status());
  out.objective_before = current->objective;
  out.flagged_before = current->flagged;
  out.in_top_k_before = current->in_top_k;
  out.similarity_before = current->similarity;
  out.scores_before = current->scores;
  std::vector<bool> used;
  for (int step = 0; step < options.max_substitutions; ++step) {
    const std::vector<Word> words = Words(out.text);
    used.resize(words.size(), false);
    std::optional<Evaluation> best_eval;
    std::string best_text;
    std::pair<std::string, std::string> best_sub;
    size_t best_pos = 0;
    for (size_t w = 0; w < words.size(); ++w) {
      if (used[w]) continue;
      for (const std::string& alt : synonyms.GroupOf(words[w].lower)) {
        if (alt == words[w].lower) continue;
        std::string candidate = out.text;
        const std::string replacement =
            MatchCase(std::string_view(out.text).substr(words[w].begin, words[w].size), alt);
        candidate.replace(words[w].begin, words[w].size, replacement);
        BULWARK_ASSIGN_OR_RETURN(auto ev, scorer.Evaluate(candidate));
        // The constraint binds only if the original poison met it.
        if (out.in_top_k_before && !ev.in_top_k) continue;
        if (!best_eval || ev.objective < best_eval->objective) {
          best_eval = ev;
          best_text = std::move(candidate);
          best_sub = {words[w].lower, alt};
          best_pos = w;
        }
      }
    }
    if (!best_eval || !(best_eval->objective < current->objective - 1e-12)) break;
    // Positions after a substitution shift only if the word length changed: recompute words next
    // round and carry `used` by position index (word count is unchanged by a one-word swap unless
    // the synonym has several words, which SynonymTable excludes).
    used[best_pos] = true;
    out.text = std::move(best_text);
    out.substitutions.push_back(std::move(best_sub));
    current = *best_eval;
  }
  out.objective_after = current->objective;
  out.flagged_after = current->flagged;
  out.in_top_k_after = current->in_top_k;
  out.similarity_after = current->similarity;
  out.scores_after = current->scores;
  return out;
}

}  // namespace bulwark::attack
