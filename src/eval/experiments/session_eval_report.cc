// The session experiment's summary and report (see session_eval.h): the metrics of each side
// of a session score, and the JSON and markdown forms `bulwark-lab eval sessions` prints.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "eval/experiments/session_eval.h"
#include "eval/report.h"
#include "eval/roc.h"

namespace bulwark::eval {

using Json = nlohmann::json;
namespace {

using OutcomeRefs = std::vector<const SessionOutcome*>;

// The metrics of positives `pos` against negatives `neg`; one-sided numbers only when the
// corresponding `own_*` flag says the side belongs to the row.
SessionMetrics Metrics(const OutcomeRefs& pos, const OutcomeRefs& neg, bool own_pos, bool own_neg) {
  SessionMetrics m;
  m.attack_sessions = pos.size();
  m.benign_sessions = neg.size();
  std::vector<double> p, n;
  for (const SessionOutcome* o : pos) p.push_back(o->score);
  for (const SessionOutcome* o : neg) n.push_back(o->score);
  if (!p.empty() && !n.empty()) {
    m.auroc = Auroc(p, n);
    m.tpr_at_1fpr = TprAtFpr(RocCurve(p, n), 0.01);
  }
  for (const SessionOutcome* o : neg) m.benign_blocked += o->detected_at > 0 ? 1 : 0;
  if (own_neg && !neg.empty()) {
    m.fpr_at_block = static_cast<double>(m.benign_blocked) / static_cast<double>(neg.size());
    m.fpr_ci = ClopperPearson(static_cast<int64_t>(m.benign_blocked), static_cast<int64_t>(neg.size()));
  }
  std::vector<double> fdt;
  for (const SessionOutcome* o : pos) {
    if (o->detected_at > 0) fdt.push_back(static_cast<double>(o->detected_at));
    m.leaked += o->leaked;
    m.leaked_undefended += o->leaked_undefended;
  }
  m.detected = fdt.size();
  if (own_pos && !pos.empty()) {
    m.detected_fraction = static_cast<double>(fdt.size()) / static_cast<double>(pos.size());
    m.leakage = m.leaked_undefended == 0
                    ? 0.0
                    : static_cast<double>(m.leaked) / static_cast<double>(m.leaked_undefended);
    if (!fdt.empty()) {
      double sum = 0;
      for (double d : fdt) sum += d;
      m.fdt_mean = sum / static_cast<double>(fdt.size());
      std::sort(fdt.begin(), fdt.end());
      const size_t h = fdt.size() / 2;
      m.fdt_median = fdt.size() % 2 == 1 ? fdt[h] : (fdt[h - 1] + fdt[h]) / 2;
    }
  }
  return m;
}

Json Num(const std::optional<double>& v) { return v && std::isfinite(*v) ? Json(*v) : Json(nullptr); }

Json Headline(const SessionMetrics& m) {
  return {{"auroc", Num(m.auroc)},
          {"tpr_at_1fpr", Num(m.tpr_at_1fpr)},
          {"fpr_at_block", Num(m.fpr_at_block)},
          {"fdt_mean", Num(m.fdt_mean)},
          {"detected_fraction", Num(m.detected_fraction)},
          {"leakage", Num(m.leakage)}};
}

Json Counts(const SessionMetrics& m) {
  return {{"attack_sessions", m.attack_sessions},
          {"benign_sessions", m.benign_sessions},
          {"detected", m.detected},
          {"benign_blocked", m.benign_blocked},
          {"fpr_at_block_ci95", {m.fpr_ci.lo, m.fpr_ci.hi}},
          {"fdt_median", Num(m.fdt_median)},
          {"leaked_memories", m.leaked},
          {"leaked_memories_undefended", m.leaked_undefended}};
}

void Row(std::ostringstream& out, const std::string& name, const SessionMetrics& m) {
  out << "| " << name << " | " << m.attack_sessions << " / " << m.benign_sessions << " | "
      << FormatOptional(m.auroc) << " | " << FormatOptional(m.tpr_at_1fpr) << " | "
      << FormatOptional(m.fpr_at_block);
  if (m.fpr_at_block)
    out << " [" << FormatOptional(m.fpr_ci.lo) << ", " << FormatOptional(m.fpr_ci.hi) << "]";
  out << " | " << FormatOptional(m.fdt_mean, 2) << " | " << FormatOptional(m.detected_fraction) << " | "
      << FormatOptional(m.leakage);
  if (m.leakage) out << " (" << m.leaked << " / " << m.leaked_undefended << ")";
  out << " |\n";
}

}  // namespace

SessionEvalSummary SummarizeSessions(std::span<const SessionOutcome> outcomes) {
  OutcomeRefs attacks, benign;
  std::map<std::string, std::pair<OutcomeRefs, OutcomeRefs>> styles;  // style -> (attacks, benign)
  for (const SessionOutcome& o : outcomes) {
    const bool attack = o.label == SessionLabel::kAttack;
    (attack ? attacks : benign).push_back(&o);
    auto& [a, b] = styles[o.style];
    (attack ? a : b).push_back(&o);
  }
  SessionEvalSummary summary;
  summary.overall = Metrics(attacks, benign, true, true);
  for (const auto& [style, sides] : styles) {
    const bool own_pos = !sides.first.empty(), own_neg = !sides.second.empty();
    summary.by_style[style] =
        Metrics(own_pos ? sides.first : attacks, own_neg ? sides.second : benign, own_pos, own_neg);
  }
  return summary;
}

Json ToJson(const SessionEvalSummary& summary, const DefendedStore& defended,
            std::span<const SessionOutcome> outcomes, const SessionEvalConfig& config) {
  Json by_style = Json::object(), style_counts = Json::object();
  for (const auto& [style, m] : summary.by_style) {
    by_style[style] = Headline(m);
    style_counts[style] = Counts(m);
  }
  Json sessions = Json::array();
  for (const SessionOutcome& o : outcomes) {
    sessions.push_back({{"session", o.session},
                        {"label", ToString(o.label)},
                        {"style", o.style},
                        {"queries", o.queries},
                        {"score", std::isfinite(o.score) ? Json(o.score) : Json(nullptr)},
                        {"detected_at", o.detected_at},
                        {"leaked", o.leaked},
                        {"leaked_undefended", o.leaked_undefended}});
  }
  const SessionEvalFit& f = defended.fit;
  Json detail = {{"overall", Counts(summary.overall)},
                 {"by_style", style_counts},
                 {"fit",
                  {{"memories", f.memories},
                   {"quarantined", f.quarantined},
                   {"attack_queries", f.attack_queries},
                   {"generated_attack_logs", f.generated_attacks},
                   {"benign_queries", f.benign_queries},
                   {"pots", f.pots},
                   {"seconds", f.seconds},
                   {"metrics", f.metrics}}},
                 {"config",
                  {{"k", config.k},
                   {"k_obs", config.k_obs},
                   {"estimator", honeypot::ToString(config.estimator)},
                   {"alpha", config.sprt.alpha},
                   {"beta", config.sprt.beta},
                   {"lower_boundary", honeypot::ToString(config.sprt.lower_boundary)},
                   {"ratio", config.fit.ratio},
                   {"seed", config.fit.seed},
                   {"intent_evidence", config.intent_evidence},
                   {"unseen_weight", config.unseen_weight},
                   {"relevance_evidence", config.relevance_evidence},
                   {"score", "max over the session of the SPRT statistic after each query"}}},
                 {"sessions", sessions}};
  return {{"overall", Headline(summary.overall)}, {"by_style", by_style}, {"detail", detail}};
}

std::string ToMarkdown(const SessionEvalSummary& summary, const DefendedStore& defended,
                       const SessionEvalConfig& config) {
  std::ostringstream out;
  const SessionEvalFit& f = defended.fit;
  out << "fit: " << f.memories << " memories (" << f.quarantined << " quarantined), " << f.pots
      << " pots from " << f.attack_queries << (f.generated_attacks ? " generated" : " logged")
      << " attack and " << f.benign_queries << " benign queries; estimator "
      << honeypot::ToString(config.estimator) << (config.intent_evidence ? " + intent grammar" : "") << ", k "
      << config.k << ", k_obs " << config.k_obs << "\n\n"
      << "| sessions | attack / benign | AUROC | TPR@1%FPR | FPR at block [95 % CI] | mean FDT | detected | "
         "leakage (defended / undefended) |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  Row(out, "all", summary.overall);
  for (const auto& [style, m] : summary.by_style) Row(out, "style " + style, m);
  return out.str();
}

}  // namespace bulwark::eval
