// Markdown tables and JSON files of the eval commands (see report.h).
#include "eval/report.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace bulwark::eval {
namespace {

std::string EscapeCell(const std::string& cell) {
  std::string out;
  for (char c : cell) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void MarkdownTable::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string MarkdownTable::Render() const {
  std::vector<std::vector<std::string>> all;
  all.reserve(rows_.size() + 1);
  all.push_back(headers_);
  for (const auto& row : rows_) all.push_back(row);
  for (auto& row : all) {
    for (auto& cell : row) cell = EscapeCell(cell);
  }
  std::vector<size_t> width(headers_.size(), 3);
  for (const auto& row : all) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream out;
  const auto emit = [&](const std::vector<std::string>& row) {
    out << "|";
    for (size_t c = 0; c < row.size(); ++c)
      out << " " << row[c] << std::string(width[c] - row[c].size(), ' ') << " |";
    out << "\n";
  };
  emit(all[0]);
  out << "|";
  for (size_t c = 0; c < headers_.size(); ++c) out << std::string(width[c] + 2, '-') << "|";
  out << "\n";
  for (size_t r = 1; r < all.size(); ++r) emit(all[r]);
  return out.str();
}

std::string FormatNumber(double x, int digits) {
  if (std::isnan(x)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << x;
  return s.str();
}

std::string FormatOptional(const std::optional<double>& v, int digits) {
  return v && std::isfinite(*v) ? FormatNumber(*v, digits) : "-";
}

std::string FormatWithInterval(double x, const Interval& ci, int digits) {
  return absl::StrCat(FormatNumber(x, digits), " [", FormatNumber(ci.lo, digits), ", ",
                      FormatNumber(ci.hi, digits), "]");
}

absl::Status WriteJsonFile(const std::filesystem::path& path, const nlohmann::json& json) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream f(path);
  if (!f) return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  f << json.dump(2) << "\n";
  f.close();
  if (!f) return absl::UnavailableError(absl::StrCat("error writing ", path.string()));
  return absl::OkStatus();
}

}  // namespace bulwark::eval
