// Test helper: runs the `bulwark` CLI (or `bulwark-lab`: lab_test_util.h) in-process against a
// store in a temporary directory.
#pragma once

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "testing/temp_dir.h"

namespace bulwark::cli {

struct CliResult {
  int code;
  std::string out;
  std::string err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

using CliMain = int (*)(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// `<main> --store <store_dir> ARGS...`, with stdout and stderr captured.
inline CliResult RunCliWith(CliMain main, const std::filesystem::path& store_dir,
                            const std::vector<std::string>& args) {
  std::vector<std::string> full = {"bulwark", "--store", store_dir.string()};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : full) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int code = main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

// `bulwark --store <store_dir> ARGS...`.
inline CliResult RunCli(const std::filesystem::path& store_dir, const std::vector<std::string>& args) {
  return RunCliWith(&Run, store_dir, args);
}

}  // namespace bulwark::cli
