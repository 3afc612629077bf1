// The oddest token of a text (issue #14 point 7: odd-token triggers). A trigger-keyed backdoor
// binds a harmful rule to a token that ordinary text never contains ("whenever the order says
// <token>, ..."), so the token is spelled like no word: its letters have a low likelihood under a
// character model of English (char_trigram_model.h). What a user really writes and the model
// cannot judge is left out by principle, not by a list:
//
//   - e-mail addresses and URLs (a token with '@', "://" or "www.");
//   - names: a capitalised word (Kwame, Halvardine) outside a code-like token;
//   - acronyms and codes in capitals (GDPR, AC-99812): an all-upper-case letter run;
//   - units, ordinals and version prefixes: a run of at most 4 letters that touches a digit
//     (9pm, 25kg, 3rd, ipv6, tlsv1.2);
//   - file extensions and top-level domains: the letters after a token's last '.' (at most 4);
//   - words with non-ASCII letters (another language: an English model cannot judge them);
//   - letter runs shorter than 2, and plain lower-case words shorter than 5 letters (abbreviations
//     users write: "pdf", "hr", "nvm", "tmrw", "appt"; inside a code-like token, runs of 2-4
//     letters are judged). A made-up plain word of 3-4 letters is therefore out of reach: by its
//     spelling alone it is indistinguishable from a texting abbreviation.
//
// A token is code-like when it joins letters with digits, '_' or an inner '-', or is camelCase;
// its letter runs (split at case changes too) are judged one by one. A run of 2-4 letters there
// is often an abbreviation ("db-stage-2", "cust-7f3a", "cfg_v2"): it is judged both as spelling
// and as an abbreviation (abbreviation_model.h: letters that follow one another inside English
// words), and scores the lower of the two, so "db" (6.4 bits as spelling, 5.9 as an abbreviation)
// passes and "vx", "jxw", "qrz" (7.0-7.5 as abbreviations) do not. The text's score is the highest
// bits-per-character of a judged run. Linear in the text; reads at most kMaxOddTokenBytes.
#pragma once

#include <cstddef>
#include <string_view>

#include "detect/char_trigram_model.h"

namespace bulwark {

inline constexpr size_t kMaxOddTokenBytes = 16 * 1024;

struct OddestToken {
  double bits_per_char = 0;  // 0 when no run was judged
  size_t token_offset = 0;   // the token that holds the run, as a byte range of the text
  size_t token_size = 0;
  size_t run_offset = 0;  // the run itself
  size_t run_size = 0;
};

// The judged letter run of `text` with the highest bits per character under `model`.
OddestToken FindOddestToken(std::string_view text, const CharTrigramModel& model);
// The same, token by token with a separate pass per rule of the header's list: the plain
// evaluation FindOddestToken must equal field for field (odd_token_test.cc).
OddestToken FindOddestTokenPlain(std::string_view text, const CharTrigramModel& model);

}  // namespace bulwark
