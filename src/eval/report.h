// Output of the `bulwark-lab eval` commands: markdown tables for the terminal and the JSON file
// written with --json FILE. Numbers are formatted here so every command's tables look alike.
#pragma once

#include <absl/status/status.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/binomial.h"

namespace bulwark::eval {

// A GitHub-flavoured markdown table. Cells are text; '|' and newlines in a cell are escaped.
class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<std::string> headers) : headers_(std::move(headers)) {}

  // Adds a row; a row with fewer cells than headers is padded with empty cells, extra cells are
  // dropped.
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }
  // "| h1 | h2 |\n|---|---|\n| a | b |\n" with columns padded to equal width.
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// x with `digits` decimals ("-" for NaN).
std::string FormatNumber(double x, int digits = 3);
// v with `digits` decimals ("-" when absent, NaN or infinite: a metric that has no value).
std::string FormatOptional(const std::optional<double>& v, int digits = 3);
// "0.500 [0.187, 0.813]"
std::string FormatWithInterval(double x, const Interval& ci, int digits = 3);

// Writes `json` pretty-printed (indent 2) to `path`, creating parent directories.
// Unavailable when the file cannot be written.
[[nodiscard]] absl::Status WriteJsonFile(const std::filesystem::path& path, const nlohmann::json& json);

}  // namespace bulwark::eval
