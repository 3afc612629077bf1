// StoredReport (stored_report.h).
#include "storage/stored_report.h"

namespace bulwark {

const nlohmann::json& PassedReport() {
  static const nlohmann::json* const passed = new nlohmann::json{{"gate", {{"flagged", false}}}};
  return *passed;
}

nlohmann::json StoredReport(const nlohmann::json& report) {
  if (!report.is_object() || report.contains("quarantine")) return report;
  const auto gate = report.find("gate");
  if (gate == report.end() || !gate->is_object()) return report;
  const auto flagged = gate->find("flagged");
  if (flagged == gate->end() || !flagged->is_boolean() || flagged->get<bool>()) return report;
  for (const auto& [key, value] : report.items()) {
    if (key != "gate") return report;  // something besides the gate's verdict: kept
  }
  return PassedReport();
}

}  // namespace bulwark
