// CLI commands of the write gate (DESIGN 4.5): `bulwark calibrate`, `bulwark quarantine
// list|release|reject` and `bulwark watermark mark|check`. Each runs against an open store and
// returns the process exit code (0 ok, 1 failure), printing text or, with `json`, JSON.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "store/memory_store.h"

namespace bulwark::cli {

struct CalibrateFlags {
  std::string queries_file;    // one query per line, or JSONL objects with "query"
  std::string reference_file;  // import JSONL (text per line object)
  size_t from_store = 50;
  std::string trigger;
  std::optional<double> target_fpr;
  std::optional<double> kappa;
};

int RunCalibrate(MemoryStore& store, const std::string& name_space, const CalibrateFlags& flags, bool json,
                 std::ostream& out, std::ostream& err);

// action: list | release | reject | show
int RunQuarantine(MemoryStore& store, const std::string& name_space, const std::string& action,
                  const std::string& id, const std::string& actor, bool json, std::ostream& out,
                  std::ostream& err);

// action: mark | check. `text` is the text itself (or read from stdin when "-").
int RunWatermark(MemoryStore& store, const std::string& action, const std::string& text, double z_target,
                 bool json, std::ostream& out, std::ostream& err);

}  // namespace bulwark::cli
