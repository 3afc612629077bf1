// Embedding throughput of the lexical embedder on memory-sized texts (about 30 words each, the
// size of a typical agent memory entry), with WordNet synonym canonicalization off (synonyms 0),
// on (1), and on with the WordNet gloss group (2, embed/wordnet_glosses.h, at its measured
// setting), plus the one-time cost of loading WordNet and the gloss table. Target: <= 20 us per entry in a
// Release/RelWithDebInfo build.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "embed/lexical_embedder.h"
#include "embed/wordnet_canonicalizer.h"
#include "embed/wordnet_glosses.h"

namespace bulwark {
namespace {

// 16 entries of 28-34 words in the style of agent memories.
const std::vector<std::string>& Entries() {
  static const auto* entries = new std::vector<std::string>{
      "The user prefers dark mode in every editor, uses Vim key bindings, and asked us to never "
      "enable autosave because it once overwrote an unsaved draft of the quarterly report.",
      "Alice from the design team moved the weekly sync to Friday afternoons at three, and she "
      "wants the agenda shared in the team channel at least one day before the meeting.",
      "The production database runs PostgreSQL 15 on two replicas in Frankfurt; backups are "
      "taken every six hours and kept for thirty days in an encrypted storage bucket.",
      "User is allergic to peanuts and shellfish, is vegetarian on weekdays, and likes spicy "
      "Thai food, so restaurant suggestions should avoid seafood places near the office.",
      "Bob works as a senior software engineer at a small startup in Berlin and is learning "
      "Rust in the evenings to rewrite the billing service that keeps crashing under load.",
      "The flight to Tokyo departs at 9:40 from gate 22 on Tuesday; the user booked an aisle "
      "seat, ordered a vegetarian meal, and needs a taxi to the airport at six.",
      "Remind the user to call her mother every Sunday evening, and to send flowers before the "
      "anniversary on June 14th because last year the order arrived two days late.",
      "Deploy the payments service with docker compose on the staging server first; the team "
      "agreed that nothing goes to production on Fridays after the outage in March.",
      "The cat knocked a glass off the kitchen table again, so the user bought plastic cups and "
      "asked for ideas to keep the kitten away from the counters while cooking dinner.",
      "She is training for the Berlin marathon next spring, runs forty kilometers a week, and "
      "wants a reminder to replace her running shoes after every eight hundred kilometers.",
      "The invoice for March was paid late because the finance mailbox was full; the vendor "
      "agreed to waive the fee if April is paid within fourteen days of receipt.",
      "Our API keys live in the vault under the path secrets/prod/payments and rotate every "
      "ninety days; never paste them into chat, tickets, or commit messages.",
      "The user's daughter starts school in September, needs a new backpack and shoes, and the "
      "parents meeting is on the second Thursday of the month at seven o'clock.",
      "Customer feedback says the mobile app feels slow on older Android phones, especially "
      "the search screen, which loads every product image before showing any results.",
      "The quarterly planning doc is in the shared drive; the user owns the hiring section and "
      "promised a first draft with budget numbers to the director by next Wednesday.",
      "He bought a used electric car last month, charges it at the office garage, and asked how "
      "to claim the tax credit for the home charger installed by the electrician.",
  };
  return *entries;
}

void BM_LexicalEmbed(benchmark::State& state) {
  std::shared_ptr<const WordNetCanonicalizer> canonicalizer;
  if (state.range(0) != 0) {
    auto loaded = WordNetCanonicalizer::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
    if (!loaded.ok()) {
      state.SkipWithError("WordNet data not available");
      return;
    }
    canonicalizer = *loaded;
  }
  GlossOptions glosses;
  if (state.range(0) == 2) {
    auto table = WordNetGlosses::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
    if (!table.ok()) {
      state.SkipWithError("WordNet data not available");
      return;
    }
    glosses.glosses = *table;
  }
  const LexicalEmbedder embedder(canonicalizer, glosses);
  const std::vector<std::string>& entries = Entries();
  std::vector<float> out(LexicalEmbedder::kDimension);
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& text = entries[i++ % entries.size()];
    embedder.EmbedInto(text, out);
    benchmark::DoNotOptimize(out.data());
    bytes += text.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_LexicalEmbed)->ArgName("synonyms")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// Embed() with its result vector allocation, as the store calls it.
void BM_LexicalEmbedAllocating(benchmark::State& state) {
  auto loaded = WordNetCanonicalizer::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
  const LexicalEmbedder embedder(loaded.ok() ? *loaded : nullptr);
  const std::vector<std::string>& entries = Entries();
  size_t i = 0;
  for (auto _ : state) {
    auto vec = embedder.Embed(entries[i++ % entries.size()]);
    benchmark::DoNotOptimize(vec);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LexicalEmbedAllocating)->Unit(benchmark::kMicrosecond);

// The one-time cost of parsing the WordNet files (what the first lexical embedder in a process
// pays when synonyms are on).
void BM_WordNetLoad(benchmark::State& state) {
  for (auto _ : state) {
    auto loaded = WordNetCanonicalizer::Load(std::string(WordNetCanonicalizer::kDefaultDir));
    if (!loaded.ok()) {
      state.SkipWithError("WordNet data not available");
      return;
    }
    benchmark::DoNotOptimize(loaded->get());
  }
}
BENCHMARK(BM_WordNetLoad)->Iterations(3)->Unit(benchmark::kMillisecond);

// The one-time cost of building the gloss table and the canonicalizer it needs (a directory key
// no other benchmark used, so both are loaded): what the first gloss-enabled embedder in a
// process pays; minus BM_WordNetLoad, the gloss table's own share. One iteration: Shared() caches.
void BM_WordNetGlossLoad(benchmark::State& state) {
  const std::string dir(WordNetCanonicalizer::kDefaultDir);
  for (auto _ : state) {
    auto loaded = WordNetGlosses::Shared(dir + "/");  // a key no earlier benchmark used
    if (!loaded.ok()) {
      state.SkipWithError("WordNet data not available");
      return;
    }
    benchmark::DoNotOptimize(loaded->get());
  }
}
BENCHMARK(BM_WordNetGlossLoad)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bulwark

BENCHMARK_MAIN();
