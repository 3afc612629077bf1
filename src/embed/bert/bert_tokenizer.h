// BertTokenizer: text -> BERT token ids, as Hugging Face's BertTokenizerFast (the tokenizer
// sentence-transformers uses) computes them for an uncased or cased WordPiece vocabulary.
//
// 1. Normalisation (BertNormalizer), one code point at a time:
//    - The text is decoded as UTF-8; an invalid byte sequence becomes U+FFFD.
//    - Clean: U+0000, U+FFFD and control characters (general category C*, except \t \n \r) are
//      dropped; White_Space characters become a space.
//    - CJK: a CJK Unified Ideograph (the blocks BERT lists) becomes a word of its own.
//    - With do_lower_case: strip accents (the character's NFD decomposition without its
//      nonspacing marks, category Mn), then lowercase (Unicode simple case mapping; the one
//      character whose full mapping differs, U+0130, is decomposed by NFD first).
// 2. Pre-tokenisation (BertPreTokenizer): split at White_Space; every punctuation character
//    (ASCII punctuation or general category P*) is a word of its own.
// 3. WordPiece: a word of more than kMaxCharsPerWord code points is [UNK]; otherwise it is split
//    greedily into the longest prefix in the vocabulary, then the longest "##"-prefixed
//    continuation, and so on; a word with any part that cannot be matched is [UNK] as a whole.
// 4. Encode adds [CLS] in front and [SEP] at the end and truncates the pieces so the total is at
//    most max_tokens; it stops reading the text once that many pieces are found, so the cost is
//    bounded by the truncation point, not the text length.
//
// Unicode properties come from ICU (Debian libicu-dev).
//
// One deliberate difference from Hugging Face: special tokens written in the text ("[SEP]",
// "[CLS]", "[MASK]") are not matched as special tokens but tokenized as text ("[", "sep", "]"), so
// a stored memory cannot inject them into the encoder's input.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark::bert {

class BertTokenizer {
 public:
  static constexpr int kMaxCharsPerWord = 100;
  // Largest vocab.txt accepted (bert-base-uncased's is 232 KiB).
  static constexpr size_t kMaxVocabBytes = 64 << 20;
  // Longest vocabulary entry accepted, in bytes.
  static constexpr size_t kMaxTokenBytes = 1024;

  // Builds the tokenizer from the text of a vocab.txt: one token per line, id = line number from 0
  // (a trailing "\r" is dropped; a token listed twice keeps its last id, as Hugging Face does).
  // Errors: InvalidArgument if the text is over kMaxVocabBytes, has more than `max_vocab_size`
  // lines, a token over kMaxTokenBytes, or lacks [CLS], [SEP] or [UNK].
  [[nodiscard]] static absl::StatusOr<BertTokenizer> FromVocab(std::string_view vocab_text,
                                                               bool do_lower_case, int max_vocab_size);

  // [CLS] + the first max_tokens - 2 word pieces of `text` + [SEP]. max_tokens >= 2.
  std::vector<int32_t> Encode(std::string_view text, int max_tokens) const;

  // Steps 1-2: the words of `text` (for tests and debugging).
  std::vector<std::string> Words(std::string_view text) const;
  // Steps 1-3 on the whole text: the word pieces as strings ("##" included, "[UNK]" for unknown).
  std::vector<std::string> Pieces(std::string_view text) const;

  int vocab_size() const { return vocab_lines_; }
  int cls_id() const { return cls_id_; }
  int sep_id() const { return sep_id_; }
  int unk_id() const { return unk_id_; }
  bool do_lower_case() const { return do_lower_case_; }

 private:
  BertTokenizer() = default;

  // Calls on_word(word) for each word of steps 1-2, in order, until it returns false.
  template <typename OnWord>
  void ForEachWord(std::string_view text, OnWord on_word) const;
  // Appends the ids of step 3 for `word` (UTF-8) to `ids`.
  void AppendPieces(std::string_view word, size_t code_points, std::vector<int32_t>* ids) const;

  absl::flat_hash_map<std::string, int32_t> vocab_;
  std::vector<std::string> id_to_token_;
  int vocab_lines_ = 0;
  int32_t cls_id_ = 0, sep_id_ = 0, unk_id_ = 0;
  bool do_lower_case_ = true;
};

}  // namespace bulwark::bert
