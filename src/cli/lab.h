// The `bulwark-lab` command line: every `bulwark` command plus the red team's `attack ...` and the
// evaluation experiments `eval ...`. A separate binary so that the product binary that runs
// `serve` links no attack or evaluation code (DESIGN 3). tools/bulwark_lab.cc is a thin main.
#pragma once

#include <iosfwd>

namespace bulwark::cli {

// cli::Run's contract, with `attack` and `eval` registered.
int RunLab(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace bulwark::cli
