// The extraction attack log: what `bulwark attack extraction -o log.jsonl` writes and what
// `bulwark honeypots fit --attack-log` reads (the attacker proxy's training data, MemPot App. A,
// research/mempot.md Sec. 4.5). One JSON object per line, one line per query, sessions in order
// and each session's steps consecutive from 1 (doc/attacks.md, "Extraction attacks"):
//   {"attack": "mextra_general", "session": "mextra_general-7-0", "step": 1,
//    "query": "...", "hits": ["01J...", ...], "refused": false}
// `hits` are the ids of the returned memories, best first (never their text: a log must not copy
// the memory it was taken from); `refused` marks a query the store refused. Readers ignore fields
// they do not know, so later versions may add fields.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "attack/extraction/extraction_session.h"

namespace bulwark::extraction {

// Limits the reader enforces.
inline constexpr size_t kMaxLogNameBytes = 128;  // attack and session
inline constexpr size_t kMaxLogQueryBytes = 64 << 10;
inline constexpr size_t kMaxLogHits = 1000;
inline constexpr size_t kMaxLogIdBytes = 64;
inline constexpr int kMaxLogStep = 1000000;

// Writes one line per step of `session`. Invalid UTF-8 in a query is replaced (U+FFFD). Errors:
// DataLoss if the stream fails.
[[nodiscard]] absl::Status WriteAttackLog(const AttackSession& session, std::ostream& out);

// Reads a log back into sessions, in the order their first lines appear; each step has its
// query, refused flag and hit ids (no texts, score 0). Errors: InvalidArgument naming the line for
// a line that is not a JSON object, a missing or mistyped field, an attack name that is not
// 1-128 of [a-z0-9_], a session id that is not 1-128 printable ASCII characters without spaces,
// a value over the limits above, or a step that does not follow the session's previous step.
[[nodiscard]] absl::StatusOr<std::vector<AttackSession>> ReadAttackLog(std::istream& in,
                                                                       std::string_view name = "attack log");
// The same from a file; NotFound if it cannot be read, ResourceExhausted over 256 MiB.
[[nodiscard]] absl::StatusOr<std::vector<AttackSession>> ReadAttackLogFile(const std::string& path);

}  // namespace bulwark::extraction
