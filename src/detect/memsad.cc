#include "detect/memsad.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/status_macros.h"
#include "core/strings.h"
#include "index/inner_product.h"

namespace bulwark {
std::string_view ToString(MemsadMode mode) {
  switch (mode) {
    case MemsadMode::kMax:
      return "max";
    case MemsadMode::kMean:
      return "mean";
    case MemsadMode::kCombined:
      return "combined";
  }
  return "combined";
}

absl::StatusOr<MemsadMode> ParseMemsadMode(std::string_view name) {
  if (name == "max") return MemsadMode::kMax;
  if (name == "mean") return MemsadMode::kMean;
  if (name == "combined") return MemsadMode::kCombined;
  return absl::InvalidArgumentError(
      absl::StrCat("memsad mode must be max, mean or combined, not '", ToAbsl(name), "'"));
}

double MemsadScores::Get(MemsadMode mode) const {
  switch (mode) {
    case MemsadMode::kMax:
      return s_max;
    case MemsadMode::kMean:
      return s_mean;
    case MemsadMode::kCombined:
      return s_comb;
  }
  return s_comb;
}

namespace {

// From this many history rows on, the max comes from the int8 bounds (measured crossover on the
// gate benchmark: the bounds cost about 2 us to prepare; a float32 row costs about 25 ns).
constexpr size_t kBoundedScanMinRows = 128;

// Folds dot products, in row order, into the max (first row on ties) and the mean.
struct MaxMeanFold {
  double sum = 0;
  float best = -std::numeric_limits<float>::infinity();
  int argmax = -1;

  // dots[i] is the dot product of row first + i.
  void Add(const float* dots, size_t n, size_t first) {
    for (size_t i = 0; i < n; ++i) {
      sum += dots[i];
      if (dots[i] > best) {
        best = dots[i];
        argmax = static_cast<int>(first + i);
      }
    }
  }

  MemsadScores Scores(size_t rows) const {
    MemsadScores scores;
    scores.history_size = rows;
    scores.argmax = argmax;
    scores.s_max = best;
    scores.s_mean = sum / static_cast<double>(rows);
    scores.s_comb = 0.5 * scores.s_max + 0.5 * scores.s_mean;
    return scores;
  }
};

}  // namespace

MemsadScores ScoreAgainstHistory(std::span<const float> candidate, const float* const* rows, size_t count,
                                 size_t dim) {
  MemsadScores scores;
  scores.history_size = count;
  if (count == 0 || candidate.size() != dim) return scores;
  thread_local std::vector<float> dots;
  dots.resize(count);
  BestKernels().dot_rows(candidate.data(), rows, count, dim, dots.data());
  MaxMeanFold fold;
  fold.Add(dots.data(), count, 0);
  return fold.Scores(count);
}

MemsadScores ScoreAgainstHistory(std::span<const float> candidate, const QueryHistory::View& history) {
  MemsadScores scores;
  const size_t m = history.size();
  const size_t dim = history.dim();
  scores.history_size = m;
  if (m == 0 || candidate.size() != dim) return scores;
  if (m < kBoundedScanMinRows) {
    // A short history: one float32 pass over its at most two contiguous runs is cheaper than
    // preparing the bounds. Blocks of row pointers on the stack feed the kernel; max and sum are
    // folded in row order, as the pointer overload does.
    constexpr size_t kBlock = 64;
    const float* rows[kBlock];
    float dots[kBlock];
    MaxMeanFold fold;
    history.ForEachRun([&](const float* run, size_t first, size_t count) {
      for (size_t b = 0; b < count; b += kBlock) {
        const size_t n = std::min(kBlock, count - b);
        for (size_t i = 0; i < n; ++i) rows[i] = run + (b + i) * dim;
        BestKernels().dot_rows(candidate.data(), rows, n, dim, dots);
        fold.Add(dots, n, first + b);
      }
    });
    return fold.Scores(m);
  }
  // Mean: <c, sum_i h_i> / m from the history's running sum (in double), O(dim).
  const std::span<const double> sum = history.row_sum();
  double dot_sum = 0;
  for (size_t j = 0; j < dim; ++j) dot_sum += static_cast<double>(candidate[j]) * sum[j];
  scores.s_mean = dot_sum / static_cast<double>(m);
  // Max: the int8 copy bounds every row's float32 dot product; only rows whose upper bound reaches
  // the best lower bound can be the max, and only those are scored exactly (the same float32
  // kernel as the pointer overload, so s_max and argmax are bit-identical to a full scan; ties go
  // to the oldest row, as there).
  float best = -std::numeric_limits<float>::infinity();
  int argmax = -1;
  auto consider = [&](size_t slot) {
    const float d = BestKernels().dot(candidate.data(), history.slot_row(slot), dim);
    const int i = static_cast<int>(history.index_of_slot(slot));
    if (d > best || (d == best && argmax >= 0 && i < argmax)) {
      best = d;
      argmax = i;
    }
  };
  const Int8Rows& int8 = history.int8();  // one row per slot, kept by QueryHistory::Append
  const Int8Query query = int8.PrepareQuery(candidate);
  if (!query.usable) {
    for (size_t slot = 0; slot < m; ++slot) consider(slot);
  } else {
    thread_local std::vector<float> lower, upper;
    lower.resize(int8.blocks() * Int8Rows::kBlockRows);
    upper.resize(lower.size());
    float floor = -std::numeric_limits<float>::infinity();
    for (size_t b = 0; b < int8.blocks(); ++b) {
      const size_t first = b * Int8Rows::kBlockRows;
      int8.Bounds(query, b, -std::numeric_limits<float>::infinity(), lower.data() + first,
                  upper.data() + first);
      const size_t end = std::min(m, first + Int8Rows::kBlockRows);
      for (size_t slot = first; slot < end; ++slot) {
        if (lower[slot] > floor) floor = lower[slot];  // false for NaN
      }
    }
    for (size_t slot = 0; slot < m; ++slot) {
      if (!(upper[slot] < floor)) consider(slot);  // NaN: not known, score it
    }
  }
  scores.s_max = best;
  scores.argmax = argmax;
  scores.s_comb = 0.5 * scores.s_max + 0.5 * scores.s_mean;
  return scores;
}

double CalibrationTolerance(double sigma, size_t n, double kappa, double delta) {
  const double N = static_cast<double>(n);
  return sigma * (1.0 / std::sqrt(N) + kappa / std::sqrt(2.0 * (N - 1.0))) *
         std::sqrt(2.0 * std::log(4.0 / delta));
}

nlohmann::json MemsadCalibration::ToJson() const {
  return {{"mode", ToString(mode)}, {"mu", mu},       {"sigma", sigma}, {"n", n},
          {"kappa", kappa},         {"delta", delta}, {"eta", eta},     {"threshold", threshold()},
          {"triggered", triggered}};
}

absl::StatusOr<MemsadCalibration> MemsadCalibration::FromJson(const nlohmann::json& json) {
  MemsadCalibration c;
  try {
    BULWARK_ASSIGN_OR_RETURN(auto mode, ParseMemsadMode(json.at("mode").get<std::string>()));
    c.mode = mode;
    c.mu = json.at("mu").get<double>();
    c.sigma = json.at("sigma").get<double>();
    c.n = json.at("n").get<size_t>();
    c.kappa = json.at("kappa").get<double>();
    c.delta = json.at("delta").get<double>();
    c.eta = json.at("eta").get<double>();
    c.triggered = json.at("triggered").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("memsad calibration does not parse: ", e.what()));
  }
  return c;
}

absl::StatusOr<MemsadCalibration> CalibrateMemsad(std::span<const double> reference_scores, MemsadMode mode,
                                                  double kappa, double delta) {
  if (reference_scores.size() < 2) {
    return absl::InvalidArgumentError("memsad calibration needs at least 2 reference entries");
  }
  if (!(kappa > 0)) return absl::InvalidArgumentError("kappa must be positive");
  if (!(delta > 0 && delta < 1)) return absl::InvalidArgumentError("delta must be in (0, 1)");
  MemsadCalibration c;
  c.mode = mode;
  c.kappa = kappa;
  c.delta = delta;
  c.n = reference_scores.size();
  double sum = 0;
  for (double s : reference_scores) sum += s;
  c.mu = sum / static_cast<double>(c.n);
  double squares = 0;
  for (double s : reference_scores) squares += (s - c.mu) * (s - c.mu);
  c.sigma = std::sqrt(squares / static_cast<double>(c.n - 1));
  c.eta = CalibrationTolerance(c.sigma, c.n, kappa, delta);
  return c;
}

double BenignCeiling(std::span<const float> victim_query, std::span<const std::vector<float>> reference) {
  bool any = false;
  double ceiling = 0;
  for (const auto& m : reference) {
    if (m.size() != victim_query.size()) continue;
    const double d = BestKernels().dot(m.data(), victim_query.data(), m.size());
    if (!any || d > ceiling) ceiling = d;
    any = true;
  }
  return any ? ceiling : std::numeric_limits<double>::quiet_NaN();
}

MemsadCertificate CertifyDetection(double s_adv, double s_bar, const MemsadCalibration& cal) {
  MemsadCertificate cert;
  cert.radius = cal.kappa * cal.sigma + cal.eta;
  if (std::isnan(s_bar)) return cert;
  cert.s_bar = s_bar;
  cert.delta_s = s_adv - s_bar;
  cert.holds = cert.delta_s > cert.radius;
  return cert;
}

MemsadCertificate CertifyDetection(double s_adv, std::span<const float> victim_query,
                                   std::span<const std::vector<float>> reference,
                                   const MemsadCalibration& cal) {
  return CertifyDetection(s_adv, BenignCeiling(victim_query, reference), cal);
}

}  // namespace bulwark
