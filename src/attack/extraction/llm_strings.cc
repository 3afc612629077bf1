// AskForStrings (see llm_strings.h).
#include "attack/extraction/llm_strings.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark::extraction {

absl::StatusOr<std::vector<std::string>> AskForStrings(const ChatClient& llm, std::string system,
                                                       std::string user, std::string_view field,
                                                       size_t max_items) {
  absl::StatusOr<nlohmann::json> reply =
      llm.CompleteJson({{"system", std::move(system)}, {"user", std::move(user)}});
  BULWARK_RETURN_IF_ERROR(reply.status());
  const std::string key(field);
  if (!reply->contains(key) || !(*reply)[key].is_array()) {
    return absl::DataLossError(absl::StrCat("LLM reply has no array \"", key, "\""));
  }
  std::vector<std::string> out;
  for (const nlohmann::json& item : (*reply)[key]) {
    if (out.size() >= max_items) break;
    if (!item.is_string()) continue;
    std::string text(ToStd(absl::StripAsciiWhitespace(item.get_ref<const std::string&>())));
    if (text.empty() || text.size() > kMaxLlmStringBytes) continue;
    out.push_back(std::move(text));
  }
  if (out.empty())
    return absl::DataLossError(absl::StrCat("LLM reply has no usable string in \"", key, "\""));
  return out;
}

}  // namespace bulwark::extraction
