// The read-defense subcommands (see read_defense_commands.h).
#include "cli/read_defense_commands.h"

#include <absl/strings/str_cat.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/query_file.h"
#include "cli/read_defense_text.h"
#include "core/hex.h"
#include "core/strings.h"
#include "gate/gate_fit_report.h"
#include "gate/gate_registry.h"
#include "gate/gate_store.h"
#include "llm/chat_client.h"
#include "retrieval/defended_retriever.h"
#include "smoothing/certificate.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {
namespace {

std::filesystem::path DatabasePath(const CommandEnv& env) { return StoreLayout(env.store).database(); }

// A labelled set: JSONL {"query": "...", "label": "benign" | "triggered"} (or 0 / 1).
absl::Status ReadLabelled(const std::string& path, std::vector<std::string>* benign,
                          std::vector<std::string>* triggered) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    const auto bad = [&] {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", number, ": expected {\"query\": \"...\", \"label\": \"benign\" | \"triggered\"}"));
    };
    if (!j.is_object() || !j.contains("query") || !j["query"].is_string() || !j.contains("label"))
      return bad();
    const nlohmann::json& label = j["label"];
    bool is_triggered;
    if (label == "benign" || label == 0) {
      is_triggered = false;
    } else if (label == "triggered" || label == 1) {
      is_triggered = true;
    } else {
      return bad();
    }
    (is_triggered ? triggered : benign)->push_back(j["query"].get<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ChatClient>> MaybeLlm(const std::string& llm_json) {
  if (llm_json.empty()) {
    const char* url = std::getenv("BULWARK_LLM_URL");
    if (url == nullptr || *url == '\0') return std::unique_ptr<ChatClient>();
    return ChatClient::FromConfig(nlohmann::json::object());
  }
  const nlohmann::json config = nlohmann::json::parse(llm_json, nullptr, false);
  if (!config.is_object()) return absl::InvalidArgumentError("--llm must be a JSON object");
  return ChatClient::FromConfig(config);
}

}  // namespace

struct ReadDefenseCommands::Flags {
  // certificate
  CLI::App* certificate = nullptr;
  CertificateParams certificate_params;
  int certificate_t = 1;
  // search and answer
  CLI::App* answer = nullptr;
  std::string question;
  std::string gate_mode;
  int k_high = 0;
  bool smooth = false;
  SmoothingOptions smoothing;
  std::string responder = "extractive";
  std::string seed_hex;
  std::string llm_json;
  // gate
  CLI::App* gate = nullptr;
  CLI::App* gate_fit = nullptr;
  CLI::App* gate_show = nullptr;
  CLI::App* gate_remove = nullptr;
  CLI::App* gate_score = nullptr;
  std::string benign_file, triggered_file, trigger, labelled_file, score_name, mode_name = "flag", gate_query;
  int from_history = 0;
  GateFitOptions fit;
  bool report = false;
};

ReadDefenseCommands::ReadDefenseCommands() : flags_(std::make_unique<Flags>()) {}
ReadDefenseCommands::~ReadDefenseCommands() = default;

void ReadDefenseCommands::AddSearchFlags(CLI::App* cmd) {
  Flags& f = *flags_;
  cmd->add_option("--gate", f.gate_mode,
                  "query gate mode: off | flag | escalate | reject | strip (default: the namespace policy)")
      ->check(CLI::IsMember({"off", "flag", "escalate", "reject", "strip"}));
  cmd->add_option("--k-high", f.k_high, "hits when the gate escalates (default 2k)")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--smooth", f.smooth, "also answer by smoothed retrieval (SMSR) and print its certificate");
  cmd->add_option("--m", f.smoothing.m, "smoothing: candidates over-fetched")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxPool));
  cmd->add_option("--smooth-k", f.smoothing.k, "smoothing: entries per run")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxPool));
  cmd->add_option("--nruns", f.smoothing.nruns, "smoothing: runs")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxSmoothingRuns));
  cmd->add_option("--responder", f.responder, "smoothing: extractive | llm")
      ->capture_default_str()
      ->check(CLI::IsMember({"extractive", "llm"}));
  cmd->add_option("--seed", f.seed_hex,
                  "smoothing: 64 hex digits, to replay a recorded answer (default: fresh)");
  cmd->add_option("--llm", f.llm_json,
                  R"(LLM as JSON {"url", "model", "api_key_env", ...}; default from $BULWARK_LLM_URL)");
}

void ReadDefenseCommands::Register(CLI::App& app) {
  Flags& f = *flags_;
  f.certificate = app.add_subcommand("certificate",
                                     "SMSR certificate: P[t adversarial entries win the smoothed majority]");
  f.certificate->add_option("--m", f.certificate_params.m, "over-fetched candidates")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxCandidates));
  f.certificate->add_option("--k", f.certificate_params.k, "entries per run")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxCandidates));
  f.certificate->add_option("--t", f.certificate_t, "adversarial entries among the m")
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxCandidates));
  f.certificate->add_option("--nruns", f.certificate_params.nruns, "runs")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxRuns));
  f.certificate->footer(
      "delta = P[Binomial(nruns, p_hit) >= ceil(nruns/2)], p_hit = 1 - C(m-t,k)/C(m,k); a tie counts as "
      "lost.");

  f.answer = app.add_subcommand(
      "answer", "smoothed answer (SMSR) with its certificate and the entries behind each run");
  f.answer->add_option("question", f.question, "the question")->required();
  AddSearchFlags(f.answer);

  f.gate = app.add_subcommand("gate", "the namespace's query OOD gate (QOE): fit, show, remove, score");
  f.gate->require_subcommand(1);
  f.gate_fit = f.gate->add_subcommand("fit", "fit the gate on benign (and triggered) queries and store it");
  f.gate_fit->add_option("--benign", f.benign_file, "benign queries: one per line, or JSONL {\"query\"}");
  f.gate_fit
      ->add_option("--from-history", f.from_history, "fit on the namespace's N most recent recorded queries")
      ->check(CLI::Range(1, 1000000));
  f.gate_fit->add_option("--triggered", f.triggered_file, "triggered queries (an attack log), for LDA");
  f.gate_fit->add_option("--trigger", f.trigger,
                         "make triggered queries by appending TEXT to each benign one");
  f.gate_fit->add_option("--fpr", f.fit.target_fpr, "target false positive rate on benign queries")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 0.5));
  f.gate_fit
      ->add_option("--score", f.score_name,
                   "deciding score: centroid | mahalanobis | lda (default: lda with triggered queries, else "
                   "mahalanobis)")
      ->check(CLI::IsMember({"centroid", "mahalanobis", "lda"}));
  f.gate_fit
      ->add_option("--shrinkage", f.fit.shrinkage,
                   "covariance shrinkage alpha in [0, 1]; default Ledoit-Wolf")
      ->check(CLI::Range(0.0, 1.0));
  f.gate_fit->add_option("--folds", f.fit.folds, "folds for the out-of-fold thresholds")
      ->capture_default_str()
      ->check(CLI::Range(2, 20));
  f.gate_fit
      ->add_option("--mode", f.mode_name, "the namespace policy: off | flag | escalate | reject | strip")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "flag", "escalate", "reject", "strip"}));
  f.gate_fit->add_option("--labelled", f.labelled_file,
                         "labelled set for --report: JSONL {\"query\", \"label\": \"benign\"|\"triggered\"}");
  f.gate_fit->add_flag("--report", f.report, "print AUROC and FPR at 95 % and 99 % TPR per score");
  f.gate_show = f.gate->add_subcommand("show", "print the namespace's gate");
  f.gate_remove = f.gate->add_subcommand("remove", "remove the namespace's gate");
  f.gate_score = f.gate->add_subcommand("score", "score one query with the namespace's gate");
  f.gate_score->add_option("query", f.gate_query)->required();
}

namespace {

// What `gate fit` prints: the fitted gate and, with --report, the separation of every score.
int PrintGateFit(const CommandEnv& env, const StoredGate& gate, const nlohmann::json& source,
                 const std::optional<GateFitReport>& report, const std::string& labelled_file) {
  const GateModel& m = *gate.model;
  if (env.json) {
    nlohmann::json j = {{"namespace", env.name_space},
                        {"mode", ToString(gate.mode)},
                        {"gate", m.Summary()},
                        {"source", source}};
    if (report) j["report"] = ToJson(*report);
    env.out << j.dump() << "\n";
    return 0;
  }
  env.out << "fitted the query gate of namespace " << env.name_space << " on " << m.benign_count()
          << " benign and " << m.triggered_count() << " triggered queries; decides by "
          << ToString(m.decision_score()) << " at threshold " << Fixed(m.threshold(m.decision_score()))
          << " (target FPR " << m.target_fpr() << ", shrinkage " << Fixed(m.shrinkage(), 3) << "); policy "
          << ToString(gate.mode) << "\n";
  if (report) {
    env.out << "report on " << (report->out_of_fold ? "the fitting queries, out of fold" : labelled_file)
            << " (" << report->benign << " benign, " << report->triggered << " triggered):\n"
            << "  score        AUROC   FPR@95%TPR  FPR@99%TPR  FPR@threshold  TPR@threshold\n";
    for (const ScoreSeparation& s : report->scores) {
      env.out << "  " << std::left << std::setw(12) << ToString(s.score) << " " << std::setw(6)
              << Fixed(s.auroc) << "  " << std::setw(10) << Fixed(s.fpr_at_95_tpr) << "  " << std::setw(10)
              << Fixed(s.fpr_at_99_tpr) << "  " << std::setw(13) << Fixed(s.fpr_at_threshold) << "  "
              << Fixed(s.tpr_at_threshold) << "\n";
    }
    if (report->triggered == 0) env.out << "  (no triggered queries: AUROC and FPR at TPR are undefined)\n";
  }
  return 0;
}

}  // namespace

std::optional<int> ReadDefenseCommands::Run(const CommandEnv& env) {
  Flags& f = *flags_;
  if (f.certificate->parsed()) return RunCertificate(env);
  if (f.answer->parsed()) {
    f.smooth = true;
    SearchOptions options;
    options.k = std::min(f.smoothing.k, f.smoothing.m);
    return RunSearch(env, f.question, options);
  }
  if (!f.gate->parsed()) return std::nullopt;
  return RunGate(env);
}

int ReadDefenseCommands::RunCertificate(const CommandEnv& env) {
  const Flags& f = *flags_;
  const CertificateParams& p = f.certificate_params;
  auto p_hit = HitProbability(p, f.certificate_t);
  if (!p_hit.ok()) return FailCommand(env, p_hit.status());
  auto delta = CertificateDelta(p, f.certificate_t);
  if (!delta.ok()) return FailCommand(env, delta.status());
  if (env.json) {
    env.out << nlohmann::json{{"m", p.m},         {"k", p.k},        {"t", f.certificate_t},
                              {"nruns", p.nruns}, {"p_hit", *p_hit}, {"delta", *delta}}
                   .dump()
            << "\n";
  } else {
    env.out << "m=" << p.m << " k=" << p.k << " t=" << f.certificate_t << " nruns=" << p.nruns
            << "  p_hit=" << std::setprecision(6) << *p_hit << "  delta=" << std::setprecision(6) << *delta
            << "\n";
  }
  return 0;
}

// gate show | score | remove here; gate fit in FitGate.
int ReadDefenseCommands::RunGate(const CommandEnv& env) {
  Flags& f = *flags_;
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  auto gates = GateStore::Open(DatabasePath(env), env.store_options.keyring_path);
  if (!gates.ok()) return FailCommand(env, gates.status());

  if (f.gate_remove->parsed()) {
    if (auto s = (*gates)->Remove(env.name_space); !s.ok()) return FailCommand(env, s);
    env.out << (env.json ? nlohmann::json{{"namespace", env.name_space}, {"removed", true}}.dump()
                         : absl::StrCat("removed the query gate of namespace ", env.name_space))
            << "\n";
    return 0;
  }
  if (f.gate_show->parsed() || f.gate_score->parsed()) {
    auto gate = (*gates)->Load(env.name_space);
    if (!gate.ok()) return FailCommand(env, gate.status());
    if (!gate->has_value()) {
      return FailCommand(env, absl::NotFoundError(absl::StrCat("no query gate for namespace ", env.name_space,
                                                               " (fit one with `bulwark gate fit`)")));
    }
    const StoredGate& g = **gate;
    if (f.gate_show->parsed()) {
      nlohmann::json j = g.model->Summary();
      j["namespace"] = g.name_space;
      j["mode"] = ToString(g.mode);
      j["embedder"] = g.embedder;
      j["fitted_at_us"] = g.fitted_at_us;
      j["source"] = g.source;
      env.out << (env.json ? j.dump() : j.dump(2)) << "\n";
      return 0;
    }
    auto embedding = (*store)->embedder().Embed(f.gate_query);
    if (!embedding.ok()) return FailCommand(env, embedding.status());
    auto verdict = QueryGate(g.model, &(*store)->embedder()).Evaluate(f.gate_query, *embedding, g.mode);
    if (!verdict.ok()) return FailCommand(env, verdict.status());
    nlohmann::json j = ToJson(*verdict);
    if (verdict->decision == GateDecision::kStrip) j["query"] = verdict->cleaned_query;
    env.out << (env.json ? j.dump() : DescribeGate(*verdict)) << "\n";
    return 0;
  }

  return FitGate(env, **store, **gates);
}

int ReadDefenseCommands::FitGate(const CommandEnv& env, MemoryStore& store, GateStore& gates) {
  Flags& f = *flags_;
  // gate fit
  if (f.benign_file.empty() == (f.from_history == 0)) {
    return FailCommand(env, absl::InvalidArgumentError("give either --benign FILE or --from-history N"));
  }
  if (!f.triggered_file.empty() && !f.trigger.empty()) {
    return FailCommand(env, absl::InvalidArgumentError("give --triggered FILE or --trigger TEXT, not both"));
  }
  if (!f.trigger.empty() && f.benign_file.empty()) {
    return FailCommand(
        env, absl::InvalidArgumentError("--trigger needs --benign (recorded history keeps no query text)"));
  }
  const Embedder& embedder = store.embedder();
  nlohmann::json source = nlohmann::json::object();
  std::vector<std::string> benign_text, triggered_text;
  std::vector<std::vector<float>> benign, triggered;
  if (!f.benign_file.empty()) {
    auto read = ReadQueryFile(f.benign_file);
    if (!read.ok()) return FailCommand(env, read.status());
    benign_text = *std::move(read);
    auto embedded = embedder.EmbedBatch(benign_text);
    if (!embedded.ok()) return FailCommand(env, embedded.status());
    benign = *std::move(embedded);
    source["benign"] = absl::StrCat("file ", f.benign_file);
  } else {
    benign = store.impl().defenses->RecentQueries(env.name_space, static_cast<size_t>(f.from_history));
    source["benign"] = absl::StrCat("recent history (", benign.size(), " queries)");
  }
  if (!f.triggered_file.empty()) {
    auto read = ReadQueryFile(f.triggered_file);
    if (!read.ok()) return FailCommand(env, read.status());
    triggered_text = *std::move(read);
    source["triggered"] = absl::StrCat("file ", f.triggered_file);
  } else if (!f.trigger.empty()) {
    for (const std::string& q : benign_text) triggered_text.push_back(q + " " + f.trigger);
    source["triggered"] = "benign queries + --trigger";
  }
  if (!triggered_text.empty()) {
    auto embedded = embedder.EmbedBatch(triggered_text);
    if (!embedded.ok()) return FailCommand(env, embedded.status());
    triggered = *std::move(embedded);
  }
  if (!f.score_name.empty()) f.fit.decision_score = ParseGateScore(f.score_name);
  GateFitDiagnostics diagnostics;
  auto model = GateModel::Fit(benign, triggered, f.fit, &diagnostics);
  if (!model.ok()) return FailCommand(env, model.status());
  StoredGate gate;
  gate.name_space = env.name_space;
  gate.mode = *ParseGateMode(f.mode_name);
  gate.embedder = embedder.Fingerprint().ToString();
  gate.fitted_at_us = (env.store_options.env ? env.store_options.env : Env::Default())->NowMicros();
  gate.source = source;
  gate.model = std::make_shared<const GateModel>(*std::move(model));
  if (auto s = gates.Save(gate); !s.ok()) return FailCommand(env, s);

  std::optional<GateFitReport> report;
  if (f.report && !f.labelled_file.empty()) {
    std::vector<std::string> lb, lt;
    if (auto s = ReadLabelled(f.labelled_file, &lb, &lt); !s.ok()) return FailCommand(env, s);
    auto eb = embedder.EmbedBatch(lb);
    auto et = embedder.EmbedBatch(lt);
    if (!eb.ok()) return FailCommand(env, eb.status());
    if (!et.ok()) return FailCommand(env, et.status());
    report = EvaluateGate(*gate.model, *eb, *et);
  } else if (f.report) {
    report = MakeGateFitReport(*gate.model, diagnostics.benign, diagnostics.triggered, /*out_of_fold=*/true);
  }

  return PrintGateFit(env, gate, source, report, f.labelled_file);
}

int ReadDefenseCommands::RunSearch(const CommandEnv& env, const std::string& query,
                                   const SearchOptions& options) {
  Flags& f = *flags_;
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  auto gates = GateStore::Open(DatabasePath(env), env.store_options.keyring_path);
  if (!gates.ok()) return FailCommand(env, gates.status());
  GateRegistry registry(gates->get(), Env::Default(), /*ttl_ms=*/0);
  auto llm = MaybeLlm(f.llm_json);
  if (!llm.ok()) return FailCommand(env, llm.status());
  DefendedRetriever retriever(store->get(), &registry, llm->get());

  DefendedSearchRequest request;
  request.name_space = env.name_space;
  request.query = query;
  request.search = options;
  if (!f.gate_mode.empty()) request.gate_mode = ParseGateMode(f.gate_mode);
  request.may_weaken_gate = true;  // whoever holds the store's files is its operator
  request.k_high = f.k_high;
  if (f.smooth) request.smoothing = f.smoothing;
  request.responder = *ParseResponderKind(f.responder);  // --responder is checked by CLI11
  if (!f.seed_hex.empty()) {
    auto bytes = HexDecode(f.seed_hex);
    if (!bytes || bytes->size() != 32)
      return FailCommand(env, absl::InvalidArgumentError("--seed must be 64 hex digits"));
    SeededCsprng::Seed seed;
    std::copy(bytes->begin(), bytes->end(), seed.begin());
    request.seed = seed;
  }
  auto result = retriever.Search(request);
  if (!result.ok()) return FailCommand(env, result.status());
  if (result->rejected()) {
    if (env.json) env.out << nlohmann::json{{"gate", ToJson(result->gate)}}.dump() << "\n";
    return FailCommand(env, absl::PermissionDeniedError(absl::StrCat("the query gate rejected this query: ",
                                                                     DescribeGate(result->gate))));
  }

  if (env.json) {
    nlohmann::json j = {{"gate", ToJson(result->gate)},
                        {"k", result->k},
                        {"rejected_candidates", result->search.rejected_candidates}};
    if (result->gate.decision == GateDecision::kStrip) j["gate"]["query"] = result->retrieved_query;
    if (result->smoothed) {
      nlohmann::json smoothed = ToJson(*result->smoothed);
      if (f.answer->parsed()) {
        smoothed["gate"] = j["gate"];
        env.out << smoothed.dump() << "\n";
        return 0;
      }
      j["smoothed"] = smoothed;
    }
    nlohmann::json hits = nlohmann::json::array();
    for (const SearchHit& h : result->search.hits) {
      nlohmann::json hit = ToJson(h.entry);
      hit["score"] = h.score;
      hits.push_back(std::move(hit));
    }
    j["hits"] = hits;
    env.out << j.dump() << "\n";
    return 0;
  }
  if (!f.answer->parsed()) {
    if (result->search.hits.empty()) env.out << "no results\n";
    for (const SearchHit& h : result->search.hits) {
      env.out << std::fixed << std::setprecision(3) << h.score << "  " << h.entry.id << "  " << h.entry.text
              << "\n";
    }
  }
  if (result->gate.decision != GateDecision::kOff) env.out << "gate: " << DescribeGate(result->gate) << "\n";
  if (result->smoothed) PrintSmoothed(env.out, *result->smoothed);
  if (result->search.rejected_candidates > 0) {
    env.err << "warning: " << result->search.rejected_candidates
            << " candidate(s) failed signature verification and were withheld (run `bulwark verify`)\n";
  }
  return 0;
}

}  // namespace bulwark::cli
