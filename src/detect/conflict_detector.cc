// conflict: a write whose subject matches an active memory of the namespace (cosine of their
// embeddings >= min_similarity) but that changes what the memory says: one of its slots (times,
// dates, amounts, numbers, e-mails, URLs, phones, account codes, names; slot_extractor.h) is
// replaced, or its polarity flips (issue #14 point 2). What happens then is a policy of the
// namespace over provenance:
//
//   the memory's writer             action (defaults)
//   another principal               other_principal      = "quarantine"
//   same principal, but the memory  more_trusted_source  = "quarantine"
//     came from a more trusted source (system > user > import > agent > tool)
//   same principal, same or less    same_principal       = "supersede"
//     trusted source
//
// "quarantine" flags the write; "supersede" lets it in and the write path retires the old memory
// after the commit (deleted, both kept, linked in history: write/write_pipeline.h); "allow" only
// reports. The verdict's detail carries the conflict object the dashboard renders:
//   "conflict": {"entry_id", "similarity", "slots": [{"kind", "old", "new"}], "polarity_changed"}
// (null without a conflict), "action" and "with_principal".
//
// Misinformation (a fluent false claim) rarely is a near copy of the fact it contradicts, so a
// write with no such match is also compared by subject (subject_index.h): the memory with the
// largest share of the write's rare words, at least `subject_min_overlap`, that the write
// contradicts (SubjectDiff: a changed value or polarity; not a changed name). Such a match is
// weaker evidence than a near copy, so it has its own policy, `subject_policy`, whose defaults
// quarantine a contradiction of another principal's memory and only report one of the writer's
// own (an owner's note on the same subject with another value is an update or a second fact, and
// retiring the old memory on a word match alone would lose real facts).
//
// Calibration: min_similarity is set so that at most the target FPR of the reference entries
// contradict another reference entry at or above it (each reference entry against the others),
// i.e. the detector's flag rate on benign text like the reference set, had every entry been
// written by another principal. It is never set below 0.5 (kMinCalibratedSimilarity).
// subject_min_overlap is fitted the same way on the subject matches (never below
// kMinCalibratedOverlap); each path gets half the rate and the hook reports their union.
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/status_macros.h"
#include "detect/calibration.h"
#include "detect/detectors.h"
#include "detect/memory_table.h"
#include "detect/store_context.h"

namespace bulwark {
namespace {

constexpr double kMinCalibratedSimilarity = 0.5;
constexpr double kMinCalibratedOverlap = 0.3;
constexpr size_t kMaxMatches = 4;  // stale matches skipped per write before giving up

enum class ConflictAction { kQuarantine = 0, kSupersede = 1, kAllow = 2 };

std::string_view ActionName(ConflictAction a) {
  switch (a) {
    case ConflictAction::kQuarantine:
      return "quarantine";
    case ConflictAction::kSupersede:
      return "supersede";
    case ConflictAction::kAllow:
      return "allow";
  }
  return "allow";
}

std::optional<ConflictAction> ParseAction(std::string_view s) {
  if (s == "quarantine") return ConflictAction::kQuarantine;
  if (s == "supersede") return ConflictAction::kSupersede;
  if (s == "allow") return ConflictAction::kAllow;
  return std::nullopt;
}

struct ConflictPolicy {
  ConflictAction other_principal = ConflictAction::kQuarantine;
  ConflictAction more_trusted_source = ConflictAction::kQuarantine;
  ConflictAction same_principal = ConflictAction::kSupersede;
};

// A subject match is weaker evidence than a near copy: only another principal's memory is defended.
constexpr ConflictPolicy kDefaultSubjectPolicy{.other_principal = ConflictAction::kQuarantine,
                                               .more_trusted_source = ConflictAction::kAllow,
                                               .same_principal = ConflictAction::kAllow};

struct ConflictOptions {
  double min_similarity = 0.75;      // before calibration
  double subject_min_overlap = 0.5;  // before calibration; 1 < x: the subject path is off
  ConflictPolicy policy;
  ConflictPolicy subject_policy = kDefaultSubjectPolicy;
  std::vector<std::pair<std::string, ConflictPolicy>> namespaces;  // per-namespace overrides
};

// How much a source is trusted (higher: more).
int TrustRank(Source s) {
  switch (s) {
    case Source::kSystem:
      return 4;
    case Source::kUser:
      return 3;
    case Source::kImport:
      return 2;
    case Source::kAgent:
      return 1;
    case Source::kTool:
      return 0;
  }
  return 0;
}

absl::Status ReadPolicy(ConfigReader& r, ConflictPolicy* p) {
  for (auto [key, field] : {std::pair{"other_principal", &p->other_principal},
                            std::pair{"more_trusted_source", &p->more_trusted_source},
                            std::pair{"same_principal", &p->same_principal}}) {
    std::string value(ActionName(*field));
    BULWARK_RETURN_IF_ERROR(r.Get(key, &value));
    const std::optional<ConflictAction> action = ParseAction(value);
    BULWARK_RETURN_IF_ERROR(
        r.Check(action.has_value(), absl::StrCat(key, ": quarantine, supersede or allow")));
    *field = *action;
  }
  return r.Finish();
}

nlohmann::json PolicyJson(const ConflictPolicy& p) {
  return {{"other_principal", ActionName(p.other_principal)},
          {"more_trusted_source", ActionName(p.more_trusted_source)},
          {"same_principal", ActionName(p.same_principal)}};
}

absl::Status ReadConflictOptions(ConfigReader& r, ConflictOptions* o) {
  BULWARK_RETURN_IF_ERROR(r.Get("min_similarity", &o->min_similarity));
  BULWARK_RETURN_IF_ERROR(r.Check(o->min_similarity > 0 && o->min_similarity <= 1, "min_similarity: (0, 1]"));
  BULWARK_RETURN_IF_ERROR(r.Get("subject_min_overlap", &o->subject_min_overlap));
  BULWARK_RETURN_IF_ERROR(r.Check(o->subject_min_overlap > 0 && o->subject_min_overlap <= 2,
                                  "subject_min_overlap: (0, 2] (above 1: off)"));
  nlohmann::json policy = nlohmann::json::object(), namespaces = nlohmann::json::object();
  nlohmann::json subject_policy = PolicyJson(kDefaultSubjectPolicy);
  BULWARK_RETURN_IF_ERROR(r.Get("policy", &policy));
  BULWARK_RETURN_IF_ERROR(r.Get("subject_policy", &subject_policy));
  BULWARK_RETURN_IF_ERROR(r.Check(subject_policy.is_object(), "subject_policy: an object"));
  ConfigReader subject_reader(subject_policy, "conflict.subject_policy.");
  BULWARK_RETURN_IF_ERROR(ReadPolicy(subject_reader, &o->subject_policy));
  BULWARK_RETURN_IF_ERROR(r.Get("namespaces", &namespaces));
  BULWARK_RETURN_IF_ERROR(r.Check(policy.is_object(), "policy: an object"));
  BULWARK_RETURN_IF_ERROR(r.Check(namespaces.is_object() && namespaces.size() <= 10'000,
                                  "namespaces: an object of at most 10000 namespaces"));
  ConfigReader policy_reader(policy, "conflict.policy.");
  BULWARK_RETURN_IF_ERROR(ReadPolicy(policy_reader, &o->policy));
  o->namespaces.clear();
  for (const auto& [ns, section] : namespaces.items()) {
    BULWARK_RETURN_IF_ERROR(r.Check(section.is_object(), absl::StrCat("namespaces.", ns, ": an object")));
    ConflictPolicy p = o->policy;
    ConfigReader ns_reader(section, absl::StrCat("conflict.namespaces.", ns, "."));
    BULWARK_RETURN_IF_ERROR(ReadPolicy(ns_reader, &p));
    o->namespaces.emplace_back(ns, p);
  }
  return absl::OkStatus();
}

// The calibrated thresholds of the two paths (subject_min_overlap NaN in a record written before
// the subject path: the configured value applies).
struct ConflictThresholds {
  double min_similarity = 0;
  double subject_min_overlap = std::numeric_limits<double>::quiet_NaN();
};

struct ConflictPayload final : VerdictPayload {
  MemoryMatch match;
  ConflictAction action = ConflictAction::kAllow;
};

class ConflictDetector final : public WriteDetector {
 public:
  explicit ConflictDetector(ConflictOptions options) : options_(std::move(options)) {}
  const DetectorDescriptor& descriptor() const override { return ConflictDescriptor(); }

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState& state) const override {
    DetectorVerdict v{.by = this};
    const ConflictThresholds* fitted =
        state.calibration ? state.calibration->Get<ConflictThresholds>(ConflictDescriptor()) : nullptr;
    v.calibrated = fitted != nullptr;
    v.threshold = fitted ? fitted->min_similarity : options_.min_similarity;
    const double min_overlap = fitted && !std::isnan(fitted->subject_min_overlap)
                                   ? fitted->subject_min_overlap
                                   : options_.subject_min_overlap;
    if (state.memories == nullptr || c.embedding.empty()) return v;
    TextSlots extracted;
    if (c.slots == nullptr) extracted = ExtractSlots(c.text);
    const TextSlots& slots = c.slots ? *c.slots : extracted;
    std::vector<MemoryMatch> matches =
        state.memories->Contradicted(c.name_space, c.embedding, c.text, slots, v.threshold, kMaxMatches);
    if (TakeFirstActive(c, state, &matches, &v) || min_overlap > 1) return v;
    matches = state.memories->SubjectContradicted(c.name_space, SubjectIndex::TermsOf(c.text), c.text, slots,
                                                  min_overlap, kMaxMatches);
    TakeFirstActive(c, state, &matches, &v);
    return v;
  }

  // Reports the first of `matches` the store still holds as active (forgetting the others) into
  // `v`; false when there is none.
  bool TakeFirstActive(const WriteCandidate& c, const NamespaceState& state,
                       std::vector<MemoryMatch>* matches, DetectorVerdict* v) const {
    for (MemoryMatch& m : *matches) {
      if (m.id == c.id) continue;  // an update of the memory itself is compared by its history
      if (state.store != nullptr && !state.store->IsActive(c.name_space, m.id)) {
        state.memories->Remove(c.name_space, m.id);  // deleted or quarantined since it was added
        continue;
      }
      auto payload = std::make_shared<ConflictPayload>();
      payload->action = Decide(c, m);
      payload->match = std::move(m);
      v->score = payload->match.similarity;
      v->flagged = payload->action == ConflictAction::kQuarantine;
      v->values[0] = static_cast<double>(payload->action);
      v->payload = std::move(payload);
      return true;
    }
    return false;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    const auto* p = static_cast<const ConflictPayload*>(v.payload.get());
    if (p == nullptr) return "conflict";
    std::string changed;
    for (const SlotChange& s : p->match.diff.changes) {
      absl::StrAppend(&changed, changed.empty() ? "" : ", ", std::string(SlotKindName(s.kind)), " '",
                      s.old_text, "' -> '", s.new_text, "'");
    }
    if (p->match.diff.polarity_changed) absl::StrAppend(&changed, changed.empty() ? "" : ", ", "polarity");
    return absl::StrFormat("conflict: contradicts memory %s of %s (%s %.2f): %s", p->match.id,
                           p->match.principal, p->match.by_subject ? "subject overlap" : "similarity",
                           p->match.similarity, changed);
  }

  nlohmann::json Detail(const DetectorVerdict& v) const override {
    const auto* p = static_cast<const ConflictPayload*>(v.payload.get());
    nlohmann::json j(nlohmann::json::value_t::object);
    if (p == nullptr) {
      j["conflict"] = nullptr;
      return j;
    }
    nlohmann::json slots = nlohmann::json::array();
    for (const SlotChange& s : p->match.diff.changes) {
      slots.push_back({{"kind", SlotKindName(s.kind)}, {"old", s.old_text}, {"new", s.new_text}});
    }
    j["conflict"] = {{"entry_id", p->match.id},
                     {"similarity", p->match.similarity},
                     {"slots", std::move(slots)},
                     {"polarity_changed", p->match.diff.polarity_changed}};
    j["matched_by"] = p->match.by_subject ? "subject" : "embedding";
    j["action"] = ActionName(p->action);
    j["with_principal"] = p->match.principal;
    j["with_source"] = ToString(p->match.source);
    return j;
  }

 private:
  ConflictAction Decide(const WriteCandidate& c, const MemoryMatch& m) const {
    const ConflictPolicy* policy = &options_.policy;
    for (const auto& [ns, p] : options_.namespaces) {
      if (ns == c.name_space) policy = &p;
    }
    if (m.by_subject) policy = &options_.subject_policy;
    if (m.principal != c.principal) return policy->other_principal;
    if (TrustRank(m.source) > TrustRank(c.source)) return policy->more_trusted_source;
    return policy->same_principal;
  }

  ConflictOptions options_;
};

// Each reference entry's highest cosine to another reference entry whose slots it contradicts
// (0 when none does).
std::vector<double> ReferenceConflictScores(const CalibrationInput& input) {
  const size_t n = input.reference_embeddings.size();
  std::vector<TextSlots> slots;
  slots.reserve(n);
  for (const std::string& t : input.reference_texts) slots.push_back(ExtractSlots(t));
  std::vector<double> scores(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j || input.reference_texts[i] == input.reference_texts[j]) continue;
      const auto& a = input.reference_embeddings[i];
      const auto& b = input.reference_embeddings[j];
      double dot = 0;
      for (size_t d = 0; d < a.size() && d < b.size(); ++d) dot += static_cast<double>(a[d]) * b[d];
      if (dot > scores[i] && DiffSlots(slots[j], slots[i]).contradicts()) scores[i] = dot;
    }
  }
  return scores;
}

// Each reference entry's largest subject overlap with another reference entry it contradicts by
// subject (SubjectDiff; 0 when none), the idf taken over the reference set.
std::vector<double> ReferenceSubjectScores(const CalibrationInput& input) {
  const size_t n = input.reference_texts.size();
  std::vector<TextSlots> slots;
  std::vector<SubjectIndex::Terms> terms;
  SubjectIndex index;
  for (size_t i = 0; i < n; ++i) {
    slots.push_back(ExtractSlots(input.reference_texts[i]));
    terms.push_back(SubjectIndex::TermsOf(input.reference_texts[i]));
    index.Put(static_cast<uint32_t>(i), terms.back());
  }
  std::vector<double> scores(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [overlap, j] : index.Overlapping(terms[i], 0.0, n)) {
      if (j == i || input.reference_texts[i] == input.reference_texts[j]) continue;
      if (!SubjectDiff(slots[j], slots[i]).has_value()) continue;
      scores[i] = overlap;  // best first
      break;
    }
  }
  return scores;
}

// The smallest threshold >= floor such that a path flagging score >= threshold flags at most
// `fpr` of `scores`.
double FitAtLeast(const std::vector<double>& scores, double fpr, double floor) {
  // Flags score >= threshold; ThresholdAtFpr's t flags score > t: nudge it up one ulp.
  return std::max(floor, std::nextafter(ThresholdAtFpr(scores, fpr), 2.0));
}

absl::StatusOr<CalibrationFit> FitConflict(const CalibrationInput& input, const WriteDetector*) {
  if (input.reference_embeddings.size() < 2) return CalibrationFit{};
  const std::vector<double> similar = ReferenceConflictScores(input);
  const std::vector<double> subject = ReferenceSubjectScores(input);
  ConflictThresholds t;
  t.min_similarity = FitAtLeast(similar, input.target_fpr / 2, kMinCalibratedSimilarity);
  t.subject_min_overlap = FitAtLeast(subject, input.target_fpr / 2, kMinCalibratedOverlap);
  std::vector<uint8_t> flags(similar.size(), 0);
  size_t flagged = 0;
  for (size_t i = 0; i < similar.size(); ++i) {
    flags[i] = similar[i] >= t.min_similarity || subject[i] >= t.subject_min_overlap;
    flagged += flags[i];
  }
  return CalibrationFit{std::make_shared<FittedValue<ConflictThresholds>>(t),
                        static_cast<double>(flagged) / static_cast<double>(similar.size()), std::move(flags)};
}

DetectorDescriptor MakeConflictDescriptor() {
  DetectorDescriptor d;
  d.name = "conflict";
  // Off by default until the stores and tests that write near-identical synthetic memories by one
  // principal (a supersede retires all but the last) are adapted: gate.json "conflict".
  d.enabled_by_default = false;
  d.uses_slots = true;
  d.reads_memories = true;
  d.options = [](ConfigReader& section) -> absl::StatusOr<nlohmann::json> {
    ConflictOptions o;
    BULWARK_RETURN_IF_ERROR(ReadConflictOptions(section, &o));
    nlohmann::json namespaces = nlohmann::json::object();
    for (const auto& [ns, p] : o.namespaces) namespaces[ns] = PolicyJson(p);
    return nlohmann::json{{"min_similarity", o.min_similarity},
                          {"subject_min_overlap", o.subject_min_overlap},
                          {"policy", PolicyJson(o.policy)},
                          {"subject_policy", PolicyJson(o.subject_policy)},
                          {"namespaces", namespaces}};
  };
  d.create = [](const nlohmann::json& options,
                const GateResources&) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    BULWARK_ASSIGN_OR_RETURN(ConflictOptions o,
                             ParseDetectorOptions<ConflictOptions>(options, "conflict", ReadConflictOptions));
    return std::make_unique<ConflictDetector>(std::move(o));
  };
  d.calibration = CalibrationHook{
      .fit = FitConflict,
      .store =
          [](const DetectorCalibration& fitted, bool, nlohmann::json* record) {
            const ConflictThresholds& t = static_cast<const FittedValue<ConflictThresholds>&>(fitted).value;
            (*record)["conflict"] = {{"min_similarity", t.min_similarity},
                                     {"subject_min_overlap", t.subject_min_overlap}};
          },
      .load = [](const nlohmann::json& record) -> absl::StatusOr<std::shared_ptr<const DetectorCalibration>> {
        const nlohmann::json& j = record.at("conflict");
        ConflictThresholds t;
        t.min_similarity = j.at("min_similarity").get<double>();
        if (j.contains("subject_min_overlap") && j["subject_min_overlap"].is_number())
          t.subject_min_overlap = j.at("subject_min_overlap").get<double>();
        return std::make_shared<FittedValue<ConflictThresholds>>(t);
      },
      .describe =
          [](const nlohmann::json& summary) {
            std::string line =
                absl::StrFormat("  conflict: min_similarity %.4f", summary["min_similarity"].get<double>());
            if (summary.contains("subject_min_overlap") && summary["subject_min_overlap"].is_number()) {
              absl::StrAppendFormat(&line, ", subject_min_overlap %.4f",
                                    summary["subject_min_overlap"].get<double>());
            }
            return line + "\n";
          }};
  return d;
}

}  // namespace

const DetectorDescriptor& ConflictDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeConflictDescriptor());
  return *descriptor;
}

}  // namespace bulwark
