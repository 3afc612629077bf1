// ReadBoundedFile: reads a whole regular file into memory after checking its size against a limit,
// so a model directory cannot make the loader allocate more than the caller allows.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>

namespace bulwark::bert {

// The contents of the regular file `path`. Errors: NotFound if it does not exist;
// FailedPrecondition if it is not a regular file or is larger than `max_bytes` (checked before
// allocating, and again while reading, in case the file grows); Unavailable for a read error.
[[nodiscard]] absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, uint64_t max_bytes);

}  // namespace bulwark::bert
