// A memory entry and the events of its history: the values the store keeps and returns.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

// Who produced the text of an entry (DESIGN 4.1). `kSystem` is reserved for privileged writers.
enum class Source { kUser, kAgent, kTool, kSystem, kImport };

// Ordinary memories versus MemPot honeypots (never returned to callers).
enum class Kind { kMemory, kHoneypot };

// Lifecycle state. Only kActive entries are ever retrieved.
enum class State { kActive, kQuarantined, kDeleted, kPurged };

std::string_view ToString(Source source);
std::string_view ToString(Kind kind);
std::string_view ToString(State state);
// Parse the lowercase names above ("user", "agent", ...); nullopt for anything else.
std::optional<Source> ParseSource(std::string_view name);
std::optional<Kind> ParseKind(std::string_view name);
std::optional<State> ParseState(std::string_view name);

// A stored entry. `tag` is HMAC-SHA256 (32 raw bytes) under keyring key `key_id` over the
// canonical encoding of every other field (doc/entry_format.md).
struct Entry {
  std::string id;          // time-ordered, 26 Crockford base32 characters
  std::string name_space;  // hard partition; `namespace` is a C++ keyword
  std::string text;
  nlohmann::json metadata = nlohmann::json::object();  // always a JSON object
  std::string principal;                               // who wrote it
  Source source = Source::kUser;
  Kind kind = Kind::kMemory;
  State state = State::kActive;
  int64_t created_at_us = 0;
  int64_t updated_at_us = 0;
  std::vector<float> embedding;  // L2-normalized, the store's embedder dimension
  uint32_t key_id = 0;
  std::string tag;                                   // 32 raw bytes
  nlohmann::json report = nlohmann::json::object();  // write-time detector report
};

// What a caller supplies to add an entry. Everything else is assigned by the store.
struct NewEntry {
  std::string text;
  nlohmann::json metadata = nlohmann::json::object();
  Source source = Source::kUser;
  Kind kind = Kind::kMemory;
};

// Changes for Update; unset fields keep their value.
struct EntryUpdate {
  std::optional<std::string> text;
  std::optional<nlohmann::json> metadata;
};

// One append-only history event (add, update, quarantine, release, delete, purge).
struct HistoryEvent {
  int64_t seq = 0;  // store-wide, strictly increasing
  std::string entry_id;
  std::string name_space;
  std::string event;
  std::string actor;
  int64_t at_us = 0;
  nlohmann::json detail = nlohmann::json::object();  // e.g. {"text": ..., "metadata": ...}
  // Provenance, as for entries: tag = HMAC-SHA256(key[key_id], EventEncoding(event, key_id))
  // (doc/entry_format.md, "History events"); 32 raw bytes, empty if never signed.
  uint32_t key_id = 0;
  std::string tag;
  // Set by MemoryStore::History: false if the tag does not check, and then `detail` is withheld.
  bool verified = true;
};

// JSON renderings used by the CLI, export and (later) the HTTP API. The embedding and the raw tag
// are left out unless asked for.
nlohmann::json ToJson(const Entry& entry, bool with_embedding = false);
nlohmann::json ToJson(const HistoryEvent& event);

}  // namespace bulwark
