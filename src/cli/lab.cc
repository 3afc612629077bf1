#include "cli/lab.h"

#include "cli/attack_commands.h"
#include "cli/cli.h"
#include "cli/eval_commands.h"

namespace bulwark::cli {

int RunLab(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  AttackCommands attacks;
  EvalCommands evaluations;
  CommandGroup* const groups[] = {&attacks, &evaluations};
  return RunWithGroups(argc, argv, out, err, groups);
}

}  // namespace bulwark::cli
