// Test helper: runs the `bulwark-lab` CLI (attack, eval and every `bulwark` command) in-process.
#pragma once

#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "cli/lab.h"

namespace bulwark::cli {

// `bulwark-lab --store <store_dir> ARGS...`, with stdout and stderr captured.
inline CliResult RunLabCli(const std::filesystem::path& store_dir, const std::vector<std::string>& args) {
  return RunCliWith(&RunLab, store_dir, args);
}

}  // namespace bulwark::cli
