// Markdown tables, JSON files and ROC SVGs of the eval commands.
#include "eval/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "eval/roc_svg.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::eval {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::HasSubstr;

TEST(MarkdownTable, AlignsColumnsAndEscapesPipes) {
  MarkdownTable table({"detector", "tpr"});
  table.AddRow({"memsad", "0.95"});
  table.AddRow({"a|b"});
  const std::string text = table.Render();
  std::istringstream lines(text);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], "| detector | tpr  |");
  EXPECT_EQ(rows[1], "|----------|------|");
  EXPECT_EQ(rows[2], "| memsad   | 0.95 |");
  EXPECT_EQ(rows[3], "| a\\|b     |      |");
  EXPECT_EQ(FormatWithInterval(0.5, {0.1871, 0.8129}), "0.500 [0.187, 0.813]");
}

TEST(WriteJsonFile, RoundTripsAndFailsOnUnwritablePath) {
  testing::TempDir dir;
  const auto path = dir / "sub" / "out.json";
  ASSERT_THAT(WriteJsonFile(path, {{"a", 1}}), IsOk());
  std::ifstream f(path);
  EXPECT_EQ(nlohmann::json::parse(f)["a"], 1);
  EXPECT_FALSE(WriteJsonFile(dir.path(), {{"a", 1}}).ok());  // a directory, not a file
}

// Checks that every opened element is closed in order (the SVG is well-formed enough for a
// browser or an XML parser) and returns the tag names seen.
std::vector<std::string> CheckBalanced(const std::string& svg) {
  std::vector<std::string> stack, names;
  const re2::RE2 tag(R"(<(/?)([a-zA-Z?][a-zA-Z0-9]*)[^>]*?(/?)>)");
  re2::StringPiece input(svg.data(), svg.size());
  std::string closing, name, self_closing;
  while (re2::RE2::FindAndConsume(&input, tag, &closing, &name, &self_closing)) {
    if (name == "?xml") continue;
    names.push_back(name);
    if (self_closing == "/") continue;
    if (closing == "/") {
      EXPECT_FALSE(stack.empty());
      if (stack.empty()) return names;
      EXPECT_EQ(stack.back(), name);
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
  }
  EXPECT_TRUE(stack.empty());
  return names;
}

TEST(RocSvg, OnePolylinePerCurveWithPointsInsideTheUnitSquare) {
  const std::vector<double> pos = {0.9, 0.8, 0.3}, neg = {0.5, 0.2, 0.1};
  std::vector<RocSeries> series = {{"memsad <a&b>", RocCurve(pos, neg), Auroc(pos, neg)},
                                   {"validation", RocCurve(neg, pos), Auroc(neg, pos)}};
  testing::TempDir dir;
  const auto path = dir / "plots" / (PlotFileName("roc detect") + ".svg");
  ASSERT_THAT(WriteRocSvg(path, "ROC & co", series), IsOk());
  std::ifstream f(path);
  const std::string svg((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("memsad &lt;a&amp;b&gt;"));
  const std::vector<std::string> names = CheckBalanced(svg);
  EXPECT_EQ(std::count(names.begin(), names.end(), "svg"), 2);  // open and close
  EXPECT_EQ(std::count(names.begin(), names.end(), "polyline"), 2);

  // Map every polyline vertex back from pixels to (fpr, tpr): all within [0, 1], first (0, 0),
  // last (1, 1), as many vertices as ROC points.
  const re2::RE2 points_attr(R"re(<polyline[^>]*points="([^"]*)")re");
  size_t curve = 0;
  re2::StringPiece rest(svg.data(), svg.size());
  for (std::string points; re2::RE2::FindAndConsume(&rest, points_attr, &points);) {
    std::istringstream in(points);
    std::vector<std::pair<double, double>> xy;
    for (std::string pair; in >> pair;) {
      const size_t comma = pair.find(',');
      ASSERT_NE(comma, std::string::npos);
      const double fpr = (std::stod(pair.substr(0, comma)) - 60) / 300;
      const double tpr = (340 - std::stod(pair.substr(comma + 1))) / 300;
      EXPECT_GE(fpr, -1e-9);
      EXPECT_LE(fpr, 1 + 1e-9);
      EXPECT_GE(tpr, -1e-9);
      EXPECT_LE(tpr, 1 + 1e-9);
      xy.push_back({fpr, tpr});
    }
    ASSERT_EQ(xy.size(), series[curve].points.size());
    EXPECT_NEAR(xy.front().first, 0, 1e-9);
    EXPECT_NEAR(xy.back().second, 1, 1e-9);
    ++curve;
  }
  EXPECT_EQ(curve, 2u);
  EXPECT_EQ(PlotFileName("a/b c"), "a_b_c");
}

}  // namespace
}  // namespace bulwark::eval
