#include "detect/watermark.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "detect/char_watermark.h"
#include "provenance/signer.h"

namespace bulwark {
namespace {

// Phi^-1(q) for q in (0, 1): Acklam's rational approximation refined by one Halley step
// (absolute error below 1e-12 after the refinement).
double NormalQuantile(double q) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  double x;
  if (q < 0.02425) {
    const double r = std::sqrt(-2 * std::log(q));
    x = (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) /
        ((((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1);
  } else if (q <= 1 - 0.02425) {
    const double r = q - 0.5, s = r * r;
    x = (((((a[0] * s + a[1]) * s + a[2]) * s + a[3]) * s + a[4]) * s + a[5]) * r /
        (((((b[0] * s + b[1]) * s + b[2]) * s + b[3]) * s + b[4]) * s + 1);
  } else {
    const double r = std::sqrt(-2 * std::log(1 - q));
    x = -(((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) /
        ((((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - q;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

constexpr double kMaxZ = 8.0;

}  // namespace

WatermarkScore ScoreGreenSites(std::span<const double> p, size_t green) {
  WatermarkScore score;
  score.n = p.size();
  score.green = green;
  for (double x : p) score.expected += x;
  if (green == 0) return score;  // p_value 1, z 0
  // dist[j] = P(j of the groups so far are green), truncated at `green` (the tail's mass).
  thread_local std::vector<double> dist;
  dist.assign(green + 1, 0.0);
  dist[0] = 1;
  for (double x : p) {
    // The last entry accumulates P(>= green).
    dist[green] = dist[green] + dist[green - 1] * x;
    for (size_t j = green - 1; j > 0; --j) dist[j] = dist[j] * (1 - x) + dist[j - 1] * x;
    dist[0] *= 1 - x;
  }
  score.p_value = std::clamp(dist[green], 0.0, 1.0);
  if (score.p_value < 0.5) {
    score.z = score.p_value <= 0 ? kMaxZ : std::min(kMaxZ, NormalQuantile(1 - score.p_value));
    if (score.p_value < 1e-15) score.z = kMaxZ;
  }
  return score;
}

std::string_view ToString(WatermarkKind kind) {
  switch (kind) {
    case WatermarkKind::kLexical:
      return "lexical";
    case WatermarkKind::kCharacter:
      return "character";
  }
  return "lexical";
}

absl::StatusOr<WatermarkKind> ParseWatermarkKind(std::string_view name) {
  if (name == "lexical") return WatermarkKind::kLexical;
  if (name == "character") return WatermarkKind::kCharacter;
  return absl::InvalidArgumentError(
      absl::StrCat("watermark scheme must be lexical or character, not '", ToAbsl(name), "'"));
}

absl::StatusOr<std::unique_ptr<WatermarkScheme>> CreateWatermarkScheme(WatermarkKind kind,
                                                                       std::span<const uint8_t> key,
                                                                       double gamma) {
  if (kind == WatermarkKind::kCharacter) {
    BULWARK_ASSIGN_OR_RETURN(auto scheme, CharWatermarkScheme::Create(key, gamma));
    return std::make_unique<CharWatermarkScheme>(std::move(scheme));
  }
  BULWARK_ASSIGN_OR_RETURN(auto scheme, LexicalWatermarkScheme::Create(key, gamma));
  return std::make_unique<LexicalWatermarkScheme>(std::move(scheme));
}

bool WatermarkScheme::Verifies(const WatermarkScore& score, double z_threshold) {
  return score.green > 0 && score.p_value <= 0.5 * std::erfc(z_threshold / std::sqrt(2.0));
}

absl::StatusOr<LexicalWatermarkScheme> LexicalWatermarkScheme::Create(std::span<const uint8_t> key,
                                                                      double gamma) {
  if (!(gamma > 0 && gamma < 1)) return absl::InvalidArgumentError("watermark gamma must be in (0, 1)");
  BULWARK_ASSIGN_OR_RETURN(auto derived, HmacSha256(key, "bulwark.watermark.lexical.v1"));
  LexicalWatermarkScheme scheme;
  std::memcpy(scheme.key_.data(), derived.data(), scheme.key_.size());
  scheme.gamma_ = gamma;
  scheme.lexicon_ = &WatermarkLexicon::Default();
  return scheme;
}

int LexicalWatermarkScheme::GreenCount(int size) const {
  return std::max(1, static_cast<int>(std::floor(gamma_ * size)));
}

uint32_t LexicalWatermarkScheme::GreenMask(const VariantGroup& group, uint32_t occurrence) const {
  const int k = group.size;
  uint64_t hashes[32];
  // group key (8 bytes, little-endian) | occurrence (4 bytes) | variant (1 byte)
  char message[13];
  for (int b = 0; b < 8; ++b) message[b] = static_cast<char>(group.key >> (8 * b));
  for (int b = 0; b < 4; ++b) message[8 + b] = static_cast<char>(occurrence >> (8 * b));
  for (int v = 0; v < k; ++v) {
    message[12] = static_cast<char>(v);
    hashes[v] = SipHash24(key_, std::string_view(message, sizeof message));
  }
  // Green: the GreenCount(k) variants with the smallest hashes (ties, never seen, by index).
  const int green = GreenCount(k);
  uint32_t mask = 0;
  for (int v = 0; v < k; ++v) {
    int rank = 0;
    for (int u = 0; u < k; ++u) rank += hashes[u] < hashes[v] || (hashes[u] == hashes[v] && u < v);
    if (rank < green) mask |= 1u << v;
  }
  return mask;
}

double LexicalWatermarkScheme::GreenFraction(const VariantGroup& group) const {
  return static_cast<double>(GreenCount(group.size)) / group.size;
}

namespace {

// Numbers each site by its occurrence within its group: sites sorted by (group key, position).
template <typename Fn>
void ForEachOccurrence(std::vector<VariantSite>& sites, Fn&& fn) {
  thread_local std::vector<uint32_t> order;
  order.resize(sites.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return sites[a].group.key != sites[b].group.key ? sites[a].group.key < sites[b].group.key : a < b;
  });
  uint32_t occurrence = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    occurrence = i > 0 && sites[order[i]].group.key == sites[order[i - 1]].group.key ? occurrence + 1 : 0;
    fn(order[i], occurrence);
  }
}

}  // namespace

WatermarkScore LexicalWatermarkScheme::Score(std::string_view text) const {
  thread_local std::vector<VariantSite> sites;
  thread_local std::vector<double> p;
  sites.clear();
  p.clear();
  lexicon_->Scan(text, [&](const VariantSite& s) { sites.push_back(s); });
  size_t green = 0;
  if (sites.size() == 1) {  // the common case of short texts: no sort
    p.push_back(GreenFraction(sites[0].group));
    green = (GreenMask(sites[0].group, 0) >> sites[0].variant) & 1;
  } else {
    ForEachOccurrence(sites, [&](uint32_t i, uint32_t occurrence) {
      p.push_back(GreenFraction(sites[i].group));
      green += (GreenMask(sites[i].group, occurrence) >> sites[i].variant) & 1;
    });
  }
  return ScoreGreenSites(p, green);
}

std::vector<LexicalWatermarkScheme::ScoredSite> LexicalWatermarkScheme::ScoredSites(
    std::string_view text) const {
  std::vector<VariantSite> sites = lexicon_->Sites(text);
  std::vector<ScoredSite> out(sites.size());
  ForEachOccurrence(sites, [&](uint32_t i, uint32_t occurrence) {
    out[i] = {sites[i], occurrence, GreenMask(sites[i].group, occurrence)};
  });
  return out;
}

}  // namespace bulwark
