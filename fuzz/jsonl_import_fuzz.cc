// libFuzzer target for the JSONL import format (`bulwark add --file`, src/cli/jsonl_import.h): any
// bytes either fail with InvalidArgument or give entries that respect every limit (non-empty UTF-8
// text within max_text_bytes, an object as metadata within max_metadata_bytes, at most max_entries).
//
//   scripts/fuzz [SECONDS]
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "cli/jsonl_import.h"
#include "core/text_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  const bulwark::cli::ImportLimits limits{
      .max_text_bytes = 256, .max_metadata_bytes = 256, .max_line_bytes = 1024, .max_entries = 16};
  auto entries = bulwark::cli::ParseImportJsonl(in, limits);
  if (!entries.ok()) {
    if (entries.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  if (entries->size() > limits.max_entries) std::abort();
  for (const bulwark::NewEntry& e : *entries) {
    if (!bulwark::ValidateText(e.text, limits.max_text_bytes).ok()) std::abort();
    if (!bulwark::ValidateMetadata(e.metadata, limits.max_metadata_bytes).ok()) std::abort();
  }
  return 0;
}
