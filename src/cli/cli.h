// The `bulwark` command line. tools/bulwark.cc is a thin main around Run so tests can drive the
// CLI in-process.
#pragma once

#include <iosfwd>

namespace bulwark::cli {

// Parses arguments and runs one subcommand. Returns the process exit code: 0 on success, 1 when
// the command failed (error on `err`) or `verify` found bad rows, 2 for usage errors.
int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace bulwark::cli
