#include "detect/text_normalizer.h"

#include <absl/strings/escaping.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <vector>

#include "core/strings.h"

namespace bulwark {
namespace {

bool IsZeroWidth(UChar32 c) {
  return c == 0x200B || c == 0x200C || c == 0x200D || c == 0x2060 || c == 0xFEFF || c == 0x180E ||
         c == 0x00AD || c == 0x034F || c == 0x2061 || c == 0x2062 || c == 0x2063 || c == 0x2064;
}
bool IsBidiControl(UChar32 c) { return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069); }
bool IsTag(UChar32 c) { return c >= 0xE0000 && c <= 0xE007F; }
bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// The Latin letter a case-folded Cyrillic or Greek look-alike is read as (Unicode confusables.txt,
// restricted to letters that look like one Latin letter in common fonts), or 0.
char LatinLookalike(UChar32 c) {
  switch (c) {
    case 0x0430:
      return 'a';  // а
    case 0x0432:
      return 'b';  // в (В)
    case 0x0441:
      return 'c';  // с
    case 0x0501:
      return 'd';  // ԁ
    case 0x0435:
      return 'e';  // е
    case 0x0450:
      return 'e';  // ѐ
    case 0x04BB:
      return 'h';  // һ
    case 0x043D:
      return 'h';  // н (Н)
    case 0x0456:
      return 'i';  // і
    case 0x0458:
      return 'j';  // ј
    case 0x043A:
      return 'k';  // к (К)
    case 0x04CF:
      return 'l';  // ӏ
    case 0x043C:
      return 'm';  // м (М)
    case 0x043E:
      return 'o';  // о
    case 0x0440:
      return 'p';  // р
    case 0x051B:
      return 'q';  // ԛ
    case 0x0455:
      return 's';  // ѕ
    case 0x0442:
      return 't';  // т (Т)
    case 0x0475:
      return 'v';  // ѵ
    case 0x051D:
      return 'w';  // ԝ
    case 0x0445:
      return 'x';  // х
    case 0x0443:
      return 'y';  // у
    case 0x04AF:
      return 'y';  // ү
    case 0x03B1:
      return 'a';  // α
    case 0x03B2:
      return 'b';  // β
    case 0x03B5:
      return 'e';  // ε
    case 0x03B7:
      return 'n';  // η
    case 0x03B9:
      return 'i';  // ι
    case 0x03BA:
      return 'k';  // κ
    case 0x03BC:
      return 'm';  // μ (Μ)
    case 0x03BD:
      return 'v';  // ν
    case 0x03BF:
      return 'o';  // ο
    case 0x03C1:
      return 'p';  // ρ
    case 0x03C4:
      return 't';  // τ
    case 0x03C5:
      return 'u';  // υ
    case 0x03C7:
      return 'x';  // χ
    case 0x03B6:
      return 'z';  // ζ
    default:
      return 0;
  }
}

// UTF-8 -> code points; invalid sequences become U+FFFD.
std::vector<UChar32> Decode(std::string_view text) {
  std::vector<UChar32> out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(s, i, length, c);
    out.push_back(c < 0 ? 0xFFFD : c);
  }
  return out;
}

// Drops the invisible characters, counting them into `out`, and decodes tag characters into
// `tags`. An emoji flag's tag sequence (U+1F3F4 followed by tags) is kept out of the count.
icu::UnicodeString StripInvisible(const std::vector<UChar32>& cps, NormalizedText* out, std::string* tags) {
  icu::UnicodeString kept;
  bool in_flag = false;
  for (size_t i = 0; i < cps.size(); ++i) {
    const UChar32 c = cps[i];
    if (IsTag(c)) {
      if (!in_flag) {
        ++out->tag_characters;
        if (c >= 0xE0020 && c <= 0xE007E) tags->push_back(static_cast<char>(c - 0xE0000));
      }
      continue;
    }
    in_flag = c == 0x1F3F4;
    if (IsZeroWidth(c)) {
      const bool ascii_before = i > 0 && cps[i - 1] < 0x80;
      const bool ascii_after = i + 1 < cps.size() && cps[i + 1] < 0x80;
      if ((ascii_before || ascii_after) && !(c == 0xFEFF && i == 0)) ++out->zero_width;
      continue;
    }
    if (IsBidiControl(c)) {
      ++out->bidi_controls;
      continue;
    }
    kept.append(c);
  }
  return kept;
}

// Confusables and whitespace over the case-folded text, appended to out->folded as UTF-8: every
// whitespace character becomes ' ' (or '\n' for line breaks), runs are kept (a wide gap separates
// words in "i g n o r e   t h e"). Counts words that mix ASCII letters with look-alikes.
void FoldScripts(const icu::UnicodeString& folded, NormalizedText* out) {
  std::string& dst = out->folded;
  bool word_ascii = false, word_lookalike = false;
  auto end_word = [&] {
    if (word_ascii && word_lookalike) ++out->mixed_script_words;
    word_ascii = word_lookalike = false;
  };
  for (int32_t i = 0; i < folded.length();) {
    const UChar32 c = folded.char32At(i);
    i += U16_LENGTH(c);
    if (u_isUWhiteSpace(c) || c == 0x85) {
      end_word();
      dst.push_back(c == '\n' || c == 0x2028 || c == 0x2029 || c == 0x85 ? '\n' : ' ');
      continue;
    }
    if (const char latin = LatinLookalike(c); latin != 0) {
      word_lookalike = true;
      dst.push_back(latin);
      continue;
    }
    if (c < 0x80) {
      if (IsAsciiLetter(static_cast<char>(c))) {
        word_ascii = true;
      } else if (!IsAsciiDigit(static_cast<char>(c)) && c != '\'' && c != '-') {
        end_word();
      }
      dst.push_back(static_cast<char>(c));
      continue;
    }
    if (!u_isalpha(c)) end_word();
    std::string utf8;
    icu::UnicodeString(c).toUTF8String(utf8);
    dst += utf8;
  }
  end_word();
}

// NFKC_Casefold (UAX #15, UTS #46); plain case folding if ICU's data cannot be loaded.
icu::UnicodeString FoldCase(const icu::UnicodeString& text) {
  UErrorCode error = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc_cf = icu::Normalizer2::getNFKCCasefoldInstance(error);
  if (U_FAILURE(error) || nfkc_cf == nullptr) {
    icu::UnicodeString copy(text);
    return copy.foldCase();
  }
  icu::UnicodeString result = nfkc_cf->normalize(text, error);
  if (U_FAILURE(error)) {
    icu::UnicodeString copy(text);
    return copy.foldCase();
  }
  return result;
}

bool MayStartDefanged(char c) { return c == 'h' || c == '[' || c == '(' || c == '{'; }

// Whether Refang would change `s`: one of its forms occurs.
bool IsDefanged(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!MayStartDefanged(s[i])) continue;
    // 'h' (frequent) can start only "hxxp": its second byte is tested before anything else.
    if (s[i] == 'h') {
      if (i + 3 < s.size() && s[i + 1] == 'x' && s[i + 2] == 'x' && s[i + 3] == 'p') return true;
      continue;
    }
    const std::string_view at = s.substr(i);
    if (at.starts_with("[.]") || at.starts_with("(.)") || at.starts_with("{.}") || at.starts_with("[dot]") ||
        at.starts_with("[:]"))
      return true;
  }
  return false;
}

// "hxxps://host[.]example" -> "https://host.example".
std::string Refang(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    // Only 'h', '[', '(' and '{' can start a defanged form: copy up to the next one at once.
    size_t next = i;
    while (next < s.size() && !MayStartDefanged(s[next])) ++next;
    out.append(s.data() + i, next - i);
    i = next;
    if (i == s.size()) break;
    if (s.compare(i, 4, "hxxp") == 0) {
      out += "http";
      i += 4;
    } else if (s.compare(i, 3, "[.]") == 0 || s.compare(i, 3, "(.)") == 0 || s.compare(i, 3, "{.}") == 0) {
      out.push_back('.');
      i += 3;
    } else if (s.compare(i, 5, "[dot]") == 0) {
      out.push_back('.');
      i += 5;
    } else if (s.compare(i, 3, "[:]") == 0) {
      out.push_back(':');
      i += 3;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

bool IsSpacer(char c) {
  return c == ' ' || c == '.' || c == '-' || c == '_' || c == '*' || c == '|' || c == '+';
}

// A single-letter token starts at i: an ASCII letter or digit with no letter or digit on either
// side.
bool SingleAt(std::string_view s, size_t i) {
  return i < s.size() && IsAsciiAlnum(s[i]) && (i == 0 || !IsAsciiAlnum(s[i - 1])) &&
         (i + 1 == s.size() || !IsAsciiAlnum(s[i + 1]));
}

// The first i' >= i where SingleAt(s, i'), or s.size(): one pass, each character read once.
size_t NextSingle(std::string_view s, size_t i) {
  bool previous = i > 0 && i <= s.size() && IsAsciiAlnum(s[i - 1]);
  bool current = i < s.size() && IsAsciiAlnum(s[i]);
  for (; i < s.size(); ++i) {
    const bool next = i + 1 < s.size() && IsAsciiAlnum(s[i + 1]);
    if (current && !previous && !next) return i;
    previous = current;
    current = next;
  }
  return s.size();
}

// Joins runs of >= min_run single letters separated by one spacer ("i g n o r e", "i.g.n.o.r.e");
// a gap of 2-6 spaces between such runs is a word break ("i g n o r e   t h e").
std::string JoinSpacedLetters(std::string_view s, size_t min_run) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (!SingleAt(s, i)) {  // copy up to the next single letter at once
      const size_t next = NextSingle(s, i + 1);
      out.append(s.data() + i, next - i);
      i = next;
      continue;
    }
    std::string joined(1, s[i]);
    size_t letters = 1, j = i;  // j: the last single letter taken
    while (true) {
      if (j + 1 < s.size() && IsSpacer(s[j + 1]) && SingleAt(s, j + 2)) {
        joined.push_back(s[j + 2]);
        ++letters;
        j += 2;
        continue;
      }
      size_t gap = 0;
      while (j + 1 + gap < s.size() && s[j + 1 + gap] == ' ' && gap < 7) ++gap;
      if (gap >= 2 && gap <= 6 && SingleAt(s, j + 1 + gap) && j + 2 + gap < s.size() &&
          IsSpacer(s[j + 2 + gap]) && SingleAt(s, j + 3 + gap)) {
        joined.push_back(' ');
        joined.push_back(s[j + 1 + gap]);
        ++letters;
        j += 1 + gap;
        continue;
      }
      break;
    }
    if (letters >= min_run) {
      out += joined;
    } else {
      out.append(s.substr(i, j + 1 - i));
    }
    i = j + 1;
  }
  return out;
}

char LeetLetter(char c) {
  switch (c) {
    case '0':
      return 'o';
    case '1':
      return 'i';
    case '3':
      return 'e';
    case '4':
      return 'a';
    case '5':
      return 's';
    case '7':
      return 't';
    case '8':
      return 'b';
    case '9':
      return 'g';
    default:
      return c;
  }
}

// Reads tokens that mix letters and digits as leetspeak ("1gn0r3" -> "ignore"); tokens of digits
// alone (times, amounts, codes) are left as they are.
void UndoLeetspeak(std::string* text) {
  std::string& out = *text;
  for (size_t i = 0; i < out.size();) {
    if (!IsAsciiAlnum(out[i])) {
      ++i;
      continue;
    }
    size_t j = i, letters = 0, digits = 0;
    for (; j < out.size() && IsAsciiAlnum(out[j]); ++j) (IsAsciiDigit(out[j]) ? digits : letters)++;
    if (letters > 0 && digits > 0) {
      for (size_t k = i; k < j; ++k) out[k] = LeetLetter(out[k]);
    }
    i = j;
  }
}

bool IsBase64Char(char c) { return IsAsciiAlnum(c) || c == '+' || c == '/'; }

// Appends to `out` the base64 runs of the raw text that decode to mostly printable ASCII,
// lower-cased, one per line.
void DecodeBase64Runs(std::string_view raw, size_t min_run, std::string* out) {
  for (size_t i = 0; i < raw.size();) {
    if (!IsBase64Char(raw[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < raw.size() && IsBase64Char(raw[j])) ++j;
    size_t end = j;
    while (end < raw.size() && end < j + 2 && raw[end] == '=') ++end;
    if (j - i >= min_run) {
      std::string decoded;
      if (absl::Base64Unescape(ToAbsl(raw.substr(i, end - i)), &decoded) && !decoded.empty()) {
        const size_t printable = std::count_if(decoded.begin(), decoded.end(), [](char c) {
          return (c >= 0x20 && c < 0x7F) || c == '\n' || c == '\t';
        });
        if (printable * 10 >= decoded.size() * 9) {
          for (char& c : decoded) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
          out->push_back('\n');
          *out += decoded;
        }
      }
    }
    i = end;
  }
}

// The first three steps for text that is all ASCII, without ICU: NFKC_Casefold maps A-Z to a-z and
// leaves every other ASCII character as it is, and no ASCII character is invisible, a look-alike
// or a tag, so this is exactly what StripInvisible + FoldCase + FoldScripts give (the test
// TextNormalizerTest.AsciiFastPathEqualsTheIcuPath compares them). False if `text` is not ASCII.
bool FoldAscii(std::string_view text, std::string* folded) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  folded->resize(text.size());
  char* out = folded->data();
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    } else if (c == ' ' || (c >= '\t' && c <= '\r' && c != '\n')) {  // u_isUWhiteSpace but a line break
      c = ' ';
    }
    *out++ = c;
  }
  return true;
}

// Whether the deobfuscation steps leave `folded` (all-ASCII text as FoldAscii folds it) as it is,
// by a sufficient condition checked in one pass:
//   - JoinSpacedLetters: no single letter followed by a spacer and another single letter (a run of
//     two or more joined letters starts so, and a run of one is copied as it is);
//   - UndoLeetspeak: no token of letters and digits at once (it rewrites only those);
//   - DecodeBase64Runs: no run of min_base64_run base64 characters (FoldAscii maps base64
//     characters to base64 characters and others to others, so the raw text has none either).
// Refang is IsDefanged's to rule out. False whenever a step might change something.
bool DeobfuscationKeeps(std::string_view s, size_t min_base64_run) {
  size_t base64_run = 0, token_begin = 0;
  bool letters = false, digits = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alnum = IsAsciiAlnum(c);
    base64_run = alnum || c == '+' || c == '/' ? base64_run + 1 : 0;
    if (base64_run != 0 && base64_run >= min_base64_run) return false;
    if (!alnum) {
      letters = digits = false;
      token_begin = i + 1;
      continue;
    }
    (IsAsciiDigit(c) ? digits : letters) = true;
    if (letters && digits) return false;
    // A single letter (its token is one character long), a spacer, a single letter.
    if (i == token_begin && i + 2 < s.size() && !IsAsciiAlnum(s[i + 1]) && IsSpacer(s[i + 1]) &&
        IsAsciiAlnum(s[i + 2]) && (i + 3 == s.size() || !IsAsciiAlnum(s[i + 3])))
      return false;
  }
  return true;
}

}  // namespace

NormalizedText NormalizeText(std::string_view text, const NormalizerOptions& options) {
  NormalizedText out;
  NormalizeText(text, options, &out);
  return out;
}

void NormalizeText(std::string_view text, const NormalizerOptions& options, NormalizedText* result) {
  NormalizedText& out = *result;
  out.folded.clear();  // kept: their capacity is reused
  out.deobfuscated.clear();
  out.zero_width = out.bidi_controls = out.tag_characters = out.mixed_script_words = 0;
  out.truncated = false;
  if (text.size() > options.max_input_bytes) {
    size_t cut = options.max_input_bytes;
    while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) --cut;  // a UTF-8 boundary
    text = text.substr(0, cut);
    out.truncated = true;
  }
  const bool ascii = options.ascii_fast_path && FoldAscii(text, &out.folded);
  if (ascii && options.deobfuscation_shortcut && DeobfuscationKeeps(out.folded, options.min_base64_run) &&
      !IsDefanged(out.folded)) {
    out.deobfuscated = out.folded;  // what the steps below would give, without building it
    return;
  }
  if (!ascii) {
    std::string tags;
    const icu::UnicodeString kept = StripInvisible(Decode(text), &out, &tags);
    FoldScripts(FoldCase(kept), &out);
    if (!tags.empty()) {
      for (char& c : tags) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      out.folded += "\n";
      out.folded += tags;
    }
  }
  // Refang, join spaced letters, read leetspeak, append decoded base64: one new string, the
  // refanged copy only when something is defanged.
  out.deobfuscated = IsDefanged(out.folded) ? JoinSpacedLetters(Refang(out.folded), options.min_spaced_run)
                                            : JoinSpacedLetters(out.folded, options.min_spaced_run);
  UndoLeetspeak(&out.deobfuscated);
  DecodeBase64Runs(text, options.min_base64_run, &out.deobfuscated);
}

}  // namespace bulwark
