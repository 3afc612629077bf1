// The read-defense subcommands (see read_defense_commands.h).
#include "cli/read_defense_commands.h"

#include <iomanip>
#include <ostream>

#include <nlohmann/json.hpp>

#include "smoothing/certificate.h"

namespace bulwark::cli {
namespace {

int Fail(const CommandEnv& env, const absl::Status& status) {
  env.err << "error: " << status.message() << "\n";
  return 1;
}

}  // namespace

struct ReadDefenseCommands::Flags {
  CLI::App* certificate = nullptr;
  CertificateParams certificate_params;
  int certificate_t = 1;
};

ReadDefenseCommands::ReadDefenseCommands() : flags_(std::make_unique<Flags>()) {}
ReadDefenseCommands::~ReadDefenseCommands() = default;

void ReadDefenseCommands::Register(CLI::App& app) {
  Flags& f = *flags_;
  f.certificate = app.add_subcommand(
      "certificate", "SMSR certificate: P[t adversarial entries win the smoothed majority]");
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
      "delta = P[Binomial(nruns, p_hit) >= ceil(nruns/2)], p_hit = 1 - C(m-t,k)/C(m,k); a tie counts as lost.");
}

std::optional<int> ReadDefenseCommands::Run(const CommandEnv& env) {
  Flags& f = *flags_;
  if (f.certificate->parsed()) {
    const CertificateParams& p = f.certificate_params;
    auto p_hit = HitProbability(p, f.certificate_t);
    if (!p_hit.ok()) return Fail(env, p_hit.status());
    auto delta = CertificateDelta(p, f.certificate_t);
    if (!delta.ok()) return Fail(env, delta.status());
    if (env.json) {
      env.out << nlohmann::json{{"m", p.m}, {"k", p.k}, {"t", f.certificate_t}, {"nruns", p.nruns},
                                {"p_hit", *p_hit}, {"delta", *delta}}
                     .dump()
              << "\n";
    } else {
      env.out << "m=" << p.m << " k=" << p.k << " t=" << f.certificate_t << " nruns=" << p.nruns
              << "  p_hit=" << std::setprecision(6) << *p_hit << "  delta=" << std::setprecision(6)
              << *delta << "\n";
    }
    return 0;
  }
  return std::nullopt;
}

}  // namespace bulwark::cli
