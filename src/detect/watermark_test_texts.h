// Texts and keys the watermark tests share (watermark_test.cc, char_watermark_test.cc,
// write_gate_test.cc): realistic paragraphs, the benign memories of data/corpora, random keys.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "testing/corpus_field.h"

namespace bulwark::watermark_test_texts {

// `count` keys of 32 bytes from mt19937(seed).
inline std::vector<std::vector<uint8_t>> RandomKeys(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<uint8_t>> keys(count, std::vector<uint8_t>(32));
  for (auto& k : keys) {
    for (auto& b : k) b = static_cast<uint8_t>(rng());
  }
  return keys;
}

// Realistic paragraphs of 300-800 bytes: prose without times or dates, and notes with them.
inline const std::vector<std::string>& Paragraphs() {
  static const std::vector<std::string> paragraphs = {
      "Remember that the quarterly planning meeting moved to Thursday afternoon in the large conference "
      "room. "
      "Bring the printed budget summary, do not forget the updated headcount figures, and let us ask the "
      "finance "
      "team whether the travel allowance for the spring conference is still approved. I am also supposed to "
      "confirm the catering order and the colour of the new team shirts before Friday.",
      "Sam prefers aisle seats on long flights and usually books the earliest morning departure so that he "
      "can be "
      "at the office before lunch. He does not like hotels near the airport; last time he stayed in the old "
      "town "
      "and said the small family hotel by the river was quiet, clean and cheap. For the trip to Lisbon in "
      "June he "
      "wants a room with a desk, a fast internet connection and breakfast included.",
      "The shared drive holds the signed contracts in the Legal folder, sorted by year and then by client "
      "name. "
      "The newest version of the vendor agreement is the one with the blue cover page; the older drafts are "
      "kept "
      "in the Archive subfolder and should not be sent to anyone outside the company. If the auditors ask "
      "for the "
      "insurance certificates, they are scanned as PDF files in the same place.",
      "Mum's birthday is on the twelfth of August and she would love a quiet dinner with the whole family at "
      "the "
      "Italian place near the harbour. Last year we gave her a silk scarf and a book about gardening, which "
      "she "
      "enjoyed a lot. This time we could buy tickets for the summer concert in the park, because she often "
      "says "
      "she misses live music since the local theatre closed.",
      "The home network uses the router in the hallway cupboard; the guest network has its own password, "
      "which is "
      "written on the card stuck to the fridge. The smart thermostat is set to nineteen degrees during the "
      "night "
      "and twenty one in the morning, and the heating switches off automatically when everyone has left the "
      "house. The printer in the study only works with the old cable, not over the wireless connection.",
      "During yesterday's call the client explained that the launch date cannot move again, because the "
      "marketing campaign has already been booked with three magazines. They asked us to prepare a short "
      "demo for "
      "the board, focusing on the new reporting features and on the faster search. We agreed to send a "
      "revised "
      "schedule by Monday and to check whether the extra developer can start earlier than planned.",
      "My doctor recommended walking for at least thirty minutes every day and cutting down on coffee in the "
      "afternoon. The blood test results were normal, but the cholesterol level was slightly high, so she "
      "suggested eating more vegetables and fish and less red meat. The next check-up is planned for the "
      "beginning of October, and I should bring the list of medicines I take regularly.",
      "The garden needs attention before the holidays: the hedge along the street has to be trimmed, the "
      "tomatoes need stakes, and the lawn should be mowed at least once more. Our neighbour offered to water "
      "the "
      "plants while we are away, so we should leave a spare key under the blue flower pot and show him where "
      "the "
      "hose and the watering can are kept in the shed.",
      "Video consultation with Dr. Eriksen on January 15 at 3pm; the clinic sends the link an hour before. "
      "The "
      "prescription renewal is due on 2 March, and the pharmacy closes at 18:30 on weekdays. Blood pressure "
      "was "
      "fine at the last visit, but I am supposed to cut salt by 20% and walk for 45 minutes three times a "
      "week. "
      "Email the lab results to Dr. Eriksen before the appointment.",
  };
  return paragraphs;
}

// The 1,400 benign memories of data/corpora/benign_memories.jsonl.
inline std::vector<std::string> BenignMemories() {
  return testing::CorpusField("benign_memories.jsonl", "text");
}

}  // namespace bulwark::watermark_test_texts
