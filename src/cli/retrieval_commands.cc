// `bulwark retrieval show|set` (see retrieval_commands.h).
#include "cli/retrieval_commands.h"

#include <nlohmann/json.hpp>

#include "store/hybrid_ranking.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {

void RetrievalCommands::Register(CLI::App& app) {
  auto* group =
      app.add_subcommand("retrieval", "the namespace's ranking: vector or hybrid (lexical + vector)");
  group->require_subcommand(1);
  show_ = group->add_subcommand("show", "the namespace's ranking and where it comes from");
  set_ = group->add_subcommand("set", "store the namespace's ranking");
  set_->add_option("ranking", value_, "vector | hybrid")
      ->required()
      ->check(CLI::IsMember({"vector", "hybrid"}));
}

std::optional<int> RetrievalCommands::Run(const CommandEnv& env) {
  if (!show_->parsed() && !set_->parsed()) return std::nullopt;
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  RetrievalSettings& settings = *(*store)->impl().retrieval;
  if (set_->parsed()) {
    auto parsed = ParseRetrieval(value_);
    if (!parsed.ok()) return FailCommand(env, parsed.status());
    if (auto s = settings.Set(env.name_space, *parsed); !s.ok()) return FailCommand(env, s);
  }
  auto stored = settings.Stored(env.name_space);
  if (!stored.ok()) return FailCommand(env, stored.status());
  const Retrieval retrieval = stored->value_or(settings.default_retrieval());
  const char* source = stored->has_value() ? "namespace" : "default";
  if (env.json) {
    env.out << nlohmann::json{{"namespace", env.name_space},
                              {"retrieval", ToString(retrieval)},
                              {"source", source}}
                   .dump()
            << "\n";
  } else {
    env.out << env.name_space << ": " << ToString(retrieval) << " (" << source << ")\n";
  }
  return 0;
}

}  // namespace bulwark::cli
