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

TEST(SlotExtractorTest, BoundedAndTotal) {
  const std::string big(100'000, '9');
  EXPECT_LE(ExtractSlots(big).slots.size(), 1u);
  EXPECT_TRUE(ExtractSlots("").slots.empty());
  EXPECT_TRUE(ExtractSlots(std::string("\xff\xfe\x00 abc", 7)).slots.empty());
}

}  // namespace
}  // namespace bulwark
