// Parses the import format: one JSON object per line,
//   {"text": "...", "metadata": {...}, "source": "user|agent|tool|system|import"}
// "text" is required; "metadata" (default {}) and "source" (default "import") are optional; any
// other field is an error. Blank lines are skipped. The whole file is rejected on the first bad
// line, and the error names it ("line 7: text is empty").
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <istream>
#include <vector>

#include "bulwark/entry.h"

namespace bulwark::cli {

struct ImportLimits {
  size_t max_text_bytes = 16 * 1024;
  size_t max_metadata_bytes = 16 * 1024;
  size_t max_line_bytes = 1 << 20;
  size_t max_entries = 100'000;
};

[[nodiscard]] absl::StatusOr<std::vector<NewEntry>> ParseImportJsonl(std::istream& in,
                                                                     const ImportLimits& limits);

}  // namespace bulwark::cli
