// Kneser-Ney bigram model (see bigram_lm.h).
#include "honeypot/bigram_lm.h"

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace bulwark::honeypot {
namespace {

constexpr uint64_t kMaxFileBytes = uint64_t{256} << 20;

absl::StatusOr<std::string> ReadSmallFile(const std::filesystem::path& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read ", path.string(), ": ", ec.message()));
  if (size > kMaxFileBytes)
    return absl::ResourceExhaustedError(absl::StrCat(path.string(), " is over 256 MiB"));
  std::ifstream in(path, std::ios::binary);
  std::string data(size, '\0');
  if (!in.read(data.data(), static_cast<std::streamsize>(size))) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  }
  return data;
}

// Appends the pieces of one gloss ("definition; \"example\"; ...") to `out`.
void SplitGloss(std::string_view gloss, std::vector<std::string>* out) {
  size_t start = 0;
  while (start < gloss.size()) {
    size_t end = gloss.find(';', start);
    if (end == std::string_view::npos) end = gloss.size();
    std::string_view piece = gloss.substr(start, end - start);
    while (!piece.empty() && (piece.front() == ' ' || piece.front() == '"')) piece.remove_prefix(1);
    while (!piece.empty() && (piece.back() == ' ' || piece.back() == '"' || piece.back() == '\n')) {
      piece.remove_suffix(1);
    }
    if (!piece.empty()) out->emplace_back(piece);
    start = end + 1;
  }
}

}  // namespace

std::vector<std::string> BigramLm::Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string cur;
  for (char ch : text) {
    char c = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      tokens.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) tokens.push_back(std::move(cur));
  return tokens;
}

absl::StatusOr<std::vector<std::string>> BigramLm::WordNetSentences(const std::string& dir) {
  std::vector<std::string> sentences;
  for (std::string_view pos : {"noun", "verb", "adj", "adv"}) {
    const std::filesystem::path path = std::filesystem::path(dir) / absl::StrCat("data.", std::string(pos));
    absl::StatusOr<std::string> data = ReadSmallFile(path);
    if (!data.ok()) return data.status();
    const size_t before = sentences.size();
    std::string_view rest(*data);
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
      if (line.empty() || line[0] == ' ') continue;  // the licence header lines start with spaces
      const size_t bar = line.find(" | ");
      if (bar != std::string_view::npos) SplitGloss(line.substr(bar + 3), &sentences);
    }
    if (sentences.size() == before) return absl::DataLossError(absl::StrCat(path.string(), " has no gloss"));
  }
  return sentences;
}

absl::StatusOr<std::unique_ptr<BigramLm>> BigramLm::TrainOnWordNet(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> sentences = WordNetSentences(dir);
  if (!sentences.ok()) return sentences.status();
  return Train(*sentences);
}

absl::StatusOr<std::shared_ptr<const BigramLm>> BigramLm::SharedWordNet(const std::string& dir) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* cache = new absl::flat_hash_map<std::string, std::shared_ptr<const BigramLm>>();
  absl::MutexLock lock(&mu);  // held while training: a second caller waits instead of training again
  if (auto it = cache->find(dir); it != cache->end()) return it->second;
  absl::StatusOr<std::unique_ptr<BigramLm>> lm = TrainOnWordNet(dir);
  if (!lm.ok()) return lm.status();
  std::shared_ptr<const BigramLm> shared = *std::move(lm);
  (*cache)[dir] = shared;
  return shared;
}

int BigramLm::Intern(std::string_view token) {
  auto it = ids_.find(token);
  if (it != ids_.end()) return it->second;
  const int id = static_cast<int>(tokens_.size());
  tokens_.emplace_back(token);
  ids_.emplace(std::string(token), id);
  unigram_.push_back(0);
  return id;
}

absl::StatusOr<std::unique_ptr<BigramLm>> BigramLm::Train(std::span<const std::string> sentences) {
  std::unique_ptr<BigramLm> lm(new BigramLm());
  lm->Intern("<s>");
  lm->Intern("</s>");
  for (const std::string& s : sentences) {
    const std::vector<std::string> tokens = Tokenize(s);
    if (tokens.empty()) continue;
    ++lm->sentence_count_;
    int prev = kBegin;
    for (const std::string& t : tokens) {
      const int id = lm->Intern(t);
      ++lm->unigram_[static_cast<size_t>(id)];
      ++lm->bigrams_[Pair(prev, id)];
      prev = id;
    }
    ++lm->bigrams_[Pair(prev, kEnd)];
    lm->token_count_ += tokens.size();
  }
  if (lm->token_count_ == 0) return absl::InvalidArgumentError("bigram LM: no tokens to train on");
  lm->Finish();
  return lm;
}

void BigramLm::Finish() {
  const size_t v = tokens_.size();
  history_.assign(v, 0);
  followers_.assign(v, 0);
  continuation_.assign(v, 0);
  uint64_t n1 = 0, n2 = 0;
  for (const auto& [pair, count] : bigrams_) {
    const auto a = static_cast<size_t>(pair >> 32), b = static_cast<size_t>(pair & 0xffffffffu);
    history_[a] += count;
    ++followers_[a];
    ++continuation_[b];
    n1 += count == 1;
    n2 += count == 2;
  }
  bigram_types_ = bigrams_.size();
  if (n1 > 0) discount_ = static_cast<double>(n1) / static_cast<double>(n1 + 2 * n2);
}

int BigramLm::Id(std::string_view token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnknown : it->second;
}

uint32_t BigramLm::Count(std::string_view token) const {
  const int id = Id(token);
  return id < 2 ? 0 : unigram_[static_cast<size_t>(id)];
}

double BigramLm::LogProb(int prev, int word) const {
  // Types that can follow: every token but <s>, plus one for all unseen words.
  const double types = static_cast<double>(tokens_.size());
  const double cont = ((word >= 0 ? continuation_[static_cast<size_t>(word)] : 0) + 0.5) /
                      (static_cast<double>(bigram_types_) + 0.5 * types);
  if (prev < 0 || history_[static_cast<size_t>(prev)] == 0) return std::log(cont);
  const double h = history_[static_cast<size_t>(prev)];
  double c = 0;
  if (word >= 0) {
    auto it = bigrams_.find(Pair(prev, word));
    if (it != bigrams_.end()) c = it->second;
  }
  const double p =
      std::max(c - discount_, 0.0) / h + discount_ * followers_[static_cast<size_t>(prev)] / h * cont;
  return std::log(p);
}

double BigramLm::MeanLogProb(std::span<const std::string_view> words) const {
  if (words.empty()) return 0;
  double sum = 0;
  int prev = kBegin;
  for (std::string_view w : words) {
    const int id = Id(w);
    sum += LogProb(prev, id);
    prev = id;
  }
  sum += LogProb(prev, kEnd);
  return sum / static_cast<double>(words.size() + 1);
}

}  // namespace bulwark::honeypot
