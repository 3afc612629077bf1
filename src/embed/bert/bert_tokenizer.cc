// BERT normalisation, pre-tokenisation and greedy WordPiece (see bert_tokenizer.h for the steps).
#include "embed/bert/bert_tokenizer.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf8.h>

#include <utility>

namespace bulwark::bert {
namespace {

bool IsControl(UChar32 c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (u_charType(c)) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_UNASSIGNED:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

bool IsWhitespace(UChar32 c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(c); }

bool IsPunctuation(UChar32 c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) {
    return true;
  }
  return c >= 128 && u_ispunct(c);
}

// The CJK Unified Ideograph blocks of BERT's _is_chinese_char.
bool IsCjk(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

const UNormalizer2* Nfd() {
  static const UNormalizer2* nfd = [] {
    UErrorCode error = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFDInstance(&error);
    return U_SUCCESS(error) ? n : nullptr;
  }();
  return nfd;
}

// Step 1 for one code point that is not dropped, a space or CJK: with `lower`, the NFD
// decomposition without Mn marks, lowercased; else the code point itself. Returns the count.
int Normalize(UChar32 c, bool lower, UChar32 out[8]) {
  if (!lower) {
    out[0] = c;
    return 1;
  }
  if (c < 0x80) {
    out[0] = (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
    return 1;
  }
  UChar utf16[32];
  UErrorCode error = U_ZERO_ERROR;
  const UNormalizer2* nfd = Nfd();
  const int32_t length = nfd ? unorm2_getDecomposition(nfd, c, utf16, 32, &error) : -1;
  if (length < 0 || U_FAILURE(error)) {
    out[0] = u_tolower(c);
    return u_charType(c) == U_NON_SPACING_MARK ? 0 : 1;
  }
  int n = 0;
  for (int32_t i = 0; i < length && n < 8;) {
    UChar32 d;
    U16_NEXT(utf16, i, length, d);
    if (u_charType(d) != U_NON_SPACING_MARK) out[n++] = u_tolower(d);
  }
  return n;
}

void AppendUtf8(UChar32 c, std::string* out) {
  char buffer[4];
  int32_t length = 0;
  UBool error = false;
  U8_APPEND(buffer, length, 4, c, error);
  if (!error) out->append(buffer, length);
}

}  // namespace

absl::StatusOr<BertTokenizer> BertTokenizer::FromVocab(std::string_view vocab_text, bool do_lower_case,
                                                       int max_vocab_size) {
  auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("bert: vocab.txt: ", what));
  };
  if (vocab_text.size() > kMaxVocabBytes) return bad(absl::StrCat("larger than ", kMaxVocabBytes, " bytes"));
  if (!vocab_text.empty() && vocab_text.back() == '\n') vocab_text.remove_suffix(1);
  BertTokenizer tokenizer;
  tokenizer.do_lower_case_ = do_lower_case;
  int32_t id = 0;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(vocab_text.data(), vocab_text.size()), '\n')) {
    if (id >= max_vocab_size) {
      return bad(absl::StrCat("has more lines than the model's vocab_size ", max_vocab_size));
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxTokenBytes)
      return bad(absl::StrCat("line ", id + 1, " is over ", kMaxTokenBytes, " bytes"));
    tokenizer.vocab_.insert_or_assign(std::string(line), id);
    tokenizer.id_to_token_.emplace_back(line.data(), line.size());
    ++id;
  }
  tokenizer.vocab_lines_ = id;
  for (auto [name, slot] : {std::pair{"[CLS]", &tokenizer.cls_id_}, std::pair{"[SEP]", &tokenizer.sep_id_},
                            std::pair{"[UNK]", &tokenizer.unk_id_}}) {
    auto it = tokenizer.vocab_.find(name);
    if (it == tokenizer.vocab_.end()) return bad(absl::StrCat("has no ", name, " token"));
    *slot = it->second;
  }
  return tokenizer;
}

template <typename OnWord>
void BertTokenizer::ForEachWord(std::string_view text, OnWord on_word) const {
  std::string word;
  size_t code_points = 0;
  bool go_on = true;
  auto flush = [&] {
    if (!word.empty() && go_on) go_on = on_word(std::string_view(word), code_points);
    word.clear();
    code_points = 0;
  };
  auto single = [&](UChar32 c) {
    flush();
    AppendUtf8(c, &word);
    code_points = 1;
    flush();
  };
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const int64_t length = static_cast<int64_t>(text.size());
  for (int64_t i = 0; i < length && go_on;) {
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    if (c < 0) c = 0xFFFD;  // invalid UTF-8
    if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
    if (IsWhitespace(c)) {
      flush();
      continue;
    }
    if (IsCjk(c)) {
      single(c);
      continue;
    }
    UChar32 normalized[8];
    const int n = Normalize(c, do_lower_case_, normalized);
    for (int k = 0; k < n; ++k) {
      const UChar32 d = normalized[k];
      if (IsWhitespace(d)) {
        flush();
      } else if (IsPunctuation(d)) {
        single(d);
      } else {
        AppendUtf8(d, &word);
        ++code_points;
      }
    }
  }
  flush();
}

void BertTokenizer::AppendPieces(std::string_view word, size_t code_points, std::vector<int32_t>* ids) const {
  if (code_points > static_cast<size_t>(kMaxCharsPerWord)) {
    ids->push_back(unk_id_);
    return;
  }
  const size_t first_new = ids->size();
  std::string candidate;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (end > start) {
      candidate.assign(start > 0 ? "##" : "");
      candidate.append(word.substr(start, end - start));
      if (auto it = vocab_.find(candidate); it != vocab_.end()) {
        found = it->second;
        break;
      }
      do {
        --end;  // back to the previous code point boundary
      } while (end > start && (static_cast<uint8_t>(word[end]) & 0xC0) == 0x80);
    }
    if (found < 0) {
      ids->resize(first_new);
      ids->push_back(unk_id_);
      return;
    }
    ids->push_back(found);
    start = end;
  }
}

std::vector<int32_t> BertTokenizer::Encode(std::string_view text, int max_tokens) const {
  const size_t budget = static_cast<size_t>(std::max(max_tokens, 2) - 2);
  std::vector<int32_t> ids = {cls_id_};
  ForEachWord(text, [&](std::string_view word, size_t code_points) {
    AppendPieces(word, code_points, &ids);
    return ids.size() < budget + 1;
  });
  if (ids.size() > budget + 1) ids.resize(budget + 1);
  ids.push_back(sep_id_);
  return ids;
}

std::vector<std::string> BertTokenizer::Words(std::string_view text) const {
  std::vector<std::string> words;
  ForEachWord(text, [&](std::string_view word, size_t) {
    words.emplace_back(word);
    return true;
  });
  return words;
}

std::vector<std::string> BertTokenizer::Pieces(std::string_view text) const {
  std::vector<int32_t> ids;
  ForEachWord(text, [&](std::string_view word, size_t code_points) {
    AppendPieces(word, code_points, &ids);
    return true;
  });
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (int32_t id : ids) pieces.push_back(id_to_token_[id]);
  return pieces;
}

}  // namespace bulwark::bert
