// libFuzzer target for the injection grammar's text path (detect/text_normalizer.h and
// detect/validation_rules.h): any bytes are normalised and matched against the default rules.
// Checks the normaliser's bounds: the folded view is at most a few times the input (NFKC and
// case folding expand a code point to at most 18 bytes; tag characters decode to one byte), the
// counts are not negative, and matching returns rule indices inside rules(). Never a crash or a
// hang (RE2 is linear; the affirmed check looks at most 8 matches).
//
//   scripts/fuzz [SECONDS]
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "detect/text_normalizer.h"
#include "detect/validation_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<bulwark::ValidationRules> rules = [] {
    auto parsed = bulwark::ValidationRules::Default();
    if (!parsed.ok()) std::abort();
    return *std::move(parsed);
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bulwark::NormalizedText n = bulwark::NormalizeText(text);
  if (n.folded.size() > 18 * size + 16) std::abort();
  if (n.zero_width < 0 || n.bidi_controls < 0 || n.tag_characters < 0 || n.mixed_script_words < 0)
    std::abort();
  absl::InlinedVector<uint32_t, 4> hits;
  rules->Match(text, n, &hits);
  for (uint32_t i : hits) {
    if (i >= rules->rules().size()) std::abort();
  }
  return 0;
}
