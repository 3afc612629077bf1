// Names and JSON renderings of entries and history events.
#include "bulwark/entry.h"

#include <array>

#include "core/hex.h"

namespace bulwark {
namespace {

constexpr std::array<std::string_view, 5> kSourceNames = {"user", "agent", "tool", "system", "import"};
constexpr std::array<std::string_view, 2> kKindNames = {"memory", "honeypot"};
constexpr std::array<std::string_view, 4> kStateNames = {"active", "quarantined", "deleted", "purged"};

template <typename E, size_t N>
std::optional<E> ParseName(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view ToString(Source source) { return kSourceNames[static_cast<size_t>(source)]; }
std::string_view ToString(Kind kind) { return kKindNames[static_cast<size_t>(kind)]; }
std::string_view ToString(State state) { return kStateNames[static_cast<size_t>(state)]; }
std::optional<Source> ParseSource(std::string_view name) { return ParseName<Source>(kSourceNames, name); }
std::optional<Kind> ParseKind(std::string_view name) { return ParseName<Kind>(kKindNames, name); }
std::optional<State> ParseState(std::string_view name) { return ParseName<State>(kStateNames, name); }

nlohmann::json ToJson(const Entry& entry, bool with_embedding) {
  // Member by member: an initializer list copies every value once more (this runs for every
  // search hit the service returns).
  nlohmann::json out(nlohmann::json::value_t::object);
  out["id"] = entry.id;
  out["namespace"] = entry.name_space;
  out["text"] = entry.text;
  out["metadata"] = entry.metadata;
  out["principal"] = entry.principal;
  out["source"] = ToString(entry.source);
  out["kind"] = ToString(entry.kind);
  out["state"] = ToString(entry.state);
  out["created_at_us"] = entry.created_at_us;
  out["updated_at_us"] = entry.updated_at_us;
  out["key_id"] = entry.key_id;
  if (!entry.report.empty()) out["report"] = entry.report;
  if (with_embedding) {
    out["embedding"] = entry.embedding;
    out["tag"] = HexEncode(entry.tag);
  }
  return out;
}

nlohmann::json ToJson(const HistoryEvent& event) {
  return {{"seq", event.seq},       {"entry_id", event.entry_id}, {"namespace", event.name_space},
          {"event", event.event},   {"actor", event.actor},       {"at_us", event.at_us},
          {"detail", event.detail}, {"verified", event.verified}};
}

}  // namespace bulwark
