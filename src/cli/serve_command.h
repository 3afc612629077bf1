// `bulwark serve [--host H] [--port P] [--threads N] ... [--llm JSON] [--honeypot-mode M]`: runs the
// HTTP JSON service (doc/api.md) until SIGINT/SIGTERM; creates the store and prints a first admin
// key on first start. Its flags fill server::ServeOptions (server/serve.h).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/command_env.h"
#include "server/serve.h"

namespace bulwark::cli {

class ServeCommand : public CommandGroup {
 public:
  void Register(CLI::App& app) override;
  // The service's exit code when `serve` was parsed (after it stops); nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env) override;

 private:
  CLI::App* serve_ = nullptr;
  server::ServeOptions options_;
  std::string llm_json_;
};

}  // namespace bulwark::cli
