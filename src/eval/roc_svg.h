// ROC curves as a standalone SVG file (`bulwark-lab eval ... --plots DIR`): axes from 0 to 1 (FPR
// across, TPR up), the chance diagonal, one <polyline> per curve and a legend with each curve's
// label and AUROC. No external library: the file is plain SVG 1.1 text.
#pragma once

#include <absl/status/status.h>

#include <filesystem>
#include <string>
#include <vector>

#include "eval/roc.h"

namespace bulwark::eval {

struct RocSeries {
  std::string label;             // legend text, e.g. "memsad"
  std::vector<RocPoint> points;  // from RocCurve
  double auroc = 0.5;            // shown in the legend
};

// The SVG document (UTF-8 text, starts with "<?xml"). Labels and the title are XML-escaped.
std::string RenderRocSvg(const std::string& title, const std::vector<RocSeries>& series);

// Writes RenderRocSvg to `path`, creating parent directories. Unavailable if it cannot write.
[[nodiscard]] absl::Status WriteRocSvg(const std::filesystem::path& path, const std::string& title,
                                       const std::vector<RocSeries>& series);

// A file name made from `name`: letters, digits, '-' and '_' kept, anything else becomes '_'.
std::string PlotFileName(const std::string& name);

}  // namespace bulwark::eval
