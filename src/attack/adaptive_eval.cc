// The adaptive-attacker experiment (see adaptive_eval.h).
#include "attack/adaptive_eval.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

#include "attack/poisoning_deployment.h"
#include "attack/synonym_attack.h"
#include "core/status_macros.h"
#include "store/memory_store_impl.h"

namespace bulwark::attack {
namespace {

using poisoning::AddOutcomes;
using poisoning::AttackedNamespace;
using poisoning::BenignDraw;
using poisoning::Deployment;
using poisoning::Effects;
using poisoning::Fmt;
using poisoning::Outcomes;
using poisoning::RateJson;
using poisoning::Retrieved;
using poisoning::Suspicion;

// A target's name and the detectors it evades (MemSAD+ = either flags).
using Target = std::pair<std::string, std::vector<std::string>>;

absl::StatusOr<std::vector<Target>> ParseTargets(const std::vector<std::string>& names) {
  std::vector<Target> targets;
  for (const std::string& t : names) {
    if (t == "memsad")
      targets.push_back({t, {"memsad"}});
    else if (t == "memsad_plus")
      targets.push_back({t, {"memsad", "memsad_plus"}});
    else
      return absl::InvalidArgumentError("adaptive: unknown target " + t);
  }
  return targets;
}

// The retrieval effects of each original namespace's poisons, before substitution.
absl::StatusOr<std::vector<Effects>> RetrievedBefore(MemoryStore& store, const ScreenedOutcomes& screened,
                                                     const std::vector<AttackedNamespace>& parts, int k) {
  std::vector<Effects> before;
  for (const AttackedNamespace& part : parts) {
    std::set<std::string> orig_ids;
    Outcomes orig_outcomes;
    AddOutcomes(screened, part.run.poison, &orig_outcomes);
    for (const Entry& e : part.run.poison) orig_ids.insert(e.id);
    BULWARK_ASSIGN_OR_RETURN(auto effects, Retrieved(store, part.ns, part.run.queries, part.run.goals,
                                                     orig_outcomes, orig_ids, k));
    before.push_back(std::move(effects));
  }
  return before;
}

// One target's counts, summed over the namespaces of an attack row.
struct TargetTally {
  int flagged_before = 0, flagged_after = 0, evaded = 0;
  size_t poison = 0, queries = 0;
  int retrieved_before = 0, retrieved_after = 0, defended_before = 0, defended_after = 0;
  double substitutions = 0, sim_delta = 0;

  nlohmann::json ToJson() const {
    const double n = static_cast<double>(std::max<size_t>(poison, 1));
    return {{"poison", poison},
            {"flagged_before", flagged_before},
            {"flagged_after", flagged_after},
            {"evaded", evaded},
            {"substitutions", substitutions / n},
            {"similarity_delta", sim_delta / n},
            {"queries", queries},
            {"retrieved_before", retrieved_before},
            {"retrieved_after", retrieved_after},
            {"retrieved_defended_before", defended_before},
            {"retrieved_defended_after", defended_after}};
  }
};

// What the substitution in one sibling namespace needs.
struct SiblingContext {
  const Deployment& d;
  const ScreenedOutcomes& screened;
  const SynonymTable& synonyms;
  const BenignDraw& draw;
  const std::vector<std::string>& plain;
  const std::vector<std::string>& extra;
  const AdaptiveEvalConfig& config;
};

// The greedy synonym attack on every poison of `part` against the sibling namespace `syn_ns`
// (prepared like the original), then the substituted poisons written there and measured.
absl::Status SubstituteInSibling(const SiblingContext& c, const AttackedNamespace& part,
                                 const Effects& before, const std::string& syn_ns, const Target& target,
                                 TargetTally* tally) {
  const auto& [name, detectors] = target;
  MemoryStore& store = *c.d.store;
  BULWARK_ASSIGN_OR_RETURN(auto benign2, c.d.Prepare(syn_ns, c.draw, c.plain, c.extra, part.trigger));
  std::vector<NewEntry> substituted;
  std::vector<bool> was_flagged;
  for (size_t i = 0; i < part.run.poison.size(); ++i) {
    const Entry& e = part.run.poison[i];
    BULWARK_ASSIGN_OR_RETURN(
        auto attacked,
        RunSynonymAttack(
            store, syn_ns, e.text, part.run.victim_of[i], c.synonyms,
            {.detectors = detectors, .k = c.config.base.k, .max_substitutions = c.config.max_substitutions}));
    // Before and after are judged by the same gate state (this namespace's H and calibration).
    tally->flagged_before += attacked.flagged_before;
    was_flagged.push_back(attacked.flagged_before);
    tally->substitutions += static_cast<double>(attacked.substitutions.size());
    tally->sim_delta += attacked.similarity_after - attacked.similarity_before;
    substituted.push_back({.text = attacked.text, .metadata = e.metadata, .source = e.source});
  }
  BULWARK_ASSIGN_OR_RETURN(auto written, store.AddBatch(syn_ns, substituted, "attacker"));
  std::set<std::string> ids;
  Outcomes outcomes;
  AddOutcomes(c.screened, written, &outcomes);
  for (size_t i = 0; i < written.size(); ++i) {
    const Entry& e = written[i];
    ids.insert(e.id);
    bool flagged = false;
    for (const std::string& det : detectors) flagged |= Suspicion(outcomes[e.id], det).second;
    tally->flagged_after += flagged;
    tally->evaded += was_flagged[i] && !flagged;
  }
  // ASR-R after: victim queries the same (for AgentPoison the triggers are unchanged).
  BULWARK_ASSIGN_OR_RETURN(
      auto after, Retrieved(store, syn_ns, part.run.queries, part.run.goals, outcomes, ids, c.config.base.k));
  tally->poison += part.run.poison.size(), tally->queries += part.run.queries.size();
  const auto count = [](const std::map<std::string, int>& counts, const std::string& defense) {
    const auto it = counts.find(defense);
    return it == counts.end() ? 0 : it->second;
  };
  tally->retrieved_before += count(before.retrieved, "none"),
      tally->retrieved_after += after.retrieved["none"];
  tally->defended_before += count(before.retrieved, name), tally->defended_after += after.retrieved[name];
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<nlohmann::json> RunAdaptiveSeed(const EvalCorpora& corpora, const AdaptiveEvalConfig& config,
                                               uint64_t seed, const std::filesystem::path& work_dir,
                                               const EvalProgressFn& progress) {
  BULWARK_ASSIGN_OR_RETURN(auto synonyms, SynonymTable::Shared());
  poisoning::SeededEnv env(seed);
  BULWARK_ASSIGN_OR_RETURN(auto store,
                           poisoning::CreateEvalStore(work_dir / ("adaptive-" + std::to_string(seed)),
                                                      config.base.synonyms, &env));
  const ScreenedOutcomes screened(store->impl().defenses.get());
  Deployment d{store.get(), corpora, config.base, synonyms};
  const poisoning::Picks picks = poisoning::PickTargets(corpora, config.base, seed);
  const BenignDraw draw = d.Draw(seed);
  BULWARK_ASSIGN_OR_RETURN(auto agentpoison,
                           poisoning::AgentPoisonOfSeed(*store, config.base.attacks, picks, draw, seed));
  BULWARK_ASSIGN_OR_RETURN(const std::vector<Target> targets, ParseTargets(config.targets));
  nlohmann::json out = {{"seed", seed}, {"attacks", nlohmann::json::object()}};
  size_t done = 0;
  const size_t total = config.base.attacks.size() * (1 + targets.size());
  for (const std::string& attack : config.base.attacks) {
    std::vector<std::string> plain, extra;
    poisoning::VictimSide(attack, picks.topics, picks.scenarios, &plain, &extra);
    // The original attack as `eval poisoning` deploys it ("orig-<attack>", or for
    // agentpoison_triggered one namespace per victim topic), and its retrieval before substitution.
    const std::string orig = "orig-";
    BULWARK_ASSIGN_OR_RETURN(auto parts,
                             poisoning::DeployAndAttack(d, attack, picks, draw, agentpoison, seed, orig));
    BULWARK_ASSIGN_OR_RETURN(const std::vector<Effects> before,
                             RetrievedBefore(*store, screened, parts, config.base.k));
    if (progress) progress(++done, total);
    const SiblingContext context{d, screened, *synonyms, draw, plain, extra, config};
    for (const Target& target : targets) {
      TargetTally tally;
      for (size_t p = 0; p < parts.size(); ++p) {
        const std::string syn_ns = "syn-" + target.first + "-" + parts[p].ns.substr(orig.size());
        BULWARK_RETURN_IF_ERROR(SubstituteInSibling(context, parts[p], before[p], syn_ns, target, &tally));
      }
      out["attacks"][attack][target.first] = tally.ToJson();
      if (progress) progress(++done, total);
    }
  }
  return out;
}

PoisoningSummary SummarizeAdaptive(const std::vector<nlohmann::json>& seeds) {
  PoisoningSummary s;
  s.json = {{"attacks", nlohmann::json::object()}, {"seeds", seeds.size()}};
  std::ostringstream md;
  md << "| attack | detector | TPR before | TPR after | evasion | ASR-R before | ASR-R after | delta ASR-R | "
        "subs/entry | sim delta |\n|---|---|---|---|---|---|---|---|---|---|\n";
  if (seeds.empty()) {
    s.markdown = md.str();
    return s;
  }
  const nlohmann::json first = seeds[0]["attacks"];
  for (auto it = first.begin(); it != first.end(); ++it) {
    for (auto t = it.value().begin(); t != it.value().end(); ++t) {
      int64_t poison = 0, fb = 0, fa = 0, ev = 0, q = 0, rb = 0, ra = 0;
      double subs = 0, sim = 0;
      for (const nlohmann::json& seed : seeds) {
        const nlohmann::json r = seed["attacks"][it.key()][t.key()];
        const int64_t n = r["poison"].get<int64_t>();
        poison += n, fb += r["flagged_before"].get<int64_t>(), fa += r["flagged_after"].get<int64_t>();
        ev += r["evaded"].get<int64_t>(), q += r["queries"].get<int64_t>();
        rb += r["retrieved_before"].get<int64_t>(), ra += r["retrieved_after"].get<int64_t>();
        subs += r["substitutions"].get<double>() * n, sim += r["similarity_delta"].get<double>() * n;
      }
      const double np = static_cast<double>(std::max<int64_t>(poison, 1));
      const double evasion = fb > 0 ? static_cast<double>(ev) / static_cast<double>(fb) : std::nan("");
      nlohmann::json j = {
          {"poison", poison},
          {"tpr_before", RateJson(fb, poison)},
          {"tpr_after", RateJson(fa, poison)},
          {"evasion", fb > 0 ? nlohmann::json(evasion) : nlohmann::json(nullptr)},
          {"evaded", ev},
          {"asr_r_before", RateJson(rb, q)},
          {"asr_r_after", RateJson(ra, q)},
          {"delta_asr_r", q > 0 ? static_cast<double>(ra - rb) / static_cast<double>(q) : 0.0},
          {"substitutions_per_entry", subs / np},
          {"similarity_delta", sim / np}};
      md << "| " << it.key() << " (n=" << poison << ") | " << t.key() << " | "
         << Fmt(j["tpr_before"]["value"]) << " | " << Fmt(j["tpr_after"]["value"]) << " | " << Fmt(evasion)
         << " | " << Fmt(j["asr_r_before"]["value"]) << " | " << Fmt(j["asr_r_after"]["value"]) << " | "
         << Fmt(j["delta_asr_r"].get<double>()) << " | " << Fmt(subs / np, 1) << " | " << Fmt(sim / np, 3)
         << " |\n";
      s.json["attacks"][it.key()][t.key()] = std::move(j);
    }
  }
  s.markdown = md.str();
  return s;
}

}  // namespace bulwark::attack
