// flood: a burst of mutually similar writes (issue #14 point 3): paraphrase flooding, where an
// attacker writes many rewordings of one claim so that it outnumbers the true memory at retrieval
// (SMSR's consistent-majority injection; the held-out corpus's paraphrase floods). For every write
// it looks at the recent writes of the same principal in the namespace (at most `window_writes`,
// none older than `window_seconds`) and at the recent writes of the whole namespace (any
// principal, `namespace_window_writes`): a write is flagged when, with it, at least `min_burst`
// writes of the principal's window (or `namespace_min_burst` of the namespace's) make the same
// claim as it: cosine >= `similarity`, or one distinctive slot value in common (an amount, phone,
// e-mail, URL or account code; slot_extractor.h). The report names the burst: the ids of the
// earlier writes that form it; the write path quarantines those that are still active
// (write/write_pipeline.h), so a caught flood is caught whole.
//
// Why slots: with the default lexical embedder, paraphrases of one claim are far apart (median
// cosine 0.35 between the SMSR paraphrases of data/corpora/enterprise_scenarios.jsonl), but they
// keep the claim's value ("USD 25,000"). Measured on data/corpora (the tuning set): with
// min_burst 4 and similarity 0.45, 16 of the 60 paraphrase writes that could complete a burst do,
// and 5 of the 1,400 benign memories written in order by one principal (0.4 %).
//
// Every write screened joins the windows, flagged or not (a flood does not stop by being caught).
// The windows live in memory only; a restart empties them.
//
// Calibration: `similarity` is set so that at most the target FPR of the reference entries, written
// in order by one principal, would complete a burst: for each reference entry the
// (min_burst - 1)-th highest cosine to the window_writes entries before it; the threshold is the
// target-FPR quantile of those (never below 0.5).
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>
#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <unordered_map>

#include "core/status_macros.h"
#include "core/strings.h"
#include "detect/calibration.h"
#include "detect/detectors.h"
#include "detect/slot_extractor.h"
#include "index/inner_product.h"

namespace bulwark {
namespace {

constexpr double kMinFloodSimilarity = 0.3;

struct FloodOptions {
  double similarity = 0.45;  // before calibration
  size_t min_burst = 4;      // writes, this one included
  size_t window_writes = 64;
  double window_seconds = 3600;
  size_t namespace_min_burst = 6;
  size_t namespace_window_writes = 64;
};

absl::Status ReadFloodOptions(ConfigReader& r, FloodOptions* o) {
  BULWARK_RETURN_IF_ERROR(r.Get("similarity", &o->similarity));
  BULWARK_RETURN_IF_ERROR(r.Get("min_burst", &o->min_burst));
  BULWARK_RETURN_IF_ERROR(r.Get("window_writes", &o->window_writes));
  BULWARK_RETURN_IF_ERROR(r.Get("window_seconds", &o->window_seconds));
  BULWARK_RETURN_IF_ERROR(r.Get("namespace_min_burst", &o->namespace_min_burst));
  BULWARK_RETURN_IF_ERROR(r.Get("namespace_window_writes", &o->namespace_window_writes));
  BULWARK_RETURN_IF_ERROR(r.Check(o->similarity > 0 && o->similarity <= 1, "similarity: (0, 1]"));
  BULWARK_RETURN_IF_ERROR(r.Check(o->min_burst >= 2 && o->min_burst <= 64, "min_burst: 2 to 64"));
  BULWARK_RETURN_IF_ERROR(
      r.Check(o->namespace_min_burst >= 2 && o->namespace_min_burst <= 256, "namespace_min_burst: 2 to 256"));
  BULWARK_RETURN_IF_ERROR(r.Check(o->window_writes >= o->min_burst && o->window_writes <= 4096,
                                  "window_writes: min_burst to 4096"));
  BULWARK_RETURN_IF_ERROR(
      r.Check(o->namespace_window_writes >= o->namespace_min_burst && o->namespace_window_writes <= 4096,
              "namespace_window_writes: namespace_min_burst to 4096"));
  return r.Check(o->window_seconds > 0, "window_seconds: > 0");
}

// The values of a text's distinctive slots: the ones two writes share only when they state the
// same fact (not names, dates or small numbers, which unrelated notes share).
std::vector<std::string> DistinctiveValues(const TextSlots& slots) {
  std::vector<std::string> out;
  for (const Slot& s : slots.slots) {
    switch (s.kind) {
      case SlotKind::kAmount:
      case SlotKind::kPhone:
      case SlotKind::kEmail:
      case SlotKind::kUrl:
      case SlotKind::kAccount:
        out.push_back(absl::StrCat(static_cast<int>(s.kind), ":", s.value));
        break;
      default:
        break;
    }
  }
  return out;
}

bool ShareAny(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

// One recent write.
struct RecentWrite {
  std::string id;
  int64_t at_us = 0;
  std::vector<float> embedding;
  std::vector<std::string> values;  // DistinctiveValues
};

// The ids of a flagged burst, kept for the report.
struct FloodPayload final : VerdictPayload {
  std::vector<std::string> burst;  // earlier writes similar to this one, newest first
  bool namespace_wide = false;     // found in the namespace's window (several principals)
};

class FloodDetector final : public WriteDetector {
 public:
  explicit FloodDetector(const FloodOptions& o) : options_(o) {}
  const DetectorDescriptor& descriptor() const override { return FloodDescriptor(); }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const double* fitted = state.calibration ? state.calibration->Get<double>(FloodDescriptor()) : nullptr;
    v.calibrated = fitted != nullptr;
    v.threshold = static_cast<double>(options_.min_burst);
    if (c.embedding.empty()) return v;
    const double similarity = fitted ? *fitted : options_.similarity;
    v.values[0] = similarity;
    const int64_t horizon = c.written_at_us - static_cast<int64_t>(options_.window_seconds * 1e6);
    const std::vector<std::string> values = DistinctiveValues(c.slots ? *c.slots : ExtractSlots(c.text));
    absl::MutexLock lock(&mu_);
    Window& own = windows_[absl::StrCat(ToAbsl(c.name_space), "\x1f", ToAbsl(c.principal))];
    Window& all = windows_[absl::StrCat(ToAbsl(c.name_space), "\x1f\x1f*")];
    std::vector<std::string> burst, ns_burst;
    const size_t own_count = Similar(own, c.embedding, values, horizon, similarity, &burst);
    const size_t ns_count = Similar(all, c.embedding, values, horizon, similarity, &ns_burst);
    v.score = static_cast<double>(own_count + 1);
    v.values[1] = static_cast<double>(ns_count + 1);
    const bool own_burst = own_count + 1 >= options_.min_burst;
    const bool ns_wide = ns_count + 1 >= options_.namespace_min_burst;
    if (own_burst || ns_wide) {
      v.flagged = true;
      auto payload = std::make_shared<FloodPayload>();
      payload->namespace_wide = !own_burst;
      payload->burst = own_burst ? std::move(burst) : std::move(ns_burst);
      if (!own_burst) v.score = v.values[1], v.threshold = static_cast<double>(options_.namespace_min_burst);
      v.payload = std::move(payload);
    }
    Push(&own, c, values, options_.window_writes);
    Push(&all, c, values, options_.namespace_window_writes);
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    const auto* p = static_cast<const FloodPayload*>(v.payload.get());
    if (p == nullptr) return "flood";
    return absl::StrFormat("flood: %d similar writes%s within the window (cosine >= %.2f), with %s",
                           static_cast<int>(v.score),
                           p->namespace_wide ? " in the namespace" : " by this principal", v.values[0],
                           absl::StrJoin(p->burst, ", "));
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    const auto* p = static_cast<const FloodPayload*>(v.payload.get());
    nlohmann::json j(nlohmann::json::value_t::object);
    j["similarity"] = v.values[0];
    j["principal_burst"] = static_cast<int>(v.score);
    j["namespace_burst"] = static_cast<int>(v.values[1]);
    if (p != nullptr) {
      j["burst"] = {{"entry_ids", p->burst}, {"scope", p->namespace_wide ? "namespace" : "principal"}};
    }
    return j;
  }

 private:
  struct Window {
    std::deque<RecentWrite> writes;  // oldest first
  };

  // Drops writes older than `horizon`; returns how many of the rest make the same claim (cosine >=
  // similarity to `embedding`, or a distinctive value in common), their ids newest first in *ids.
  static size_t Similar(Window& w, std::span<const float> embedding, const std::vector<std::string>& values,
                        int64_t horizon, double similarity, std::vector<std::string>* ids) {
    while (!w.writes.empty() && w.writes.front().at_us < horizon) w.writes.pop_front();
    const InnerProductKernels& k = BestKernels();
    size_t count = 0;
    for (auto it = w.writes.rbegin(); it != w.writes.rend(); ++it) {
      if (it->embedding.size() != embedding.size()) continue;
      if (k.dot(it->embedding.data(), embedding.data(), embedding.size()) >= similarity ||
          ShareAny(values, it->values)) {
        ++count;
        ids->push_back(it->id);
      }
    }
    return count;
  }

  static void Push(Window* w, const WriteCandidate& c, const std::vector<std::string>& values,
                   size_t capacity) {
    if (w->writes.size() >= capacity) w->writes.pop_front();
    w->writes.push_back(
        {std::string(c.id), c.written_at_us, {c.embedding.begin(), c.embedding.end()}, values});
  }

  const FloodOptions options_;
  mutable absl::Mutex mu_;
  // std::unordered_map: references to its windows stay valid while another key is inserted.
  mutable std::unordered_map<std::string, Window> windows_ ABSL_GUARDED_BY(mu_);
};

// Each reference entry's (min_burst - 1)-th highest similarity to the window_writes entries
// before it, where sharing a distinctive value counts as similarity 1 (at any threshold).
std::vector<double> ReferenceBurstScores(const CalibrationInput& input, const FloodOptions& o) {
  const auto& e = input.reference_embeddings;
  std::vector<std::vector<std::string>> values;
  for (const std::string& t : input.reference_texts) values.push_back(DistinctiveValues(ExtractSlots(t)));
  std::vector<double> scores;
  std::vector<double> sims;
  for (size_t i = 0; i < e.size(); ++i) {
    sims.clear();
    for (size_t j = i > o.window_writes ? i - o.window_writes : 0; j < i; ++j) {
      double dot = 0;
      for (size_t d = 0; d < e[i].size() && d < e[j].size(); ++d)
        dot += static_cast<double>(e[i][d]) * e[j][d];
      sims.push_back(ShareAny(values[i], values[j]) ? 1.0 : dot);
    }
    if (sims.size() + 1 < o.min_burst) {
      scores.push_back(0);
      continue;
    }
    std::nth_element(sims.begin(), sims.begin() + static_cast<long>(o.min_burst - 2), sims.end(),
                     std::greater<double>());
    scores.push_back(sims[o.min_burst - 2]);
  }
  return scores;
}

DetectorDescriptor MakeFloodDescriptor() {
  DetectorDescriptor d;
  d.name = "flood";
  // Off by default: a batch import of many same-shaped lines by one principal is a burst by this
  // definition (gate.json "flood" turns it on).
  d.enabled_by_default = false;
  d.uses_slots = true;
  d.options = [](ConfigReader& section) -> absl::StatusOr<nlohmann::json> {
    FloodOptions o;
    BULWARK_RETURN_IF_ERROR(ReadFloodOptions(section, &o));
    return nlohmann::json{{"similarity", o.similarity},
                          {"min_burst", o.min_burst},
                          {"window_writes", o.window_writes},
                          {"window_seconds", o.window_seconds},
                          {"namespace_min_burst", o.namespace_min_burst},
                          {"namespace_window_writes", o.namespace_window_writes}};
  };
  d.create = [](const nlohmann::json& options,
                const GateResources&) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    BULWARK_ASSIGN_OR_RETURN(const FloodOptions o,
                             ParseDetectorOptions<FloodOptions>(options, "flood", ReadFloodOptions));
    return std::make_unique<FloodDetector>(o);
  };
  d.calibration = CalibrationHook{
      .fit = [](const CalibrationInput& input, const WriteDetector*) -> absl::StatusOr<CalibrationFit> {
        const FloodOptions o;  // the burst shape of the defaults; similarity is what is fitted
        const std::vector<double> scores = ReferenceBurstScores(input, o);
        if (scores.empty()) return CalibrationFit{};
        const double t =
            std::max(kMinFloodSimilarity, std::nextafter(ThresholdAtFpr(scores, input.target_fpr), 2.0));
        const double flagged = static_cast<double>(
            std::count_if(scores.begin(), scores.end(), [t](double s) { return s >= t; }));
        return CalibrationFit{std::make_shared<FittedValue<double>>(t),
                              flagged / static_cast<double>(scores.size()),
                              FlagsAbove(scores, std::nextafter(t, -1.0))};
      },
      .store =
          [](const DetectorCalibration& fitted, bool, nlohmann::json* record) {
            (*record)["flood"] = {{"similarity", static_cast<const FittedValue<double>&>(fitted).value}};
          },
      .load = [](const nlohmann::json& record) -> absl::StatusOr<std::shared_ptr<const DetectorCalibration>> {
        return std::make_shared<FittedValue<double>>(record.at("flood").at("similarity").get<double>());
      },
      .describe =
          [](const nlohmann::json& summary) {
            return absl::StrFormat("  flood: similarity %.4f\n", summary["similarity"].get<double>());
          }};
  return d;
}

}  // namespace

const DetectorDescriptor& FloodDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeFloodDescriptor());
  return *descriptor;
}

}  // namespace bulwark
