// The `bulwark` command line (store, serve, admin, calibrate, verify). tools/bulwark.cc is a thin
// main around Run so tests can drive the CLI in-process; the red team's `bulwark-lab` adds its
// command groups (cli/lab.h).
#pragma once

#include <iosfwd>
#include <span>

namespace bulwark::cli {

class CommandGroup;

// Parses arguments and runs one subcommand. Returns the process exit code: 0 on success, 1 when
// the command failed (error on `err`) or `verify` found bad rows, 2 for usage errors.
int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
// The same with more command groups registered beside the built-in ones (RunLab: attack, eval).
int RunWithGroups(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                  std::span<CommandGroup* const> groups);

}  // namespace bulwark::cli
