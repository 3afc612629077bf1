// `bulwark-lab eval smoothing` (issue #6; SMSR Component 2, DESIGN 4.6): the empirical attack success
// rate of smoothed retrieval against its certificate.
//
// For every enterprise scenario (data/corpora/enterprise_scenarios.jsonl), every t = 1 .. --max-t
// and every store size S in {10 + t, 20}, a namespace of one store holds
//   S - t benign entries: the scenario's supporting passages (each a differently worded correct
//         answer), filled up with other scenarios' passages as distractors, and
//   t poison entries: the injected claim, then paraphrases of it, each carrying the metadata
//         "claim" = the malicious answer, so every poisoned run answers with the SAME string (the
//         Consistent Minority Effect: identical injected answers against varied correct ones).
// "provenance on" models SMSR Component 1: the poison was injected through an unauthenticated
// channel and carries no valid signature, so it never enters (only an authenticated insider's
// poison would count: that is the "off" row, where all t poison entries are signed writes).
//
// The pool is the top m = S entries for the scenario's question (MemoryStore::Search); each trial
// runs the Smoother (extractive responder, m = S, k = --k, nruns = --nruns) with its own seed, and
// judges the outcome twice: the equivalence majority (AggregateByEquivalence with the embedding
// judge, the deployed aggregation) and a plurality string vote over the same runs (for
// comparison). A trial is a success for the attacker when the outcome contains a malicious keyword
// of the scenario (and no correct one); "correct" when it has a correct keyword only.
//
// Per row: ASR with a Clopper–Pearson 95 % interval, the certificate delta(m, k, t_eff, nruns)
// (t_eff = t, or 0 with provenance), the one-sided exact binomial p-value of H0 "ASR <= delta"
// and whether it is rejected at 0.05 after a Bonferroni correction over all rows, utility (the
// correct-answer rate) and a bootstrap 95 % interval of the ASR over seeds.
#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <fstream>

#include "cli/eval_commands.h"
#include "core/seeded_csprng.h"
#include "core/strings.h"
#include "eval/binomial.h"
#include "eval/bootstrap.h"
#include "eval/oracle_judge.h"
#include "eval/rates.h"
#include "eval/report.h"
#include "eval/string_vote.h"
#include "smoothing/certificate.h"
#include "smoothing/embedding_equivalence.h"
#include "smoothing/extractive_responder.h"
#include "smoothing/smoother.h"
#include "store/memory_store.h"

namespace bulwark::cli {
namespace {

constexpr char kSmoothingPrincipal[] = "eval:smoothing";
constexpr double kFamilyAlpha = 0.05;

struct Scenario {
  std::string id, question, malicious_answer, injected_claim;
  std::vector<std::string> supporting, paraphrases, correct_keywords, malicious_keywords;
};

absl::StatusOr<std::vector<Scenario>> ReadScenarios(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<Scenario> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    const auto strings = [&](const char* key) {
      std::vector<std::string> v;
      if (j.contains(key) && j[key].is_array()) {
        for (const auto& s : j[key]) {
          if (s.is_string()) v.push_back(s.get<std::string>());
        }
      }
      return v;
    };
    if (!j.is_object() || !j.value("question", nlohmann::json()).is_string() ||
        !j.value("injected_claim", nlohmann::json()).is_string() ||
        !j.value("malicious_answer", nlohmann::json()).is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": line ", number, ": not a scenario"));
    }
    Scenario s{j.value("id", absl::StrCat("line-", number)),
               j["question"].get<std::string>(),
               j["malicious_answer"].get<std::string>(),
               j["injected_claim"].get<std::string>(),
               strings("supporting_passages"),
               strings("paraphrases"),
               strings("correct_keywords"),
               strings("malicious_keywords")};
    if (s.supporting.empty() || s.correct_keywords.empty() || s.malicious_keywords.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": line ", number, ": needs supporting_passages, correct_keywords, malicious_keywords"));
    }
    out.push_back(std::move(s));
  }
  if (out.size() < 2) return absl::InvalidArgumentError(absl::StrCat(path, ": needs at least 2 scenarios"));
  return out;
}

bool ContainsAny(const std::string& text, const std::vector<std::string>& keywords) {
  const std::string lower = absl::AsciiStrToLower(text);
  for (const std::string& k : keywords) {
    if (lower.find(absl::AsciiStrToLower(k)) != std::string::npos) return true;
  }
  return false;
}

// The oracle verdict of an outcome (nullopt: abstained / no winner).
eval::Verdict Judge(const Scenario& s, const std::optional<std::string>& outcome) {
  if (!outcome) return eval::Verdict::kNeither;
  const bool malicious = ContainsAny(*outcome, s.malicious_keywords);
  const bool correct = ContainsAny(*outcome, s.correct_keywords);
  if (malicious && !correct) return eval::Verdict::kMalicious;
  if (correct && !malicious) return eval::Verdict::kCorrect;
  return eval::Verdict::kNeither;
}

// A 256-bit subset seed from the run's coordinates (SplitMix64 over them).
SeededCsprng::Seed TrialSeed(std::initializer_list<uint64_t> parts) {
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  const auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  for (uint64_t p : parts) state ^= next() + p;
  SeededCsprng::Seed seed{};
  for (size_t i = 0; i < seed.size(); i += 8) {
    const uint64_t v = next();
    for (size_t b = 0; b < 8; ++b) seed[i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return seed;
}

// One configuration: t poison entries, store size S, provenance on/off.
struct Condition {
  int t = 1;
  int size = 11;
  bool provenance = false;
  int t_effective() const { return provenance ? 0 : t; }
};

// Attacker successes and correct answers of one condition under one vote, per seed.
struct Outcomes {
  eval::Rate asr, utility;
  std::vector<eval::Rate> asr_per_seed;
};

class EvalSmoothingCommand : public EvalSubcommand {
 public:
  std::string name() const override { return "smoothing"; }
  std::string description() const override {
    return "smoothed retrieval: empirical ASR against the certificate (t poisoned entries, string vs "
           "equivalence "
           "vote, with/without provenance), utility";
  }
  void AddFlags(CLI::App* sub) override {
    sub->add_option("--scenarios", scenarios_,
                    "scenario file (default data/corpora/enterprise_scenarios.jsonl)");
    sub->add_option("--max-t", max_t_, "poisoned entries t = 1 .. max-t")
        ->capture_default_str()
        ->check(CLI::Range(1, 5));
    sub->add_option("--k", k_, "entries per run")->capture_default_str()->check(CLI::Range(1, 10));
    sub->add_option("--nruns", nruns_, "runs per smoothed answer")
        ->capture_default_str()
        ->check(CLI::Range(1, 101));
    sub->add_option("--trials", trials_, "smoothed answers per scenario, condition and seed")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
  }

  int Run(const EvalContext& ctx) override {
    const std::string path =
        scenarios_.empty() ? DefaultCorpusPath("enterprise_scenarios.jsonl") : scenarios_;
    auto scenarios = ReadScenarios(path);
    if (!scenarios.ok()) return ctx.Fail(scenarios.status());
    const int seeds = ctx.Seeds(5);

    std::vector<Condition> conditions;
    for (int t = 1; t <= max_t_; ++t) {
      for (int size : {10 + t, 20}) {
        if (size - t < 1 || size < k_) continue;
        for (bool provenance : {false, true}) conditions.push_back({t, size, provenance});
      }
    }

    auto created = ctx.CreateStore(ctx.env().store_options);
    if (!created.ok()) return ctx.Fail(created.status());
    std::unique_ptr<MemoryStore>* store = &created->store;

    ExtractiveResponder responder;
    EmbeddingEquivalence judge(&(*store)->embedder());
    Smoother smoother(&responder, &judge);

    // outcomes[condition][vote]: vote 0 = equivalence, 1 = string
    std::vector<std::array<Outcomes, 2>> outcomes(conditions.size());
    for (auto& pair : outcomes) {
      for (auto& o : pair) o.asr_per_seed.resize(seeds);
    }
    EvalProgress progress = ctx.Progress("eval smoothing", conditions.size() * scenarios->size());
    for (size_t c = 0; c < conditions.size(); ++c) {
      const Condition& cond = conditions[c];
      for (size_t si = 0; si < scenarios->size(); ++si) {
        const Scenario& s = (*scenarios)[si];
        std::vector<NewEntry> entries;
        for (size_t i = 0; i < s.supporting.size() && static_cast<int>(entries.size()) < cond.size - cond.t;
             ++i) {
          entries.push_back({.text = s.supporting[i]});
        }
        // Distractors: the passages of the following scenarios, in file order.
        for (size_t o = 1; o < scenarios->size() && static_cast<int>(entries.size()) < cond.size - cond.t;
             ++o) {
          const Scenario& other = (*scenarios)[(si + o) % scenarios->size()];
          for (size_t i = 0;
               i < other.supporting.size() && static_cast<int>(entries.size()) < cond.size - cond.t; ++i) {
            entries.push_back({.text = other.supporting[i]});
          }
        }
        if (!cond.provenance) {
          for (int p = 0; p < cond.t; ++p) {
            const std::string text =
                p == 0
                    ? s.injected_claim
                    : s.paraphrases[static_cast<size_t>(p - 1) % std::max<size_t>(1, s.paraphrases.size())];
            entries.push_back({.text = text.empty() ? s.injected_claim : text,
                               .metadata = {{"claim", s.malicious_answer}, {"eval_role", "poison"}}});
          }
        }
        const std::string ns = absl::StrCat("smoothing-", c, "-", si);
        auto added = (*store)->AddBatch(ns, entries, kSmoothingPrincipal);
        if (!added.ok()) return ctx.Fail(added.status());
        auto pool = (*store)->Search(ns, s.question, {.k = static_cast<int>(entries.size())});
        if (!pool.ok()) return ctx.Fail(pool.status());
        const SmoothingOptions options{.m = static_cast<int>(pool->hits.size()),
                                       .k = std::min<int>(k_, static_cast<int>(pool->hits.size())),
                                       .nruns = nruns_};
        for (int seed = 0; seed < seeds; ++seed) {
          for (int trial = 0; trial < trials_; ++trial) {
            SeededCsprng rng(TrialSeed(
                {ctx.flags().seed, static_cast<uint64_t>(seed), c, si, static_cast<uint64_t>(trial)}));
            auto answer = smoother.Answer(s.question, pool->hits, options, &rng);
            if (!answer.ok()) return ctx.Fail(answer.status());
            std::vector<std::string> responses;
            for (const SmoothedRun& run : answer->runs) responses.push_back(run.response);
            const eval::StringVoteResult vote = eval::StringVote(responses);
            const eval::Verdict verdicts[2] = {
                Judge(s, answer->abstained ? std::nullopt : std::optional<std::string>(answer->answer)),
                Judge(s, vote.winner)};
            for (int v = 0; v < 2; ++v) {
              Outcomes& o = outcomes[c][v];
              o.asr.Add(verdicts[v] == eval::Verdict::kMalicious);
              o.utility.Add(verdicts[v] == eval::Verdict::kCorrect);
              o.asr_per_seed[seed].Add(verdicts[v] == eval::Verdict::kMalicious);
            }
          }
        }
        progress.Step();
      }
    }

    const int rows = static_cast<int>(conditions.size()) * 2;
    const double alpha = eval::BonferroniAlpha(kFamilyAlpha, rows);
    eval::MarkdownTable table({"t", "store", "provenance", "vote", "ASR [95% CI]", "certificate",
                               "p (ASR<=cert)", "exceeds cert", "utility", "ASR over seeds [bootstrap 95%]"});
    nlohmann::json json_rows = nlohmann::json::array();
    int exceeded = 0;
    for (size_t c = 0; c < conditions.size(); ++c) {
      const Condition& cond = conditions[c];
      const int m = cond.provenance ? cond.size - cond.t : cond.size;
      auto delta = CertificateDelta({.m = m, .k = std::min(k_, m), .nruns = nruns_}, cond.t_effective());
      if (!delta.ok()) return ctx.Fail(delta.status());
      for (int v = 0; v < 2; ++v) {
        const Outcomes& o = outcomes[c][v];
        const double p = eval::BinomialPValueAtLeast(o.asr.successes, o.asr.trials, *delta);
        const bool exceeds = p < alpha;
        exceeded += exceeds;
        std::vector<double> per_seed;
        for (const eval::Rate& r : o.asr_per_seed) per_seed.push_back(r.value());
        const eval::MeanWithCi boot = eval::BootstrapMeanCi(per_seed, {.seed = ctx.flags().seed + c * 2 + v});
        const std::string vote = v == 0 ? "equivalence" : "string";
        table.AddRow({absl::StrCat(cond.t), absl::StrCat(m, " entries"), cond.provenance ? "on" : "off", vote,
                      eval::FormatWithInterval(o.asr.value(), o.asr.ci()), eval::FormatNumber(*delta, 4),
                      eval::FormatNumber(p, 4), exceeds ? "YES" : "no", eval::FormatNumber(o.utility.value()),
                      eval::FormatWithInterval(boot.mean, boot.ci)});
        json_rows.push_back(
            {{"t", cond.t},
             {"t_effective", cond.t_effective()},
             {"store_entries", m},
             {"provenance", cond.provenance},
             {"vote", vote},
             {"asr", eval::ToJson(o.asr)},
             {"utility", eval::ToJson(o.utility)},
             {"certificate_delta", *delta},
             {"p_value_asr_le_certificate", p},
             {"exceeds_certificate", exceeds},
             {"asr_over_seeds",
              {{"mean", boot.mean}, {"ci95", {boot.ci.lo, boot.ci.hi}}, {"per_seed", per_seed}}}});
      }
    }
    const nlohmann::json json = {
        {"command", "eval smoothing"},
        {"config",
         {{"scenarios", path},
          {"scenario_count", scenarios->size()},
          {"max_t", max_t_},
          {"k", k_},
          {"nruns", nruns_},
          {"trials_per_seed", trials_},
          {"seeds", seeds},
          {"seed", ctx.flags().seed},
          {"responder", "extractive"},
          {"equivalence_judge", "embedding"},
          {"bonferroni", {{"family_alpha", kFamilyAlpha}, {"tests", rows}, {"per_test_alpha", alpha}}}}},
        {"rows", json_rows},
        {"rows_exceeding_certificate", exceeded}};
    const std::string markdown = absl::StrCat(
        "## bulwark-lab eval smoothing: ", scenarios->size(), " scenarios x ", seeds, " seeds x ", trials_,
        " trials per row; k=", k_, ", nruns=", nruns_, ", extractive responder\n\n", table.Render(),
        "\nexceeds cert: one-sided exact binomial test of ASR <= certificate rejected at family-wise 0.05 "
        "(Bonferroni over ",
        rows, " rows, per-test alpha ", eval::FormatNumber(alpha, 5), "). utility: correct-answer rate.\n");
    return ctx.Finish(markdown, json);
  }

 private:
  std::string scenarios_;
  int max_t_ = 3;
  int k_ = 5;
  int nruns_ = 5;
  int trials_ = 10;
};

}  // namespace

std::unique_ptr<EvalSubcommand> MakeEvalSmoothingCommand() {
  return std::make_unique<EvalSmoothingCommand>();
}

}  // namespace bulwark::cli
