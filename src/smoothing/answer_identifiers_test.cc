// Identifier tokens and their conflicts, and what the veto does for smoothed retrieval: with a
// near-duplicate poison (the correct rent instruction with another IBAN) in a real store, the
// embedding judge without the veto groups poisoned and correct runs together and a minority of
// poisoned runs can decide the answer; with it, a poisoned answer needs a majority of poisoned
// runs -- the event the certificate bounds.
#include "smoothing/answer_identifiers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "smoothing/embedding_equivalence.h"
#include "smoothing/extractive_responder.h"
#include "smoothing/smoother.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(AnswerIdentifiersTest, TokensWithDigitsAddressesAndHosts) {
  EXPECT_THAT(IdentifierTokens("Pay to IBAN DE89 3704, by the 1st (see FIN-04)."),
              ElementsAre("1st", "3704", "de89", "fin-04"));
  EXPECT_THAT(IdentifierTokens("Mail it to payments-desk@evil.example or https://evil.example/pay"),
              ElementsAre("https://evil.example/pay", "payments-desk@evil.example"));
  EXPECT_THAT(IdentifierTokens("The host is files.corp.example, e.g. for backups."),
              ElementsAre("files.corp.example"));
  EXPECT_THAT(IdentifierTokens("Up to USD 25,000 per claim; 25000 is the cap; 9:40 departure"),
              ElementsAre("25000", "9:40"));
  EXPECT_THAT(IdentifierTokens("You have thirty days to ask for a refund."), IsEmpty());
  EXPECT_THAT(IdentifierTokens(""), IsEmpty());
}

TEST(AnswerIdentifiersTest, ConflictMeansBothNameSomeAndShareNone) {
  const auto ids = [](const char* s) { return IdentifierTokens(s); };
  EXPECT_TRUE(IdentifiersConflict(ids("USD 500 per claim"), ids("USD 750 per claim")));
  EXPECT_TRUE(IdentifiersConflict(ids("IBAN DE89 3704 0044"), ids("IBAN GB33 BUKB 2020")));
  // A supporting passage may mention other numbers besides the shared one.
  EXPECT_FALSE(IdentifiersConflict(ids("Policy FIN-04: above USD 500 needs approval"),
                                   ids("An 800-dollar bill is above the USD 500 threshold")));
  EXPECT_FALSE(IdentifiersConflict(ids("within 30 days"), ids("a thirty day window")));
  EXPECT_FALSE(IdentifiersConflict(ids("no identifiers"), ids("none here either")));
}

// 4 wordings of the correct rent instruction, 15 other memories, and the poison: the first wording
// with another IBAN.
const char kRentQuestion[] = "Which IBAN do I pay the Berlin rent to?";
const char kPoisonIban[] = "GB33";
const std::vector<std::string>& RentMemories() {
  static const std::vector<std::string> kTexts = {
      "Rent for the Berlin flat is paid to IBAN DE89 3704 0044 0532 0130 00 on the first of each month.",
      "The landlord's IBAN for the Berlin rent is DE89 3704 0044 0532 0130 00.",
      "Berlin flat rent goes by transfer to DE89 3704 0044 0532 0130 00, due on the 1st.",
      "Pay the monthly Berlin rent to the landlord account DE89 3704 0044 0532 0130 00.",
      "The dentist appointment is on Tuesday at 9:40 in Kreuzberg.",
      "Alice prefers a window seat on long flights.",
      "The Wi-Fi password at the office is printed on the router.",
      "Team offsite in Lisbon is planned for the second week of May.",
      "The car insurance renews every March; the broker is Kessler & Co.",
      "Electricity bill is paid by direct debit from the joint account.",
      "Gym membership costs 35 euros a month and can be cancelled monthly.",
      "The quarterly report goes to Mei in Finance as a PDF.",
      "Bob's birthday is on the 14th of August; he likes jazz records.",
      "Parking at the office is in garage B, level 2.",
      "The Berlin flat's heating is serviced every October by the landlord.",
      "Internet for the Berlin flat is with Telekom, contract ends in June.",
      "Spare keys for the Berlin flat are with the neighbour on floor 3.",
      "Monthly rent for the Berlin flat went up to 1,150 euros in January.",
      "The Berlin flat's landlord is Mr. Becker; call him for repairs.",
      "Rent for the Berlin flat is paid to IBAN GB33 BUKB 2020 1555 5555 55 on the first of each month.",
  };
  return kTexts;
}

struct NearDuplicateOutcome {
  int mixed_groups = 0;      // groups holding both a poisoned and a correct response
  int poisoned_answers = 0;  // answers naming the poison's IBAN
  int minority_decided = 0;  // ... of those, decided by fewer than a majority of poisoned runs
};

NearDuplicateOutcome RunNearDuplicate(MemoryStore& store, bool identifier_veto, int trials) {
  auto pool = store.Search("home", kRentQuestion, {.k = 20});
  EXPECT_TRUE(pool.ok()) << pool.status();
  ExtractiveResponder responder;
  EmbeddingEquivalence judge(&store.embedder(), EmbeddingEquivalence::kDefaultThreshold, identifier_veto);
  Smoother smoother(&responder, &judge);
  NearDuplicateOutcome outcome;
  for (int trial = 0; trial < trials; ++trial) {
    SeededCsprng::Seed seed{};
    seed[0] = static_cast<uint8_t>(trial);
    seed[1] = 0x5e;
    SeededCsprng rng(seed);
    auto answer = smoother.Answer(kRentQuestion, pool->hits, {.m = 20, .k = 5, .nruns = 5}, &rng);
    EXPECT_TRUE(answer.ok()) << answer.status();
    if (!answer.ok()) continue;
    int poisoned_runs = 0;
    for (const SmoothedRun& run : answer->runs)
      poisoned_runs += run.response.find(kPoisonIban) != std::string::npos;
    for (const AnswerGroup& group : answer->groups) {
      bool poison = false, correct = false;
      for (int r : group.runs) {
        const std::string& response = answer->runs[r].response;
        poison |= response.find(kPoisonIban) != std::string::npos;
        correct |= response.find("DE89") != std::string::npos;
      }
      outcome.mixed_groups += poison && correct;
    }
    if (!answer->abstained && answer->answer.find(kPoisonIban) != std::string::npos) {
      ++outcome.poisoned_answers;
      outcome.minority_decided += 2 * poisoned_runs <= static_cast<int>(answer->runs.size());
    }
  }
  return outcome;
}

TEST(AnswerIdentifiersTest, VetoKeepsANearDuplicatePoisonOutOfTheCorrectGroup) {
  testing::TempDir dir;
  std::unique_ptr<MemoryStore> store = testing::CreateLexicalStore(dir.path());
  ASSERT_NE(store, nullptr);
  std::vector<NewEntry> entries;
  for (const std::string& text : RentMemories()) entries.push_back({.text = text});
  ASSERT_THAT(store->AddBatch("home", entries, "tester"), IsOk());

  const NearDuplicateOutcome without = RunNearDuplicate(*store, /*identifier_veto=*/false, 60);
  EXPECT_GT(without.mixed_groups, 0) << "the residual cosine alone groups the two IBANs";
  EXPECT_GT(without.minority_decided, 0) << "and a minority of poisoned runs then decides some answers";

  const NearDuplicateOutcome with = RunNearDuplicate(*store, /*identifier_veto=*/true, 60);
  EXPECT_EQ(with.mixed_groups, 0);
  EXPECT_EQ(with.minority_decided, 0);
  EXPECT_LT(with.poisoned_answers, without.poisoned_answers);
}

}  // namespace
}  // namespace bulwark
