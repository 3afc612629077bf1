// The input files of `bulwark-lab eval sessions` (issue #13 point 6; doc/eval.md "eval sessions"):
//
// Sessions file: one JSON object per line,
//   {"session": "s-17", "label": "benign" | "attack", "style": "casual", "queries": ["...", ...]}
// "session" (1-256 bytes of UTF-8, unique in the file), "label" and "queries" (a non-empty array
// of queries, each valid as a search query: non-blank UTF-8 of at most 16 KiB) are required;
// "style" is optional (any non-empty string of at most 256 bytes; "unspecified" when absent).
// Fields the reader does not know are ignored, so files written for other tools load.
//
// Memories file: one memory per line, either a JSON object with a non-empty string "text" (and
// optionally a "metadata" object; other fields, e.g. "source", are ignored): the format of
// `bulwark add --file` and `eval retrieval`), or, for a line that does not start with "{", the
// line itself as the text.
//
// Blank lines are skipped. Every error names the line ("line 7: ..."); nothing is returned on
// error. Sizes are bounded before anything is kept (SessionLimits, MemoryLimits).
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/entry.h"

namespace bulwark::eval {

enum class SessionLabel { kBenign, kAttack };
std::string_view ToString(SessionLabel label);  // "benign" | "attack"

struct LabelledSession {
  std::string session;  // the session id (X-Bulwark-Session)
  SessionLabel label = SessionLabel::kBenign;
  std::string style = "unspecified";
  std::vector<std::string> queries;  // in the order they are sent
  size_t line = 0;                   // 1-based line of the file
};

struct SessionLimits {
  size_t max_line_bytes = 4 << 20;
  size_t max_sessions = 20'000;
  size_t max_queries_per_session = 1'000;
  size_t max_total_queries = 500'000;
  size_t max_query_bytes = 16 * 1024;  // the store's default max_text_bytes
  size_t max_name_bytes = 256;         // session id and style
};

// Parses a sessions file. InvalidArgument naming the line for: a line over the limit, a line that
// is not a JSON object, a missing or mistyped field, an empty or over-long session id or style, a
// session id seen on an earlier line (named), a label other than "benign" or "attack", an empty
// "queries" array, a query that is not a valid search query (its 1-based index named), more
// queries in a session or in the file than the limits, more sessions than the limit; and for a
// file with no session at all.
[[nodiscard]] absl::StatusOr<std::vector<LabelledSession>> ParseSessionFile(std::istream& in,
                                                                            const SessionLimits& limits = {});

struct MemoryLimits {
  size_t max_line_bytes = 1 << 20;
  size_t max_memories = 100'000;
  size_t max_text_bytes = 16 * 1024;
  size_t max_metadata_bytes = 16 * 1024;
};

// Parses a memories file (JSONL with "text", or plain lines). InvalidArgument naming the line for
// a line over the limit, a JSON line that is not an object or has no non-empty string "text", a
// text that is not valid entry text (blank, over the limit, bad UTF-8), a "metadata" that is not
// an object or is over the limit, more memories than the limit; and for a file with no memory.
[[nodiscard]] absl::StatusOr<std::vector<NewEntry>> ParseMemoryFile(std::istream& in,
                                                                    const MemoryLimits& limits = {});

}  // namespace bulwark::eval
