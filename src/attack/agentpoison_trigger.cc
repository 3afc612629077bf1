// AgentPoison trigger optimization: black-box coordinate search over a vocabulary.
#include "attack/agentpoison_trigger.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "attack/attack.h"
#include "core/status_macros.h"
#include "embed/wordnet_canonicalizer.h"

namespace bulwark::attack {
namespace {

std::vector<float> NormalizedCentroid(const std::vector<std::vector<float>>& rows) {
  if (rows.empty()) return {};
  std::vector<float> c(rows[0].size(), 0.0f);
  for (const auto& r : rows)
    for (size_t i = 0; i < c.size(); ++i) c[i] += r[i];
  double norm = 0;
  for (float x : c) norm += static_cast<double>(x) * x;
  norm = std::sqrt(norm);
  if (norm > 0)
    for (float& x : c) x = static_cast<float>(x / norm);
  return c;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

absl::Status Validate(const AgentPoisonTarget& target, const std::vector<std::string>& vocabulary,
                      const AgentPoisonOptions& o) {
  if (target.victim_queries.empty()) return absl::InvalidArgumentError("agentpoison: no victim queries");
  if (vocabulary.size() < 2) return absl::InvalidArgumentError("agentpoison: vocabulary needs >= 2 words");
  if (o.trigger_tokens < 1 || o.trigger_tokens > 16)
    return absl::InvalidArgumentError("agentpoison: trigger_tokens must be in 1..16");
  if (o.sweeps < 0 || o.candidates_per_position < 1)
    return absl::InvalidArgumentError("agentpoison: sweeps >= 0 and candidates_per_position >= 1");
  if (o.uniqueness_weight < 0 || o.compactness_weight < 0)
    return absl::InvalidArgumentError("agentpoison: weights must be >= 0");
  if (o.poison_count < 1 || o.poison_count > 64)
    return absl::InvalidArgumentError("agentpoison: poison_count must be in 1..64");
  return absl::OkStatus();
}

// Scores triggers against fixed victim queries, passage and benign centroid.
class TriggerObjective {
 public:
  TriggerObjective(const Embedder& embedder, const AgentPoisonTarget& target, std::string passage,
                   std::vector<float> benign_centroid, const AgentPoisonOptions& options)
      : embedder_(embedder),
        target_(target),
        passage_(std::move(passage)),
        benign_centroid_(std::move(benign_centroid)),
        options_(options) {}

  absl::StatusOr<TriggerScore> Score(const std::string& trigger) const {
    BULWARK_ASSIGN_OR_RETURN(
        auto triggered,
        embedder_.EmbedBatch(VictimQueries(target_.victim_queries, VictimProtocol::kTriggered, trigger)));
    BULWARK_ASSIGN_OR_RETURN(auto poison, embedder_.Embed(trigger + " " + passage_));
    const std::vector<float> centroid = NormalizedCentroid(triggered);
    TriggerScore s;
    double benign_sim = 0;
    for (const auto& q : triggered) {
      s.retrieval += Cosine(q, poison);
      s.compactness += Cosine(q, centroid);
      if (!benign_centroid_.empty()) benign_sim += Cosine(q, benign_centroid_);
    }
    const double n = static_cast<double>(triggered.size());
    s.retrieval /= n;
    s.compactness /= n;
    s.uniqueness = benign_centroid_.empty() ? 0.0 : 1.0 - benign_sim / n;
    s.objective =
        s.retrieval + options_.uniqueness_weight * s.uniqueness + options_.compactness_weight * s.compactness;
    return s;
  }

 private:
  const Embedder& embedder_;
  const AgentPoisonTarget& target_;
  std::string passage_;
  std::vector<float> benign_centroid_;
  const AgentPoisonOptions& options_;
};

absl::StatusOr<std::vector<float>> BenignCentroid(const Embedder& embedder, const AgentPoisonTarget& target) {
  if (target.benign_queries.empty()) return std::vector<float>{};
  BULWARK_ASSIGN_OR_RETURN(auto rows, embedder.EmbedBatch(target.benign_queries));
  return NormalizedCentroid(rows);
}

constexpr const char* kPassagePrefixes[] = {
    "", "Note: ", "Remember: ", "Important: ", "Reminder: ", "Saved note: ", "Update: ", "FYI: "};

}  // namespace

absl::StatusOr<std::string> CentroidPassage(const Embedder& embedder,
                                            const std::vector<std::string>& victim_queries,
                                            const std::string& payload) {
  if (victim_queries.empty()) return absl::InvalidArgumentError("agentpoison: no victim queries");
  BULWARK_ASSIGN_OR_RETURN(auto rows, embedder.EmbedBatch(victim_queries));
  const std::vector<float> centroid = NormalizedCentroid(rows);
  size_t best = 0;
  double best_sim = -2;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double sim = Cosine(rows[i], centroid);
    if (sim > best_sim) best_sim = sim, best = i;
  }
  return victim_queries[best] + " " + payload;
}

absl::StatusOr<TriggerScore> ScoreTrigger(const Embedder& embedder, const AgentPoisonTarget& target,
                                          const std::string& passage, const std::string& trigger,
                                          const AgentPoisonOptions& options) {
  BULWARK_ASSIGN_OR_RETURN(auto benign, BenignCentroid(embedder, target));
  TriggerObjective objective(embedder, target, passage, std::move(benign), options);
  return objective.Score(trigger);
}

absl::StatusOr<AgentPoisonAttack> RunAgentPoison(const Embedder& embedder, const AgentPoisonTarget& target,
                                                 const std::vector<std::string>& vocabulary,
                                                 const AgentPoisonOptions& options) {
  BULWARK_RETURN_IF_ERROR(Validate(target, vocabulary, options));
  std::mt19937_64 rng = AttackRng(options.seed, "agentpoison");
  AgentPoisonAttack out;
  if (target.passage.empty()) {
    BULWARK_ASSIGN_OR_RETURN(auto passage, CentroidPassage(embedder, target.victim_queries, target.payload));
    out.passage = passage;
  } else {
    out.passage = target.passage;
  }
  BULWARK_ASSIGN_OR_RETURN(auto benign, BenignCentroid(embedder, target));
  TriggerObjective objective(embedder, target, out.passage, std::move(benign), options);

  std::uniform_int_distribution<size_t> pick(0, vocabulary.size() - 1);
  std::vector<std::string> words;
  for (int i = 0; i < options.trigger_tokens; ++i) words.push_back(vocabulary[pick(rng)]);
  auto best = objective.Score(Join(words));
  BULWARK_RETURN_IF_ERROR(best.status());
  out.initial_score = *best;
  out.trace.push_back(best->objective);
  // Coordinate search: each pass visits every position and keeps the best of the current word
  // and `candidates_per_position` random vocabulary words there.
  for (int sweep = 0; sweep < options.sweeps; ++sweep) {
    for (int pos = 0; pos < options.trigger_tokens; ++pos) {
      for (int c = 0; c < options.candidates_per_position; ++c) {
        std::vector<std::string> trial = words;
        trial[pos] = vocabulary[pick(rng)];
        if (trial[pos] == words[pos]) continue;
        BULWARK_ASSIGN_OR_RETURN(auto score, objective.Score(Join(trial)));
        if (score.objective > best->objective) {
          best = score;
          words = std::move(trial);
        }
      }
    }
    out.trace.push_back(best->objective);
  }
  out.trigger = Join(words);
  out.score = *best;
  for (int i = 0; i < options.poison_count; ++i) {
    NewEntry e;
    e.text = out.trigger + " " + kPassagePrefixes[i % std::size(kPassagePrefixes)] + out.passage;
    e.metadata = {{"attack", "agentpoison"}};
    e.source = Source::kUser;
    out.poison.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> DefaultTriggerVocabulary(size_t size, uint64_t seed) {
  std::vector<std::string> all;
  auto wordnet = WordNetCanonicalizer::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
  if (wordnet.ok()) {
    (*wordnet)->ForEachLemma([&](std::string_view w) {
      if (w.size() >= 4 && w.size() <= 14 && !WordNetCanonicalizer::IsStopword(w)) all.emplace_back(w);
    });
  } else {
    all = {"quorra",  "zephyrine", "cracking", "vellum", "obsidian", "marmot",     "quixotic", "tundra",
           "saffron", "lanthanum", "gossamer", "fjord",  "halcyon",  "zeppelin",   "xylem",    "bivouac",
           "cobalt",  "juniper",   "meridian", "nebula", "orrery",   "palimpsest", "quagmire", "rhombus"};
  }
  std::sort(all.begin(), all.end());
  std::mt19937_64 rng = AttackRng(seed, "agentpoison.vocabulary");
  std::shuffle(all.begin(), all.end(), rng);
  if (all.size() > size) all.resize(size);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace bulwark::attack
