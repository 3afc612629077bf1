// What a backend stores of an entry's advisory write-time report (issue #12 point 3: the report was
// 0.8 KB of a 4.7 KB row). The report is not signed (doc/entry_format.md) and nothing reads an
// unflagged entry's detector details back: a write the gate passed (a report of the gate's verdict
// only, not flagged) keeps the verdict, PassedReport(); every report that holds something to act on
// -- the gate flagged the write, or it carries a quarantine -- is kept whole (the quarantine review
// shows its detectors). The entry returned by the write itself carries the whole report either way.
// (The SQLite backend stores PassedReport() as an empty column: sqlite_backend.cc.)
#pragma once

#include <nlohmann/json.hpp>

namespace bulwark {

// {"gate": {"flagged": false}}: what is kept of a passed write's report.
const nlohmann::json& PassedReport();
// The report as it is stored: `report` itself, or PassedReport() for a passed write.
nlohmann::json StoredReport(const nlohmann::json& report);

}  // namespace bulwark
