#include "detect/calibration.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/status_macros.h"
#include "core/strings.h"
#include "detect/write_detector.h"
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

std::vector<uint8_t> FlagsAbove(std::span<const double> scores, double threshold) {
  std::vector<uint8_t> flags(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) flags[i] = scores[i] > threshold;
  return flags;
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

namespace {

// Every registered detector's fit at the per-detector target `fpr` (hooks only), in registry order.
struct HookFits {
  std::vector<std::pair<const DetectorDescriptor*, CalibrationFit>> fits;
  double composite = 0;  // the share of the reference set any of them (or `fixed`) flags
};

absl::StatusOr<HookFits> FitAll(const CalibrationInput& base, double fpr, const DetectorInstances& instances,
                                const std::vector<uint8_t>& fixed) {
  CalibrationInput input = base;
  input.target_fpr = fpr;
  HookFits out;
  std::vector<uint8_t> any = fixed;
  double unplaced = 0;  // shares of hooks that do not say which entries they flag
  for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) {
    if (!d->calibration) continue;
    const WriteDetector* instance = nullptr;
    for (const auto& [descriptor, detector] : instances) {
      if (descriptor == d) instance = detector;
    }
    BULWARK_ASSIGN_OR_RETURN(CalibrationFit fit, d->calibration->fit(input, instance));
    if (fit.fitted == nullptr) continue;
    // Only the gate's enabled detectors make up its composite (all of them without a gate); the
    // watermark is left out (it flags every unmarked entry: the composite without watermark).
    if (d->needs_writer_marks || (instance == nullptr && !instances.empty())) {
      // calibrated, but not part of the composite
    } else if (fit.reference_flags.size() == any.size()) {
      for (size_t i = 0; i < any.size(); ++i) any[i] |= fit.reference_flags[i];
    } else {
      unplaced += fit.reference_fpr;
    }
    out.fits.emplace_back(d, std::move(fit));
  }
  const double n = static_cast<double>(any.size());
  out.composite = std::min(1.0, static_cast<double>(std::count(any.begin(), any.end(), 1)) / n + unplaced);
  return out;
}

// The reference entries flagged by the enabled detectors that have no calibration hook and need
// no writer's marks (validation): their flags are fixed, so they use up part of the budget.
std::vector<uint8_t> FixedFlags(const CalibrationInput& input, const DetectorInstances& instances,
                                std::vector<std::string>* names) {
  std::vector<uint8_t> flags(input.reference_texts.size(), 0);
  for (const auto& [descriptor, detector] : instances) {
    if (descriptor->calibration || descriptor->needs_writer_marks || detector == nullptr) continue;
    names->push_back(descriptor->name);
    for (size_t i = 0; i < flags.size(); ++i) {
      const WriteCandidate c{
          .name_space = "", .text = input.reference_texts[i], .embedding = input.reference_embeddings[i]};
      flags[i] |= detector->Evaluate(c, NamespaceState{}).flagged;
    }
  }
  return flags;
}

}  // namespace

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

  // Composite calibration (issue #14 point 5): the composite is the OR of the detectors, so its
  // flag rate on the reference set is that of the union of their flags. Every hook is fitted at a
  // common per-detector target f, and f is the largest value in [0, F] (bisection) at which the
  // union, with the fixed detectors' flags, is at most floor(F n) / n.
  std::vector<std::string> fixed_names;
  const std::vector<uint8_t> fixed = FixedFlags(input, instances, &fixed_names);
  const double allowed = std::floor(input.target_fpr * static_cast<double>(n)) / static_cast<double>(n);
  BULWARK_ASSIGN_OR_RETURN(HookFits best, FitAll(input, input.target_fpr, instances, fixed));
  double per_detector = input.target_fpr;
  if (best.composite > allowed) {
    double lo = 0, hi = input.target_fpr;
    BULWARK_ASSIGN_OR_RETURN(best, FitAll(input, 0, instances, fixed));
    per_detector = 0;
    for (int step = 0; step < 12; ++step) {
      const double mid = (lo + hi) / 2;
      BULWARK_ASSIGN_OR_RETURN(HookFits fits, FitAll(input, mid, instances, fixed));
      if (fits.composite <= allowed) {
        lo = mid;
        best = std::move(fits);
        per_detector = mid;
      } else {
        hi = mid;
      }
    }
  }

  NamespaceCalibration cal;
  cal.reference = input.reference_embeddings;
  cal.target_fpr = input.target_fpr;
  nlohmann::json fpr = nlohmann::json::object();
  for (auto& [d, fit] : best.fits) {
    fpr[d->name] = fit.reference_fpr;
    cal.Set(*d, std::move(fit.fitted));
  }
  const size_t flagged = static_cast<size_t>(std::llround(best.composite * static_cast<double>(n)));
  cal.provenance["reference_fpr"] = fpr;
  cal.provenance["composite"] = {{"reference_fpr", best.composite},
                                 {"flagged", flagged},
                                 {"reference_count", n},
                                 {"upper_95", ClopperPearsonUpper(flagged, n)},
                                 {"per_detector_target_fpr", per_detector},
                                 {"fixed_detectors", fixed_names},
                                 {"meets_target", best.composite <= allowed}};
  cal.provenance["history_size"] = input.history.size();
  return cal;
}

double ClopperPearsonUpper(size_t k, size_t n) {
  if (n == 0 || k >= n) return 1.0;
  // The p with P(X <= k; n, p) = 0.025, by bisection on the binomial CDF (log-space terms).
  auto cdf = [&](double p) {
    double sum = 0;
    for (size_t i = 0; i <= k; ++i) {
      sum += std::exp(std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                      std::lgamma(static_cast<double>(n - i) + 1) + static_cast<double>(i) * std::log(p) +
                      static_cast<double>(n - i) * std::log1p(-p));
    }
    return sum;
  };
  double lo = 0, hi = 1;
  for (int step = 0; step < 60; ++step) {
    const double mid = (lo + hi) / 2;
    (cdf(mid) > 0.025 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
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
      BULWARK_ASSIGN_OR_RETURN(auto fitted, d->calibration->load(j));
      cal.Set(*d, std::move(fitted));
    }
    BULWARK_ASSIGN_OR_RETURN(auto reference, DecodeVectors(j.at("reference_embeddings").get<std::string>(),
                                                           j.at("reference_count").get<size_t>()));
    cal.reference = std::move(reference);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("stored calibration does not parse: ", e.what()));
  }
  return cal;
}

}  // namespace bulwark
