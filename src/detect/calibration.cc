#include "detect/calibration.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/status_macros.h"
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

}  // namespace

double FractionAbove(std::span<const double> scores, double threshold) {
  if (scores.empty()) return 0;
  return static_cast<double>(
             std::count_if(scores.begin(), scores.end(), [&](double s) { return s > threshold; })) /
         static_cast<double>(scores.size());
}

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

absl::StatusOr<NamespaceCalibration> CalibrateNamespace(const CalibrationInput& input,
                                                        const DetectorInstances& instances) {
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

  NamespaceCalibration cal;
  cal.reference = input.reference_embeddings;
  cal.target_fpr = input.target_fpr;
  nlohmann::json fpr = nlohmann::json::object();
  for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) {
    if (!d->calibration) continue;
    const WriteDetector* instance = nullptr;
    for (const auto& [descriptor, detector] : instances) {
      if (descriptor == d) instance = detector;
    }
    BULWARK_ASSIGN_OR_RETURN(CalibrationFit fit, d->calibration->fit(input, instance));
    if (fit.fitted == nullptr) continue;
    cal.Set(*d, std::move(fit.fitted));
    fpr[d->name] = fit.reference_fpr;
  }
  cal.provenance["reference_fpr"] = fpr;
  cal.provenance["history_size"] = input.history.size();
  return cal;
}

const DetectorCalibration* NamespaceCalibration::Find(const DetectorDescriptor& detector) const {
  for (const auto& [descriptor, value] : fitted) {
    if (descriptor == &detector) return value.get();
  }
  return nullptr;
}

void NamespaceCalibration::Set(const DetectorDescriptor& detector,
                               std::shared_ptr<const DetectorCalibration> value) {
  for (auto& [descriptor, slot] : fitted) {
    if (descriptor == &detector) {
      slot = std::move(value);
      return;
    }
  }
  fitted.emplace_back(&detector, std::move(value));
}

nlohmann::json NamespaceCalibration::ToJson(bool with_data) const {
  nlohmann::json j = {
      {"target_fpr", target_fpr}, {"calibrated_at_us", calibrated_at_us}, {"provenance", provenance}};
  for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) {
    if (d->calibration) j[d->name] = nullptr;
  }
  for (const auto& [descriptor, value] : fitted) {
    if (value != nullptr && descriptor->calibration) descriptor->calibration->store(*value, with_data, &j);
  }
  j["reference_count"] = reference.size();
  if (with_data) j["reference_embeddings"] = EncodeVectors(reference);
  return j;
}

absl::StatusOr<NamespaceCalibration> NamespaceCalibration::FromJson(const nlohmann::json& j) {
  NamespaceCalibration cal;
  try {
    cal.target_fpr = j.at("target_fpr").get<double>();
    cal.calibrated_at_us = j.at("calibrated_at_us").get<int64_t>();
    cal.provenance = j.at("provenance");
    // A detector registered after the record was written finds no key: it is uncalibrated.
    for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) {
      if (!d->calibration || !j.contains(d->name) || j.at(d->name).is_null()) continue;
      auto fitted = d->calibration->load(j);
      if (!fitted.ok()) return fitted.status();
      cal.Set(*d, *std::move(fitted));
    }
    auto reference =
        DecodeVectors(j.at("reference_embeddings").get<std::string>(), j.at("reference_count").get<size_t>());
    if (!reference.ok()) return reference.status();
    cal.reference = *std::move(reference);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("stored calibration does not parse: ", e.what()));
  }
  return cal;
}

}  // namespace bulwark
