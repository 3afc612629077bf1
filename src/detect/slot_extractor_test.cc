#include "detect/slot_extractor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bulwark {
namespace {

// "kind=value" for every slot of `text`, in order.
std::vector<std::string> Slots(std::string_view text) {
  std::vector<std::string> out;
  for (const Slot& s : ExtractSlots(text).slots)
    out.push_back(std::string(SlotKindName(s.kind)) + "=" + s.value);
  return out;
}

bool Has(const std::vector<std::string>& slots, const std::string& slot) {
  return std::find(slots.begin(), slots.end(), slot) != slots.end();
}

TEST(SlotExtractorTest, TimesNormaliseToTwentyFourHours) {
  EXPECT_TRUE(Has(Slots("standup at 9am every day"), "time=09:00"));
  EXPECT_TRUE(Has(Slots("standup at 9:00 a.m. every day"), "time=09:00"));
  EXPECT_TRUE(Has(Slots("pickup 4:30 pm"), "time=16:30"));
  EXPECT_TRUE(Has(Slots("doors close at 21:15"), "time=21:15"));
  EXPECT_TRUE(Has(Slots("lunch at noon"), "time=12:00"));
}

TEST(SlotExtractorTest, DatesAmountsNumbers) {
  EXPECT_TRUE(Has(Slots("due June 1st"), "date=jun 1"));
  EXPECT_TRUE(Has(Slots("due 1 June"), "date=jun 1"));
  EXPECT_TRUE(Has(Slots("the gym is closed on Tuesdays"), "date=tue"));
  EXPECT_TRUE(Has(Slots("rent is $1,200.00 a month"), "amount=$1200"));
  EXPECT_TRUE(Has(Slots("discount of 15%"), "amount=%15"));
  EXPECT_TRUE(Has(Slots("order 12 boxes"), "number=12 boxe"));
  EXPECT_TRUE(Has(Slots("we need 7 of them"), "number=7"));
  EXPECT_TRUE(Has(Slots("we need seven of them"), "number=7"));
}

TEST(SlotExtractorTest, ContactsAndCodes) {
  const auto slots = Slots(
      "Write to Billing@Acme.example or see https://portal.acme.example/pay/ ; call (555) 010-4477; "
      "account AC-99812");
  EXPECT_TRUE(Has(slots, "email=billing@acme.example"));
  EXPECT_TRUE(Has(slots, "url=portal.acme.example/pay"));
  EXPECT_TRUE(Has(slots, "phone=5550104477"));
  EXPECT_TRUE(Has(slots, "account=ac-99812"));
  EXPECT_TRUE(Has(Slots("call 555-0142 after lunch"), "phone=5550142"));
}

TEST(SlotExtractorTest, NamesAreCapitalisedRuns) {
  const auto slots = Slots("Butter comes from Green Valley Dairy, delivered by Tom.");
  EXPECT_TRUE(Has(slots, "name=green valley dairy"));
  EXPECT_TRUE(Has(slots, "name=tom"));
  EXPECT_FALSE(Has(Slots("The meeting is on Monday."), "name=the"));
}

TEST(SlotExtractorTest, Negation) {
  EXPECT_FALSE(ExtractSlots("The cookies contain nuts.").negated());
  EXPECT_TRUE(ExtractSlots("The cookies don't contain nuts.").negated());
  EXPECT_TRUE(ExtractSlots("The cookies contain no nuts.").negated());
}

TEST(SlotExtractorTest, DiffPairsReplacedValuesOnly) {
  const TextSlots a = ExtractSlots("Dentist with Dr Rao on June 14 at 9am, $120 copay.");
  const TextSlots b = ExtractSlots("Dentist with Dr Rao on June 14 at 7am, $120 copay.");
  const SlotDiff d = DiffSlots(a, b);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].kind, SlotKind::kTime);
  EXPECT_EQ(d.changes[0].old_text, "9am");
  EXPECT_EQ(d.changes[0].new_text, "7am");
  EXPECT_FALSE(d.polarity_changed);
  // A paraphrase with the same facts written differently is not a change.
  EXPECT_FALSE(
      DiffSlots(a, ExtractSlots("June 14th, 9:00 a.m.: dentist (Dr Rao), copay $120.")).contradicts());
  // An added detail is not a change.
  EXPECT_FALSE(
      DiffSlots(a, ExtractSlots("Dentist with Dr Rao on June 14 at 9am, $120 copay, room 4.")).contradicts());
  // Polarity.
  EXPECT_TRUE(DiffSlots(ExtractSlots("The scones contain nuts."), ExtractSlots("The scones contain no nuts."))
                  .polarity_changed);
}

// The labels of `text`: "kind=value" of its slots that name what it is about (Slot::label).
std::vector<std::string> Labels(std::string_view text) {
  std::vector<std::string> out;
  for (const Slot& s : ExtractSlots(text).slots) {
    if (s.label) out.push_back(std::string(SlotKindName(s.kind)) + "=" + s.value);
  }
  return out;
}

TEST(SlotExtractorTest, LabelsAreBareNumbersCodesAndNamesOfTheOpeningPhrase) {
  EXPECT_EQ(Labels("imported memory 7"), std::vector<std::string>{"number=7"});
  EXPECT_EQ(Labels("Invoice 1041 from Millbrook Farm: $380, due June 3"),
            std::vector<std::string>{"number=1041"});
  EXPECT_EQ(Labels("Order #4471 ships on Tuesday"), std::vector<std::string>{"account=#4471"});
  EXPECT_EQ(Labels("The Okafor wedding cake is lemon"), std::vector<std::string>{"name=okafor"});
  EXPECT_EQ(Labels("Priya's birthday is June 3"), std::vector<std::string>{"name=priya's"});
  // Values after a verb, a preposition or a colon are attributes; times, dates, amounts and
  // quantities always are; a sentence's capitalised first word may be any word.
  EXPECT_TRUE(Labels("The gate code is 4471").empty());
  EXPECT_TRUE(Labels("Meeting in room 12 at 3pm").empty());
  EXPECT_TRUE(Labels("Lunch with Priya on June 3").empty());
  EXPECT_TRUE(Labels("Gate code: 4471").empty());
  EXPECT_TRUE(Labels("Rent $1,200 due June 1, 12 boxes").empty());
  EXPECT_TRUE(Labels("Dentist with Dr Rao at 9am").empty());
  EXPECT_TRUE(Labels("Send refunds to account GB-7731-0042").empty());
}

// A number the writer designates with a numbering word ("number 7", "No. 7", "nr 7", "#7") names a
// record of a series even after a topic preposition (about, on, regarding, concerning, re, of); a
// number after another preposition, a verb or a copula stays an attribute, designated or not.
TEST(SlotExtractorTest, ADesignatedNumberAfterATopicPrepositionLabelsTheRecord) {
  EXPECT_EQ(Labels("note about travel plans number 7"), std::vector<std::string>{"number=7"});
  EXPECT_EQ(Labels("Invoice No. 1041 from Millbrook Farm: $380"), std::vector<std::string>{"number=1041"});
  EXPECT_EQ(Labels("Notes on chapter no. 3: read by Friday"), std::vector<std::string>{"number=3"});
  EXPECT_EQ(Labels("Summary regarding ticket nr 88 for the team"), std::vector<std::string>{"number=88"});
  EXPECT_EQ(Labels("copy of order #4471 for the records"), std::vector<std::string>{"account=#4471"});
  // Not designated, or after a preposition that places or times the record: attributes.
  EXPECT_TRUE(Labels("note about travel plans 7").empty());
  EXPECT_TRUE(Labels("Meet at 7").empty());
  EXPECT_TRUE(Labels("Meeting in room number 12 on Friday").empty());
  EXPECT_TRUE(Labels("Pickup at gate no. 7").empty());
  EXPECT_TRUE(Labels("The gate code is number 4471").empty());
  EXPECT_TRUE(Labels("Flight to Lisbon leaves Tuesday 9:40 from terminal 3").empty());
  EXPECT_TRUE(Labels("note about the long winding travel plans number 7").empty());  // five words
  EXPECT_TRUE(Labels("Bus stop: number 7").empty());                                 // after a colon
}

TEST(SlotExtractorTest, DifferentRecordsHaveDisjointLabels) {
  auto different = [](std::string_view a, std::string_view b) {
    return DifferentRecords(ExtractSlots(a), ExtractSlots(b));
  };
  EXPECT_TRUE(different("imported memory 7", "imported memory 8"));
  EXPECT_TRUE(different("note about travel plans number 7", "note about travel plans number 8"));
  EXPECT_TRUE(different("Invoice 1041: $380, due June 3", "Invoice 1042: $380, due June 3"));
  EXPECT_TRUE(different("Priya's birthday is June 3", "Omar's birthday is June 5"));
  // The same record with a changed attribute, or a text without a label, is one record.
  EXPECT_FALSE(different("Invoice 1041: $380, due June 3", "Invoice 1041: $380, due June 10"));
  EXPECT_FALSE(different("The gate code is 4471", "The gate code is 1234"));
  EXPECT_FALSE(different("Invoice 1041: $380, due June 3", "The invoice is due June 10"));
  EXPECT_FALSE(different("Lunch with Priya on June 3", "Lunch with Omar on June 3"));
  EXPECT_FALSE(different("Meeting in room number 12 on Friday", "Meeting in room number 14 on Friday"));
}

TEST(SlotExtractorTest, BoundedAndTotal) {
  const std::string big(100'000, '9');
  EXPECT_LE(ExtractSlots(big).slots.size(), 1u);
  EXPECT_TRUE(ExtractSlots("").slots.empty());
  EXPECT_TRUE(ExtractSlots(std::string("\xff\xfe\x00 abc", 7)).slots.empty());
}

}  // namespace
}  // namespace bulwark
