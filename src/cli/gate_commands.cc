#include "cli/gate_commands.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli/jsonl_import.h"
#include "cli/query_file.h"
#include "detect/detector_registry.h"
#include "detect/watermark_marker.h"
#include "detect/write_gate.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {
namespace {

int Fail(std::ostream& err, const absl::Status& status) {
  err << "error: " << status.message() << "\n";
  return 1;
}

// Each registered detector's calibration, as its calibration hook describes it.
void PrintCalibration(std::ostream& out, const std::string& ns, const nlohmann::json& c) {
  out << "namespace " << ns << " calibrated\n";
  for (const DetectorDescriptor* d : DetectorRegistry::Global().All()) {
    if (!d->calibration || !d->calibration->describe || !c.contains(d->name) || c[d->name].is_null())
      continue;
    out << d->calibration->describe(c[d->name]);
  }
  out << "  target FPR " << c["target_fpr"].get<double>()
      << "; on the reference set: " << c["provenance"]["reference_fpr"].dump() << "\n";
  if (const auto& composite = c["provenance"]["composite"]; composite.is_object()) {
    out << "  composite (OR, without watermark): " << composite["flagged"].dump() << " of "
        << composite["reference_count"].dump()
        << " reference entries flagged, expected FPR <= " << composite["upper_95"].dump()
        << " (95% Clopper-Pearson)"
        << (composite["meets_target"].get<bool>()
                ? ""
                : "; the target is NOT met: detectors without calibration flag more")
        << "\n";
  }
  out << "  queries: " << c["provenance"]["queries"].dump()
      << "\n  reference: " << c["provenance"]["reference"].dump() << "\n";
}

}  // namespace

int RunCalibrate(MemoryStore& store, const std::string& name_space, const CalibrateFlags& flags, bool json,
                 std::ostream& out, std::ostream& err) {
  CalibrationRequest request;
  request.trigger = flags.trigger;
  request.from_store = flags.from_store;
  request.target_fpr = flags.target_fpr;
  request.kappa = flags.kappa;
  if (!flags.queries_file.empty()) {
    auto queries = ReadQueryFile(flags.queries_file);
    if (!queries.ok()) return Fail(err, queries.status());
    request.queries = *std::move(queries);
  }
  if (!flags.reference_file.empty()) {
    std::ifstream in(flags.reference_file);
    if (!in) return Fail(err, absl::NotFoundError(absl::StrCat("cannot read ", flags.reference_file)));
    auto entries = ParseImportJsonl(in, ImportLimits{});
    if (!entries.ok()) return Fail(err, entries.status());
    for (auto& e : *entries) request.reference.push_back(std::move(e.text));
  }
  auto summary = store.Calibrate(name_space, request);
  if (!summary.ok()) return Fail(err, summary.status());
  if (json) {
    out << summary->dump() << "\n";
  } else {
    PrintCalibration(out, name_space, *summary);
  }
  return 0;
}

int RunQuarantine(MemoryStore& store, const std::string& name_space, const std::string& action,
                  const std::string& id, const std::string& actor, bool json, std::ostream& out,
                  std::ostream& err) {
  if (action == "list") {
    auto entries = store.ListQuarantined(name_space);
    if (!entries.ok()) return Fail(err, entries.status());
    if (json) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& e : *entries) all.push_back(ToJson(e));
      out << all.dump() << "\n";
      return 0;
    }
    if (entries->empty()) out << "no quarantined entries in " << name_space << "\n";
    for (const auto& e : *entries) {
      out << e.id << "  " << e.text.substr(0, 80) << (e.text.size() > 80 ? "..." : "") << "\n";
      const auto reasons =
          e.report.value("quarantine", nlohmann::json::object()).value("reasons", nlohmann::json::array());
      for (const auto& r : reasons)
        out << "    - " << (r.is_string() ? r.get<std::string>() : r.dump()) << "\n";
    }
    return 0;
  }
  absl::Status status =
      action == "release" ? store.Release(name_space, id, actor) : store.Reject(name_space, id, actor);
  if (!status.ok()) return Fail(err, status);
  const char* done = action == "release" ? "released" : "rejected";
  if (json) {
    out << nlohmann::json{{"id", id}, {"result", done}}.dump() << "\n";
  } else {
    out << done << " " << id << "\n";
  }
  return 0;
}

int RunWatermark(MemoryStore& store, const std::string& action, const std::string& text_arg, double z_target,
                 bool json, std::ostream& out, std::ostream& err) {
  std::string text = text_arg;
  if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  const WriteGate& gate = store.impl().defenses->gate();
  const double threshold = gate.watermark_options().z_threshold;
  if (action == "check") {
    const WatermarkScore s = gate.watermark().Score(text);
    const bool ok = WatermarkScheme::Verifies(s, threshold);
    if (json) {
      out << nlohmann::json{{"z", s.z},
                            {"p_value", s.p_value},
                            {"n", s.n},
                            {"green", s.green},
                            {"threshold", threshold},
                            {"verifies", ok},
                            {"scheme", gate.watermark().name()}}
                 .dump()
          << "\n";
    } else {
      out << absl::StrFormat("z = %.3f (%d of %d %s green, p = %.3g); %s (threshold %.2f)\n", s.z, s.green,
                             s.n, gate.watermark().unit(), s.p_value, ok ? "verifies" : "does not verify",
                             threshold);
    }
    return ok ? 0 : 1;
  }
  const double target = std::max(z_target, threshold);
  const MarkedText marked = MarkText(text, gate.watermark(), target);
  if (json) {
    nlohmann::json edits = nlohmann::json::array();
    for (const auto& e : marked.edits)
      edits.push_back({{"offset", e.offset}, {"before", e.before}, {"after", e.after}});
    out << nlohmann::json{{"text", marked.text},
                          {"edits", edits},
                          {"z_before", marked.before.z},
                          {"z_after", marked.after.z},
                          {"z_best", marked.best.z},
                          {"groups", marked.sites},
                          {"verifies", marked.reached_target},
                          {"scheme", gate.watermark().name()}}
               .dump()
        << "\n";
  } else {
    out << marked.text << "\n";
    for (const auto& e : marked.edits) err << "  - " << e.before << "\n  + " << e.after << "\n";
    err << absl::StrFormat("z %.3f -> %.3f with %d substitution(s)\n", marked.before.z, marked.after.z,
                           marked.edits.size());
  }
  if (!marked.reached_target) {
    if (gate.watermark().kind() == WatermarkKind::kCharacter) {
      return Fail(
          err, absl::FailedPreconditionError(absl::StrFormat(
                   "not enough substitutable words to reach z >= %.2f under this key: the text has %d "
                   "substitution site(s) (contractions, spelling variants, times, dates, ...), and the best "
                   "z the character-level marker found by rewriting them was %.3f; the text was left "
                   "unchanged (see doc/write_gate.md)",
                   target, marked.sites, marked.best.z)));
    }
    if (!WatermarkScheme::Verifies(marked.best, target)) {
      return Fail(err,
                  absl::FailedPreconditionError(absl::StrFormat(
                      "not enough substitutable words to reach z >= %.2f: the text has %d substitution "
                      "site(s) (contractions, spelling variants, times, dates, ...), and with all of them "
                      "marked z would be %.3f; the text was left unchanged. Longer texts can be marked "
                      "(see doc/write_gate.md)",
                      target, marked.sites, marked.best.z)));
    }
    return Fail(err, absl::InternalError(
                         absl::StrFormat("could not watermark this text: z reached %.3f of the %.2f needed",
                                         marked.after.z, target)));
  }
  return 0;
}

void GateCommands::Register(CLI::App& app) {
  CalibrateFlags& cf = calibrate_flags_;
  calibrate_ = app.add_subcommand("calibrate", "calibrate the write gate's detectors for a namespace");
  calibrate_->add_option(
      "--queries", cf.queries_file,
      "calibration queries (lines, or JSONL with \"query\"); they become the namespace's query "
      "history (default: the history its searches built)");
  auto* ref_opt =
      calibrate_->add_option("--reference", cf.reference_file, "benign reference entries (import JSONL)");
  calibrate_->add_option("--from-store", cf.from_store, "use the N newest active entries as the reference")
      ->capture_default_str()
      ->excludes(ref_opt)
      ->check(CLI::Range(2, 1'000'000));
  calibrate_->add_option("--trigger", cf.trigger,
                         "suspected trigger appended to every query (triggered calibration)");
  calibrate_
      ->add_option("--target-fpr", cf.target_fpr,
                   "false-positive rate on the reference set for the "
                   "embedder-dependent thresholds (default from gate.json: 0.01)")
      ->check(CLI::Range(0.0, 0.999));
  calibrate_->add_option("--kappa", cf.kappa, "memsad threshold mu + kappa*sigma (default 2.0)")
      ->check(CLI::PositiveNumber);

  quarantine_ = app.add_subcommand("quarantine", "review entries the write gate quarantined");
  quarantine_->require_subcommand(1);
  quarantine_list_ = quarantine_->add_subcommand("list", "list quarantined entries with their reasons");
  quarantine_release_ =
      quarantine_->add_subcommand("release", "make a quarantined entry retrievable (history kept)");
  quarantine_release_->add_option("id", id_)->required();
  auto* reject = quarantine_->add_subcommand("reject", "reject a quarantined entry (it becomes deleted)");
  reject->add_option("id", id_)->required();

  watermark_ = app.add_subcommand(
      "watermark", "mark text so it passes the watermark detector (gate.json watermark.scheme), or check it");
  watermark_->require_subcommand(1);
  watermark_mark_ = watermark_->add_subcommand(
      "mark",
      "print the marked text (stdout) and every substitution made (stderr); exit 1 if it cannot verify");
  watermark_mark_->add_option("text", watermark_text_, "the text, or - for stdin")->required();
  watermark_mark_->add_option("--z-target", z_target_, "z-score to reach (at least the detector's threshold)")
      ->capture_default_str();
  auto* check = watermark_->add_subcommand("check", "exit 0 if the text verifies");
  check->add_option("text", watermark_text_, "the text, or - for stdin")->required();
}

std::optional<int> GateCommands::Run(const CommandEnv& env) {
  if (!calibrate_->parsed() && !quarantine_->parsed() && !watermark_->parsed()) return std::nullopt;
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return Fail(env.err, store.status());
  if (calibrate_->parsed()) {
    return RunCalibrate(**store, env.name_space, calibrate_flags_, env.json, env.out, env.err);
  }
  if (quarantine_->parsed()) {
    const std::string action = quarantine_list_->parsed()      ? "list"
                               : quarantine_release_->parsed() ? "release"
                                                               : "reject";
    return RunQuarantine(**store, env.name_space, action, id_, env.principal, env.json, env.out, env.err);
  }
  return RunWatermark(**store, watermark_mark_->parsed() ? "mark" : "check", watermark_text_, z_target_,
                      env.json, env.out, env.err);
}

}  // namespace bulwark::cli
