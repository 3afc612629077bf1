// SVG rendering of ROC curves (see roc_svg.h).
#include "eval/roc_svg.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace bulwark::eval {
namespace {

constexpr double kWidth = 480, kHeight = 400;
constexpr double kLeft = 60, kTop = 40, kPlot = 300;  // square plot area, pixels
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Px(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << v;
  return s.str();
}

double X(double fpr) { return kLeft + std::clamp(fpr, 0.0, 1.0) * kPlot; }
double Y(double tpr) { return kTop + kPlot - std::clamp(tpr, 0.0, 1.0) * kPlot; }

}  // namespace

std::string RenderRocSvg(const std::string& title, const std::vector<RocSeries>& series) {
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << kWidth << "\" height=\""
      << kHeight << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<title>" << XmlEscape(title) << "</title>\n"
      << "<rect x=\"0\" y=\"0\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"14\">" << XmlEscape(title) << "</text>\n"
      << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << kPlot << "\" height=\"" << kPlot
      << "\" fill=\"none\" stroke=\"black\"/>\n"
      << "<line x1=\"" << Px(X(0)) << "\" y1=\"" << Px(Y(0)) << "\" x2=\"" << Px(X(1)) << "\" y2=\""
      << Px(Y(1)) << "\" stroke=\"#bbbbbb\" stroke-dasharray=\"4 4\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double v = i / 4.0;
    svg << "<text x=\"" << Px(X(v)) << "\" y=\"" << Px(kTop + kPlot + 16) << "\" text-anchor=\"middle\">"
        << Px(v) << "</text>\n"
        << "<text x=\"" << Px(kLeft - 6) << "\" y=\"" << Px(Y(v) + 4) << "\" text-anchor=\"end\">" << Px(v)
        << "</text>\n";
  }
  svg << "<text x=\"" << Px(kLeft + kPlot / 2) << "\" y=\"" << Px(kTop + kPlot + 34)
      << "\" text-anchor=\"middle\">false-positive rate</text>\n"
      << "<text x=\"16\" y=\"" << Px(kTop + kPlot / 2)
      << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " << Px(kTop + kPlot / 2)
      << ")\">true-positive rate</text>\n";
  for (size_t s = 0; s < series.size(); ++s) {
    const char* color = kColors[s % std::size(kColors)];
    svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" data-label=\""
        << XmlEscape(series[s].label) << "\" points=\"";
    for (size_t i = 0; i < series[s].points.size(); ++i) {
      svg << (i ? " " : "") << Px(X(series[s].points[i].fpr)) << "," << Px(Y(series[s].points[i].tpr));
    }
    svg << "\"/>\n";
    const double ly = kTop + 14 + 16 * static_cast<double>(s);
    svg << "<line x1=\"" << Px(kLeft + kPlot + 10) << "\" y1=\"" << Px(ly - 4) << "\" x2=\""
        << Px(kLeft + kPlot + 24) << "\" y2=\"" << Px(ly - 4) << "\" stroke=\"" << color
        << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << Px(kLeft + kPlot + 28) << "\" y=\"" << Px(ly) << "\">"
        << XmlEscape(series[s].label) << " (" << Px(series[s].auroc) << ")</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

absl::Status WriteRocSvg(const std::filesystem::path& path, const std::string& title,
                         const std::vector<RocSeries>& series) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream f(path);
  if (!f) return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  f << RenderRocSvg(title, series);
  f.close();
  if (!f) return absl::UnavailableError(absl::StrCat("error writing ", path.string()));
  return absl::OkStatus();
}

std::string PlotFileName(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out += keep ? c : '_';
  }
  return out.empty() ? "plot" : out;
}

}  // namespace bulwark::eval
