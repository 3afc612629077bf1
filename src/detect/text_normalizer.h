// Text normalisation for the injection grammar (issue #14, point 1): the `validation` detector's
// rules are matched against what a reader (human or model) takes the text to say, not against its
// bytes. Tricks that change the bytes but not the reading are undone here:
//
//   - compatibility forms and case: NFKC with case folding (ICU NFKC_Casefold: fullwidth letters,
//     mathematical alphanumerics, ligatures, upper case);
//   - Latin look-alikes from Cyrillic and Greek (a small confusable skeleton: "Іgnоrе" -> "ignore");
//   - invisible characters: zero-width characters, bidi controls and Unicode tag characters are
//     removed (tag characters U+E0020-E007E are also decoded to ASCII and appended, since they
//     carry a hidden message); their presence is COUNTED so the detector reports hidden_text;
//   - spacing and punctuation tricks: runs of single letters ("i g n o r e", "i.g.n.o.r.e") are
//     joined; letters mixed with digits are read as leetspeak ("1gn0r3" -> "ignore"); defanged URLs
//     ("hxxps://x[.]example") are refanged; base64 runs that decode to printable text are decoded
//     and appended.
//
// Two views come out: `folded` (the first three steps; safe to match every rule against) and
// `deobfuscated` (folded plus the last step's guesses; may change innocent tokens such as "3pm",
// so rules that need exact tokens should be matched against `folded`). Work is linear in the input
// and bounded: at most `max_input_bytes` are read (the rest is dropped and `truncated` set), and
// every output is at most a small constant times the input.
#pragma once

#include <absl/functional/function_ref.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace bulwark {

struct NormalizerOptions {
  size_t max_input_bytes = 256 * 1024;  // bytes read; a write's text is far smaller (ImportLimits)
  size_t min_spaced_run = 4;            // single letters in a row before they are joined
  size_t min_base64_run = 24;           // base64 characters in a row before a decode is tried
  // All-ASCII text is folded without ICU (same result, a fraction of the cost); false forces the
  // ICU path, for the test that proves the two equal.
  bool ascii_fast_path = true;
  // On that path, text that no deobfuscation step would change (no spaced letters, no token of
  // letters and digits, no long base64 run, nothing defanged; text_normalizer.cc) is copied to
  // `deobfuscated` without running the steps; false runs them, for the test that proves it equal.
  bool deobfuscation_shortcut = true;
};

struct NormalizedText {
  std::string folded;          // NFKC_Casefold + confusables, invisible characters removed
  std::string deobfuscated;    // folded + spacing, leetspeak, defanging and base64 undone
  int zero_width = 0;          // zero-width characters next to ASCII text (not emoji ZWJ sequences)
  int bidi_controls = 0;       // embedding, override and isolate controls (U+202A-202E, U+2066-2069)
  int tag_characters = 0;      // Unicode tag characters (U+E0000-E007F) outside emoji flag sequences
  int mixed_script_words = 0;  // words with ASCII letters and Cyrillic/Greek look-alikes at once
  bool truncated = false;      // the input was longer than max_input_bytes
};

// Normalises `text` (UTF-8; invalid sequences read as U+FFFD). Never fails. Linear in
// min(text.size(), options.max_input_bytes).
NormalizedText NormalizeText(std::string_view text, const NormalizerOptions& options = {});
// The same into `*out`, every field overwritten; its strings' capacity is reused (a caller that
// normalises every write keeps one NormalizedText and allocates nothing once it has grown).
void NormalizeText(std::string_view text, const NormalizerOptions& options, NormalizedText* out);

// Normalises `text` (default options) into a NormalizedText this thread reuses and calls `use`
// with it: no allocation per call once grown, and the buffer is given back after an unusually long
// text (up to NormalizerOptions::max_input_bytes). `use` must not call this again (one buffer per
// thread).
inline void WithThreadNormalizedText(std::string_view text,
                                     absl::FunctionRef<void(const NormalizedText&)> use) {
  thread_local NormalizedText normalized;
  NormalizeText(text, NormalizerOptions{}, &normalized);
  use(normalized);
  if (normalized.folded.capacity() + normalized.deobfuscated.capacity() > (size_t{1} << 17))
    normalized = NormalizedText{};
}

}  // namespace bulwark
