// The honeypot fit driver (see honeypot_fit.h).
#include "honeypot/honeypot_fit.h"

#include <absl/container/flat_hash_set.h>
#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/status_macros.h"
#include "embed/string_view_hash.h"
#include "honeypot/balanced_kmeans.h"
#include "honeypot/pot_math.h"
#include "honeypot/pot_score.h"
#include "honeypot/pot_text_gate.h"

namespace bulwark::honeypot {
namespace {

constexpr size_t kMaxMemories = 1'000'000;
constexpr size_t kMaxQueries = 1'000'000;

absl::Status ValidateInputs(const std::vector<FitMemory>& memories, const std::vector<std::string>& attack,
                            const std::vector<std::string>& benign, int dim, const FitOptions& o) {
  if (memories.empty() || attack.empty() || benign.empty()) {
    return absl::InvalidArgumentError("honeypot fit: needs memories, attack queries and benign queries");
  }
  if (memories.size() > kMaxMemories || attack.size() > kMaxQueries || benign.size() > kMaxQueries) {
    return absl::InvalidArgumentError("honeypot fit: more than 10^6 memories or queries");
  }
  if (!(o.ratio > 0 && o.ratio <= 0.5))
    return absl::InvalidArgumentError("honeypot fit: ratio must be in (0, 0.5]");
  if (o.coverage_probes < 0 || static_cast<size_t>(o.coverage_probes) > kMaxQueries)
    return absl::InvalidArgumentError("honeypot fit: coverage_probes must be in [0, 10^6]");
  absl::flat_hash_set<std::string_view, StringViewHash, StringViewEq> ids;
  for (const FitMemory& m : memories) {
    if (static_cast<int>(m.embedding.size()) != dim ||
        !std::all_of(m.embedding.begin(), m.embedding.end(), [](float x) { return std::isfinite(x); })) {
      return absl::InvalidArgumentError(absl::StrCat("honeypot fit: memory ", m.id, " has a bad embedding"));
    }
    if (!ids.insert(m.id).second)
      return absl::InvalidArgumentError(absl::StrCat("honeypot fit: duplicate id ", m.id));
  }
  return absl::OkStatus();
}

absl::StatusOr<RowMatrixXf> EmbedAll(const Embedder& embedder, const std::vector<std::string>& texts) {
  absl::StatusOr<std::vector<std::vector<float>>> v = embedder.EmbedBatch(texts);
  if (!v.ok()) return v.status();
  return ToMatrix(*v);
}

// The training positives: the attack queries, then `o.coverage_probes` memories drawn uniformly
// without replacement (partial Fisher-Yates with the seeded CSPRNG; FitOptions::coverage_probes).
RowMatrixXf Positives(const RowMatrixXf& attack, const RowMatrixXf& memories, const FitOptions& o) {
  const auto n = static_cast<size_t>(memories.rows());
  const size_t probes = std::min(n, static_cast<size_t>(o.coverage_probes));
  if (probes == 0) return attack;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  SeededCsprng rng(SeedFor(o.seed, SeedDomain::kCoverage));
  for (size_t i = 0; i < probes; ++i) std::swap(order[i], order[i + rng.Uniform(n - i)]);
  RowMatrixXf out(attack.rows() + static_cast<Eigen::Index>(probes), attack.cols());
  out.topRows(attack.rows()) = attack;
  for (size_t i = 0; i < probes; ++i) {
    out.row(attack.rows() + static_cast<Eigen::Index>(i)) = memories.row(static_cast<Eigen::Index>(order[i]));
  }
  return out;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)))];
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Step 4: realise and gate every trained pot; fills result->pots and the rejection list.
absl::Status RealizeAll(const PotTrainingResult& trained, const PotTextGate& gate,
                        const PotRealizer& realizer, const FitOptions& o, int batch, FitResult* result,
                        nlohmann::json* rejected) {
  for (Eigen::Index j = 0; j < trained.pots.rows(); ++j) {
    std::vector<float> u(trained.pots.row(j).data(), trained.pots.row(j).data() + trained.pots.cols());
    absl::StatusOr<RealizedPot> r = realizer.Realize(u, gate, o.safety_content);
    if (!r.ok()) return r.status();
    if (!r->passed) {
      rejected->push_back({{"cluster", j}, {"reason", r->rejection}});
      continue;
    }
    FittedPot pot;
    pot.text = r->text;
    pot.optimized = u;
    pot.vector = o.index_vector == IndexVector::kRealized ? r->embedding : u;
    pot.cluster = static_cast<int>(j);  // pot j starts at k-means centroid j
    pot.batch = batch;
    pot.target_cos = r->target_cos;
    pot.privacy_max = o.index_vector == IndexVector::kRealized ? r->privacy_max : gate.PrivacyMax(u);
    pot.readable = r->readable;
    result->pots.push_back(std::move(pot));
  }
  return absl::OkStatus();
}

// Step 5, the run and training parts of FitResult::metrics.
void RunMetrics(const FitOptions& o, int batch, Eigen::Index memories, Eigen::Index covered, int pots,
                double bound, const PotTrainingResult& trained, const BalancedKMeansResult& clusters,
                nlohmann::json rejected, FitResult* result) {
  nlohmann::json& m = result->metrics;
  m["seed"] = o.seed;
  m["stack"] = o.stack;
  m["batch"] = batch;
  m["ratio"] = o.ratio;
  m["unseen_weight"] = o.unseen_weight;
  m["memories"] = memories;
  m["covered_memories"] = covered;
  m["pots_trained"] = pots;
  m["pots_kept"] = result->pots.size();
  m["rejected"] = std::move(rejected);
  m["privacy_bound"] = bound;
  m["index_vector"] = o.index_vector == IndexVector::kRealized ? "realized" : "optimized";
  m["coverage_probes"] = std::min<Eigen::Index>(o.coverage_probes, memories);
  m["training"] = {{"loss_curve", trained.loss_curve},
                   {"initial_loss", trained.initial_loss.total},
                   {"final_loss", trained.final_loss.total},
                   {"final_nce", trained.final_loss.nce},
                   {"final_diversity", trained.final_loss.diversity},
                   {"initial_auroc", trained.initial_auroc},
                   {"auroc", trained.final_auroc},
                   {"attack_mean_pots", trained.attack_mean_pots},
                   {"benign_mean_pots", trained.benign_mean_pots},
                   {"benign_pot_rate", trained.benign_pot_rate},
                   {"steps", trained.steps},
                   {"kmeans_iterations", clusters.iterations_run}};
}

// Step 5: metrics of the pots as indexed (previous + new), and the calibrated count LLR.
absl::Status IndexedMetrics(const RowMatrixXf& attack, const RowMatrixXf& benign, const RowMatrixXf& memories,
                            const PreviousFit& previous, const FitOptions& o, FitResult* result) {
  std::vector<std::vector<float>> rows = previous.pot_vectors;
  for (const FittedPot& p : result->pots) rows.push_back(p.vector);
  const RowMatrixXf pots = ToMatrix(rows);
  const int k = o.optimizer.top_k;
  const PotObservation a = HardPotScores(attack, TopKScores(attack, memories, k), pots, k);
  const PotObservation b = HardPotScores(benign, TopKScores(benign, memories, k), pots, k);
  absl::StatusOr<CountCalibration> cal =
      CountCalibration::Fit(b.pots_in_top_k, a.pots_in_top_k, k, o.calibration_cap, o.unseen_weight);
  if (!cal.ok()) return cal.status();
  result->calibration = *cal;
  auto mean = [](const std::vector<int>& v) {
    double s = 0;
    for (int x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  const auto benign_hits =
      std::count_if(b.pots_in_top_k.begin(), b.pots_in_top_k.end(), [](int n) { return n > 0; });
  std::vector<double> gaps, privacy;
  for (const FittedPot& p : result->pots) {
    gaps.push_back(1 - p.target_cos);
    privacy.push_back(p.privacy_max);
  }
  nlohmann::json& m = result->metrics["indexed"];
  m["auroc"] = Auroc(a.score, b.score);
  m["attack_mean_pots"] = mean(a.pots_in_top_k);
  m["benign_mean_pots"] = mean(b.pots_in_top_k);
  m["benign_pot_rate"] = static_cast<double>(benign_hits) / static_cast<double>(b.pots_in_top_k.size());
  m["calibrated_count_llr"] = cal->llr;
  m["inversion_gap"] = {
      {"p50", Quantile(gaps, 0.5)}, {"p90", Quantile(gaps, 0.9)}, {"max", Quantile(gaps, 1.0)}};
  m["privacy_max"] = privacy.empty() ? 0.0 : *std::max_element(privacy.begin(), privacy.end());
  m["pots_total"] = rows.size();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FitResult> FitHoneypots(const std::vector<FitMemory>& memories,
                                       const std::vector<std::string>& attack_queries,
                                       const std::vector<std::string>& benign_queries,
                                       const Embedder& embedder, const PotRealizer& realizer,
                                       const FitOptions& o, const PreviousFit& previous) {
  BULWARK_RETURN_IF_ERROR(ValidateInputs(memories, attack_queries, benign_queries, embedder.dimension(), o));
  const auto start = std::chrono::steady_clock::now();
  FitResult result;
  // 1. The memories this run covers.
  absl::flat_hash_set<std::string_view, StringViewHash, StringViewEq> before;
  if (o.stack) before.insert(previous.covered_memory_ids.begin(), previous.covered_memory_ids.end());
  std::vector<std::vector<float>> all_rows, covered_rows;
  std::vector<std::string> texts;
  for (const FitMemory& m : memories) {
    all_rows.push_back(m.embedding);
    texts.push_back(m.text);
    if (before.contains(m.id)) continue;
    covered_rows.push_back(m.embedding);
    result.covered_memory_ids.push_back(m.id);
  }
  if (covered_rows.empty())
    return absl::FailedPreconditionError("honeypot fit: no memory was added since the last fit");
  const RowMatrixXf all = ToMatrix(all_rows), covered = ToMatrix(covered_rows);
  const int pots = static_cast<int>(std::clamp<double>(
      std::round(o.ratio * static_cast<double>(covered.rows())), 1, static_cast<double>(covered.rows())));
  absl::StatusOr<RowMatrixXf> attack = EmbedAll(embedder, attack_queries);
  if (!attack.ok()) return attack.status();
  absl::StatusOr<RowMatrixXf> benign = EmbedAll(embedder, benign_queries);
  if (!benign.ok()) return benign.status();
  result.timings["embed_queries_s"] = Seconds(start);

  // 2-3. Initialise by balanced k-means, then train.
  auto t = std::chrono::steady_clock::now();
  absl::StatusOr<BalancedKMeansResult> clusters =
      BalancedKMeans(covered, {.clusters = pots, .iterations = o.kmeans_iterations, .seed = o.seed});
  if (!clusters.ok()) return clusters.status();
  result.timings["kmeans_s"] = Seconds(t);
  t = std::chrono::steady_clock::now();
  PotOptimizerOptions opt = o.optimizer;
  opt.seed = o.seed;
  absl::StatusOr<PotTrainingResult> trained =
      TrainPots(Positives(*attack, all, o), *benign, all, clusters->centroids, opt);
  if (!trained.ok()) return trained.status();
  result.timings["optimize_s"] = Seconds(t);

  // 4. Realise and gate.
  t = std::chrono::steady_clock::now();
  absl::StatusOr<double> bound = CalibratePrivacyBound(all, o.privacy_quantile, o.privacy_sample, o.seed);
  if (!bound.ok() && all.rows() < 2) bound = 1.0;  // a single memory: no neighbour to calibrate from
  if (!bound.ok()) return bound.status();
  absl::StatusOr<std::unique_ptr<PotTextGate>> gate =
      PotTextGate::Create(texts, all, *bound, {.copy_ngram = o.copy_ngram});
  if (!gate.ok()) return gate.status();
  nlohmann::json rejected = nlohmann::json::array();
  const int batch = o.stack ? previous.last_batch + 1 : 1;
  BULWARK_RETURN_IF_ERROR(RealizeAll(*trained, **gate, realizer, o, batch, &result, &rejected));
  result.timings["realize_s"] = Seconds(t);
  if (result.pots.empty()) return absl::FailedPreconditionError("honeypot fit: no pot text passed the gates");

  // 5. Metrics.
  RunMetrics(o, batch, all.rows(), covered.rows(), pots, *bound, *trained, *clusters, std::move(rejected),
             &result);
  BULWARK_RETURN_IF_ERROR(IndexedMetrics(*attack, *benign, all, previous, o, &result));
  result.timings["total_s"] = Seconds(start);
  return result;
}

}  // namespace bulwark::honeypot
