// SlotExtractor: the checkable facts of a memory's text (issue #14 point 2): times, dates, amounts,
// numbers, e-mail addresses, URLs, phone numbers, account codes, capitalised names and places,
// and whether the text is negated. The conflict detector (conflict_detector.cc) compares the slots
// of a write with those of the stored memory it is nearest to: same subject, changed slot values
// or flipped polarity is a contradiction.
//
// Values are normalised so that a paraphrase of the same fact keeps its slots equal: times become
// minutes past midnight ("9am", "9:00 a.m.", "09:00" -> "09:00"), amounts and numbers lose their
// separators ("$1,200.00" -> "$1200"), dates their ordinals and month spellings ("June 1st" ->
// "jun 1"), e-mails, URLs and names their case, phones everything but their digits. The text as
// written is kept beside the value for reports.
//
// Linear in the text (RE2 scans, one pass each); the input is read up to kMaxSlotTextBytes.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace bulwark {

enum class SlotKind : uint8_t { kTime, kDate, kAmount, kNumber, kEmail, kUrl, kPhone, kAccount, kName };

// "time", "date", "amount", "number", "email", "url", "phone", "account", "name".
std::string_view SlotKindName(SlotKind kind);

struct Slot {
  SlotKind kind = SlotKind::kNumber;
  std::string value;  // normalised (compared)
  std::string text;   // as written (reported)
};

struct TextSlots {
  absl::InlinedVector<Slot, 8> slots;  // in order of appearance
  int negations = 0;                   // negation words: not, no, never, n't, without, ...
  bool negated() const { return negations > 0; }
};

// One changed slot: a value of `kind` the old text had and the new one lacks, paired with a value
// of the same kind the new text has and the old one lacks.
struct SlotChange {
  SlotKind kind = SlotKind::kNumber;
  std::string old_text;
  std::string new_text;
};

struct SlotDiff {
  absl::InlinedVector<SlotChange, 4> changes;
  bool polarity_changed = false;  // one text is negated, the other is not
  bool contradicts() const { return polarity_changed || !changes.empty(); }
};

inline constexpr size_t kMaxSlotTextBytes = 16 * 1024;

// The slots of `text` (its first kMaxSlotTextBytes bytes). Never fails: text without slots gives
// an empty list.
TextSlots ExtractSlots(std::string_view text);

// How `updated` changes `original`: per kind, the values only `original` has are paired in order
// with the values only `updated` has (a value added or dropped without a counterpart is not a
// change: adding a detail does not contradict). Numbers that are part of a time, date or amount
// are not compared again as numbers.
SlotDiff DiffSlots(const TextSlots& original, const TextSlots& updated);

}  // namespace bulwark
