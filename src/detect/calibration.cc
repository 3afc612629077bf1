#include "detect/calibration.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/strings.h"
#include "index/inner_product.h"

namespace bulwark {
namespace {

std::string EncodeVectors(const std::vector<std::vector<float>>& vectors) {
  std::string raw;
  for (const auto& v : vectors) raw.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return absl::Base64Escape(raw);
}

absl::StatusOr<std::vector<std::vector<float>>> DecodeVectors(const std::string& text, size_t count) {
  std::string raw;
  if (!absl::Base64Unescape(text, &raw)) return absl::DataLossError("reference embeddings do not decode");
  if (count == 0) return std::vector<std::vector<float>>();
  if (raw.size() % (count * sizeof(float)) != 0)
    return absl::DataLossError("reference embeddings are truncated");
  const size_t dim = raw.size() / (count * sizeof(float));
  std::vector<std::vector<float>> out(count, std::vector<float>(dim));
  for (size_t i = 0; i < count; ++i)
    std::memcpy(out[i].data(), raw.data() + i * dim * sizeof(float), dim * sizeof(float));
  return out;
}

double FractionAbove(std::span<const double> scores, double threshold) {
  if (scores.empty()) return 0;
  return static_cast<double>(
             std::count_if(scores.begin(), scores.end(), [&](double s) { return s > threshold; })) /
         static_cast<double>(scores.size());
}

}  // namespace

double ThresholdAtFpr(std::span<const double> scores, double fpr) {
  std::vector<double> sorted(scores.begin(), scores.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const size_t allowed = static_cast<size_t>(std::floor(fpr * static_cast<double>(n)));
  // Scores tied with the chosen value are not above it, so at most `allowed` exceed it.
  return sorted[n - 1 - std::min(allowed, n - 1)];
}

std::vector<float> ProbeCentroid(std::span<const std::vector<float>> probes, size_t dim) {
  std::vector<double> sum(dim, 0.0);
  for (const auto& p : probes) {
    if (p.size() != dim) continue;
    for (size_t i = 0; i < dim; ++i) sum[i] += p[i];
  }
  std::vector<float> centroid(dim, 0.0f);
  if (probes.empty()) return centroid;
  for (size_t i = 0; i < dim; ++i)
    centroid[i] = static_cast<float>(sum[i] / static_cast<double>(probes.size()));
  return centroid;
}

double ProactiveScore(std::span<const float> embedding, std::span<const float> probe_centroid) {
  if (probe_centroid.size() != embedding.size()) return 0;
  return BestKernels().dot(probe_centroid.data(), embedding.data(), embedding.size());
}

double ProactiveScore(std::span<const float> embedding, std::span<const std::vector<float>> probes) {
  return ProactiveScore(embedding, ProbeCentroid(probes, embedding.size()));
}

absl::StatusOr<NamespaceCalibration> CalibrateNamespace(const CalibrationInput& input) {
  if (input.history.empty()) {
    return absl::InvalidArgumentError(
        "no query history to calibrate against: supply calibration queries, or let searches accumulate "
        "first");
  }
  const size_t n = input.reference_texts.size();
  if (n < 2) return absl::InvalidArgumentError("calibration needs at least 2 reference entries");
  if (input.reference_embeddings.size() != n)
    return absl::InvalidArgumentError("reference texts and embeddings differ in count");
  if (!(input.target_fpr >= 0 && input.target_fpr < 1))
    return absl::InvalidArgumentError("target FPR must be in [0, 1)");

  const size_t dim = input.history.front().size();
  std::vector<const float*> rows;
  for (const auto& q : input.history) rows.push_back(q.data());
  std::vector<double> memsad_scores;
  for (const auto& e : input.reference_embeddings) {
    memsad_scores.push_back(ScoreAgainstHistory(e, rows.data(), rows.size(), dim).Get(input.mode));
  }
  NamespaceCalibration cal;
  auto memsad = CalibrateMemsad(memsad_scores, input.mode, input.kappa, input.delta);
  if (!memsad.ok()) return memsad.status();
  memsad->triggered = input.triggered;
  cal.memsad = *memsad;
  cal.reference = input.reference_embeddings;
  cal.target_fpr = input.target_fpr;

  // MemSAD+: pooled baseline of the whole reference set; each reference entry's JSD is taken
  // against the baseline without it (leave one out), as a new benign write would see it. The
  // length model is fitted on those JSDs and the threshold set on their residuals.
  auto baseline = std::make_shared<CharNgramProfile>();
  for (const auto& t : input.reference_texts) baseline->Add(t);
  std::vector<double> jsd;
  std::vector<size_t> trigrams;
  for (const auto& t : input.reference_texts) {
    jsd.push_back(baseline->JensenShannonLeavingOut(t));
    trigrams.push_back(CharNgramProfile::TrigramCount(t));
  }
  cal.memsad_plus_length = JsdLengthModel::Fit(trigrams, jsd);
  for (size_t i = 0; i < jsd.size(); ++i) jsd[i] = cal.memsad_plus_length.Residual(jsd[i], trigrams[i]);
  cal.memsad_plus_threshold = ThresholdAtFpr(jsd, input.target_fpr);
  cal.baseline = baseline;

  nlohmann::json fpr = {{"memsad", FractionAbove(memsad_scores, cal.memsad->threshold())},
                        {"memsad_plus", FractionAbove(jsd, *cal.memsad_plus_threshold)}};
  if (!input.probes.empty()) {
    const std::vector<float> centroid =
        ProbeCentroid(input.probes, input.reference_embeddings.front().size());
    std::vector<double> proactive;
    for (const auto& e : input.reference_embeddings) proactive.push_back(ProactiveScore(e, centroid));
    cal.proactive_tau = ThresholdAtFpr(proactive, input.target_fpr);
    fpr["proactive"] = FractionAbove(proactive, *cal.proactive_tau);
  }
  cal.provenance["reference_fpr"] = fpr;
  cal.provenance["history_size"] = input.history.size();
  return cal;
}

nlohmann::json NamespaceCalibration::ToJson(bool with_data) const {
  nlohmann::json j = {
      {"target_fpr", target_fpr}, {"calibrated_at_us", calibrated_at_us}, {"provenance", provenance}};
  j["memsad"] = memsad ? memsad->ToJson() : nlohmann::json(nullptr);
  j["memsad_plus"] = memsad_plus_threshold ? nlohmann::json{{"threshold", *memsad_plus_threshold},
                                                            {"length_model", memsad_plus_length.ToJson()}}
                                           : nlohmann::json(nullptr);
  j["proactive"] = proactive_tau ? nlohmann::json{{"tau", *proactive_tau}} : nlohmann::json(nullptr);
  j["reference_count"] = reference.size();
  if (with_data) {
    j["reference_embeddings"] = EncodeVectors(reference);
    if (baseline) j["baseline"] = {{"texts", baseline->texts()}, {"counts", baseline->Serialize()}};
  }
  return j;
}

absl::StatusOr<NamespaceCalibration> NamespaceCalibration::FromJson(const nlohmann::json& j) {
  NamespaceCalibration cal;
  try {
    cal.target_fpr = j.at("target_fpr").get<double>();
    cal.calibrated_at_us = j.at("calibrated_at_us").get<int64_t>();
    cal.provenance = j.at("provenance");
    if (!j.at("memsad").is_null()) {
      auto m = MemsadCalibration::FromJson(j.at("memsad"));
      if (!m.ok()) return m.status();
      cal.memsad = *m;
    }
    if (const nlohmann::json& plus = j.at("memsad_plus"); !plus.is_null()) {
      cal.memsad_plus_threshold = plus.at("threshold").get<double>();
      // Absent in calibrations stored before the length correction: raw JSD (slope 0).
      if (plus.contains("length_model")) {
        cal.memsad_plus_length.intercept = plus.at("length_model").at("intercept").get<double>();
        cal.memsad_plus_length.slope = plus.at("length_model").at("slope").get<double>();
      }
    }
    if (!j.at("proactive").is_null()) cal.proactive_tau = j.at("proactive").at("tau").get<double>();
    auto reference =
        DecodeVectors(j.at("reference_embeddings").get<std::string>(), j.at("reference_count").get<size_t>());
    if (!reference.ok()) return reference.status();
    cal.reference = *std::move(reference);
    if (j.contains("baseline")) {
      auto profile = CharNgramProfile::Deserialize(j.at("baseline").at("counts").get<std::string>(),
                                                   j.at("baseline").at("texts").get<size_t>());
      if (!profile.ok()) return profile.status();
      cal.baseline = std::make_shared<CharNgramProfile>(*std::move(profile));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("stored calibration does not parse: ", e.what()));
  }
  return cal;
}

}  // namespace bulwark
