// Storage efficiency of a SQLite store (issue #12 point 3): builds (or reuses) a store of N
// entries -- ~30-word texts over a 4,096-word vocabulary with Zipf-like word frequencies, the
// default d = 384 lexical embedder, three metadata fields per entry, batched AddBatch writes --
// then measures
//   * bytes on disk per entry: every file of the store directory after the store is closed (the
//     last connection checkpoints and removes the WAL), and a breakdown by table and index
//     (SQLite's dbstat virtual table) and by entry column (sums of length());
//   * open-to-first-search of a fresh process: `bulwark --store DIR -n bench search ...`, wall
//     time, CPU time and peak RSS (getrusage of the child), cold (the store's files evicted from the
//     page cache with posix_fadvise(DONTNEED) first) and warm (run again at once), with the
//     namespace's ranking hybrid (the default: the first search builds the lexical index) and then
//     vector (`bulwark retrieval set vector`; set back to hybrid at the end);
//   * in this process: MemoryStore::Open wall time and VmRSS / VmHWM before and after it, after the
//     first (hybrid) search and after a first search with a metadata filter, against the vector
//     bytes (N x d x 4).
// A plain bounded program (not Google Benchmark: one measurement of a store that takes minutes to
// build), printing one report to stdout:
//
//   build-stor/bench/store_size_bench --entries=100000 [--dir=DIR] [--keep] [--max_build_s=1800]
//                                     [--bulwark=PATH] [--no_in_process] [--export_jsonl=PATH]
//                                     [--no_cli] [--open_config=JSON]
//
// --no_cli skips the `bulwark search` processes (and keeps the snapshot as it is): only the in-process
// open is measured, with --open_config as its StoreOptions::retrieval_config (e.g. {"stem": false}:
// lexical terms unlike the snapshot's, so its BM25 indexes are not restored: the RSS of the rest).
//
// --export_jsonl writes the same entries as JSONL and builds nothing: `bulwark add -f` of another
// build (in batches of --batch lines) then makes the same store in that build's format.
//
// With --dir naming an existing store, the build is skipped (measure a store made by another
// version); a new --dir is kept. Without --dir the store is built in a temporary directory and
// removed at the end unless --keep.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "storage/sqlite/raw_sql.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark {
namespace {

constexpr char kNs[] = "bench";
constexpr int kDimension = 384;  // the default lexical embedder's

struct Flags {
  size_t entries = 100'000;
  size_t batch = 10'000;
  std::filesystem::path dir;
  bool keep = false;
  bool in_process = true;              // --no_in_process: only the fresh `bulwark search` processes
  bool cli = true;                     // --no_cli: only the in-process open (the snapshot as it is)
  nlohmann::json open_config;          // --open_config=JSON: the in-process open's retrieval_config
  std::filesystem::path export_jsonl;  // --export_jsonl=PATH: write the entries, build nothing
  double max_build_s = 1800;
  std::string bulwark = BULWARK_CLI_PATH;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// A pronounceable word per index: two or three consonant-vowel syllables.
std::string Word(size_t i) {
  static constexpr char kC[] = "bdfgklmnprstvz";
  static constexpr char kV[] = "aeiou";
  std::string w;
  for (int s = 0; s < 2 + static_cast<int>(i % 2); ++s) {
    w += kC[i % 14];
    i /= 14;
    w += kV[i % 5];
    i /= 5;
  }
  return w;
}

// ~30-word memories with three metadata fields, reproducible from `first` (the entry's index).
std::vector<NewEntry> MakeEntries(size_t first, size_t n) {
  std::mt19937_64 rng(first * 7919 + 1);
  // Zipf-like: P(word i) ~ 1 / (i + 10), over 4,096 words.
  static const std::vector<double> weights = [] {
    std::vector<double> w(4096);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / static_cast<double>(i + 10);
    return w;
  }();
  std::discrete_distribution<size_t> word(weights.begin(), weights.end());
  std::uniform_int_distribution<int> length(24, 36);
  static constexpr const char* kTopics[] = {"travel", "work", "health", "family", "finance", "hobby"};
  std::vector<NewEntry> entries(n);
  for (size_t j = 0; j < n; ++j) {
    NewEntry& e = entries[j];
    const int words = length(rng);
    for (int w = 0; w < words; ++w) e.text += (w ? " " : "") + Word(word(rng));
    e.metadata = {{"topic", kTopics[(first + j) % 6]},
                  {"session", "s-" + std::to_string((first + j) / 40)},
                  {"turn", static_cast<int64_t>((first + j) % 40)}};
    e.source = Source::kAgent;
  }
  return entries;
}

int Build(const Flags& flags) {
  const auto start = std::chrono::steady_clock::now();
  auto store = MemoryStore::Create(flags.dir, {});
  if (!store.ok()) {
    std::fprintf(stderr, "create: %s\n", store.status().ToString().c_str());
    return 1;
  }
  for (size_t done = 0; done < flags.entries;) {
    if (Seconds(start) > flags.max_build_s) {
      std::fprintf(stderr, "build stopped at %zu entries: over --max_build_s\n", done);
      return 1;
    }
    const size_t n = std::min(flags.batch, flags.entries - done);
    auto added = (*store)->AddBatch(kNs, MakeEntries(done, n), "bench");
    if (!added.ok()) {
      std::fprintf(stderr, "add at %zu: %s\n", done, added.status().ToString().c_str());
      return 1;
    }
    done += n;
    std::fprintf(stderr, "\rbuilt %zu / %zu (%.0f s)", done, flags.entries, Seconds(start));
  }
  std::fprintf(stderr, "\n");
  std::printf("build: %zu entries in %.1f s (%.0f entries/s)\n", flags.entries, Seconds(start),
              static_cast<double>(flags.entries) / Seconds(start));
  return 0;  // closing the store checkpoints and removes the WAL
}

// The store's files, not its index snapshot (a cache, counted apart: SnapshotBytes).
uint64_t DirectoryBytes(const std::filesystem::path& dir) {
  uint64_t total = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (!f.is_regular_file() || f.path().filename() == StoreLayout::kIndexSnapshotFile) continue;
    total += f.file_size();
    std::printf("  file %-28s %12ju bytes\n", f.path().filename().c_str(),
                static_cast<uintmax_t>(f.file_size()));
  }
  return total;
}

// The index snapshot's size (0 if there is none).
uint64_t SnapshotBytes(const std::filesystem::path& dir) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(dir / StoreLayout::kIndexSnapshotFile, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

void PrintQuery(RawSqlFile& db, const char* title, const std::string& sql, double per) {
  auto rows = db.Query(sql);
  if (!rows.ok()) {
    std::printf("  %s: %s\n", title, rows.status().ToString().c_str());
    return;
  }
  std::printf("  %s (bytes, bytes per entry):\n", title);
  for (const auto& row : *rows) {
    const int64_t bytes = SqlInt(row[1]);
    std::printf("    %-26s %12jd %9.1f\n", SqlBytes(row[0]).c_str(), static_cast<intmax_t>(bytes),
                static_cast<double>(bytes) / per);
  }
}

void Breakdown(const std::filesystem::path& db_path, size_t entries) {
  auto db = RawSqlFile::Open(db_path);
  if (!db.ok()) {
    std::printf("  breakdown: %s\n", db.status().ToString().c_str());
    return;
  }
  const double per = static_cast<double>(entries);
  auto page = (*db)->Query("PRAGMA page_size");
  if (page.ok() && !page->empty())
    std::printf("  page_size %jd\n", static_cast<intmax_t>(SqlInt((*page)[0][0])));
  PrintQuery(**db, "pages by table and index (dbstat)",
             "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 14", per);
  PrintQuery(**db, "entries columns (sum of length())",
             "SELECT 'embedding', SUM(length(embedding)) FROM entries UNION ALL "
             "SELECT 'text', SUM(length(text)) FROM entries UNION ALL "
             "SELECT 'report', SUM(length(report)) FROM entries UNION ALL "
             "SELECT 'metadata', SUM(length(metadata)) FROM entries UNION ALL "
             "SELECT 'id+namespace+principal', SUM(length(id)+length(namespace)+length(principal)) "
             "FROM entries UNION ALL "
             "SELECT 'source+kind+state', SUM(length(source)+length(kind)+length(state)) FROM entries "
             "UNION ALL SELECT 'tag', SUM(length(tag)) FROM entries",
             per);
  PrintQuery(**db, "history columns (sum of length())",
             "SELECT 'detail', SUM(length(detail)) FROM history UNION ALL "
             "SELECT 'tag+link', SUM(length(tag)+length(link)) FROM history UNION ALL "
             "SELECT 'entry_id+namespace+event+actor', "
             "SUM(length(entry_id)+length(namespace)+length(event)+length(actor)) FROM history",
             per);
  auto sample = (*db)->Query("SELECT report FROM entries LIMIT 1");
  if (sample.ok() && !sample->empty()) std::printf("  a report: %s\n", SqlBytes((*sample)[0][0]).c_str());
}

// Evicts the store's files from the page cache (clean pages only: the store is closed).
void DropCache(const std::filesystem::path& dir) {
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const int fd = open(f.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

// Runs `bulwark --store DIR -n bench <args>` in a fresh process (stdout discarded); returns its exit
// code (-1 if it did not exit) and fills `usage`.
int RunCli(const Flags& flags, std::vector<std::string> args, rusage* usage) {
  const std::string store = flags.dir.string();
  args.insert(args.begin(), {"bulwark", "--store", store, "-n", kNs});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execv(flags.bulwark.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  wait4(pid, &status, 0, usage);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs `bulwark search` in a fresh process; prints its wall time, CPU time and peak RSS.
void TimeCliSearch(const Flags& flags, const char* label) {
  const auto start = std::chrono::steady_clock::now();
  rusage usage{};
  const int rc = RunCli(flags, {"search", Word(3) + " " + Word(17) + " " + Word(250), "-k", "5"}, &usage);
  const double wall = Seconds(start);
  const double user = static_cast<double>(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec / 1e6;
  const double sys = static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6;
  std::printf(
      "  bulwark search (%s): exit %d, %.3f s wall, %.3f s user, %.3f s sys = %.3f s CPU, peak RSS %.1f MB; "
      "index snapshot now %ju bytes\n",
      label, rc, wall, user, sys, user + sys, static_cast<double>(usage.ru_maxrss) / 1024.0,
      static_cast<uintmax_t>(SnapshotBytes(flags.dir)));
}

// `bulwark retrieval set <ranking>` for the benchmark's namespace; false (printed) if it failed.
bool SetRetrieval(const Flags& flags, const char* ranking) {
  rusage usage{};
  const int rc = RunCli(flags, {"retrieval", "set", ranking}, &usage);
  if (rc != 0) std::printf("  bulwark retrieval set %s: exit %d\n", ranking, rc);
  return rc == 0;
}

// VmRSS and VmHWM of this process, in MB.
std::pair<double, double> Rss() {
  std::ifstream in("/proc/self/status");
  std::string line;
  double rss = 0, hwm = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) rss = std::atof(line.c_str() + 6) / 1024.0;
    if (line.starts_with("VmHWM:")) hwm = std::atof(line.c_str() + 6) / 1024.0;
  }
  return {rss, hwm};
}

void OpenInProcess(const Flags& flags, size_t entries) {
  const auto [rss0, hwm0] = Rss();
  const auto start = std::chrono::steady_clock::now();
  auto store = MemoryStore::Open(flags.dir, {.retrieval_config = flags.open_config});
  const double open_s = Seconds(start);
  if (!store.ok()) {
    std::printf("  open: %s\n", store.status().ToString().c_str());
    return;
  }
  const auto [rss1, hwm1] = Rss();
  const auto search_start = std::chrono::steady_clock::now();
  auto result = (*store)->Search(kNs, Word(3) + " " + Word(17), {});
  const double search_s = Seconds(search_start);
  const auto [rss2, hwm2] = Rss();
  const auto filtered_start = std::chrono::steady_clock::now();
  auto filtered = (*store)->Search(kNs, Word(5) + " " + Word(40), {.metadata_filter = {{"topic", "travel"}}});
  const double filtered_s = Seconds(filtered_start);
  const auto [rss3, hwm3] = Rss();
  const double vectors_mb = static_cast<double>(entries) * kDimension * 4 / (1024.0 * 1024.0);
  const EntryStore::OpenReport report = (*store)->impl().entries->open_report();
  std::printf(
      "  in process: the open %s (BM25 indexes in it: %d, read at the first hybrid search: %d)\n",
      report.from_snapshot ? "started from the index snapshot" : "scanned the rows (no usable snapshot)",
      report.lexical_from_snapshot, report.lexical_restored);
  std::printf(
      "  in process: open %.3f s, first search %.4f s (%s, %zu hits), first filtered search %.4f s (%s)\n",
      open_s, search_s, result.ok() ? "ok" : result.status().ToString().c_str(),
      result.ok() ? result->hits.size() : 0, filtered_s,
      filtered.ok() ? "ok" : filtered.status().ToString().c_str());
  std::printf(
      "  VmRSS before open %.1f MB, after open %.1f MB, after the search %.1f MB, after the filtered search "
      "%.1f MB; VmHWM %.1f -> %.1f MB\n",
      rss0, rss1, rss2, rss3, hwm0, std::max({hwm1, hwm2, hwm3}));
  std::printf(
      "  vector bytes %.1f MB; RSS added by open %.1f MB = %.2f x the vector bytes (%.2f x after both "
      "searches)\n",
      vectors_mb, rss1 - rss0, (rss1 - rss0) / vectors_mb, (rss3 - rss0) / vectors_mb);
}

// Writes the entries Build would add as JSONL ({"text", "metadata", "source"} a line, what `bulwark
// add -f` reads), so that another build of Bulwark can make the same store.
int ExportJsonl(const Flags& flags) {
  std::ofstream out(flags.export_jsonl);
  for (size_t done = 0; done < flags.entries && out;) {
    const size_t n = std::min(flags.batch, flags.entries - done);
    for (const NewEntry& e : MakeEntries(done, n)) {
      out << nlohmann::json{{"text", e.text}, {"metadata", e.metadata}, {"source", "agent"}}.dump() << "\n";
    }
    done += n;
  }
  return out ? 0 : 1;
}

int Run(Flags flags) {
  if (!flags.export_jsonl.empty()) return ExportJsonl(flags);
  std::filesystem::path temp;
  if (flags.dir.empty()) {
    temp = std::filesystem::temp_directory_path() / ("store_size_bench." + std::to_string(getpid()));
    flags.dir = temp;
  }
  if (!std::filesystem::exists(flags.dir / "bulwark.db")) {
    if (int rc = Build(flags); rc != 0) return rc;
  } else {
    std::printf("reusing the store in %s\n", flags.dir.c_str());
  }
  auto counted = RawSqlFile::Open(flags.dir / "bulwark.db");
  if (!counted.ok()) return 1;
  auto count = (*counted)->Query("SELECT count(*) FROM entries");
  const size_t entries = count.ok() && !count->empty() ? static_cast<size_t>(SqlInt((*count)[0][0])) : 0;
  counted->reset();
  std::printf("store: %zu entries, d = %d\n", entries, kDimension);
  const uint64_t bytes = DirectoryBytes(flags.dir);
  std::printf("  on disk: %ju bytes = %.0f bytes per entry\n", static_cast<uintmax_t>(bytes),
              static_cast<double>(bytes) / static_cast<double>(std::max<size_t>(entries, 1)));
  Breakdown(flags.dir / "bulwark.db", std::max<size_t>(entries, 1));
  std::printf(
      "  index snapshot (a cache, not counted above): %ju bytes = %.0f bytes per entry\n",
      static_cast<uintmax_t>(SnapshotBytes(flags.dir)),
      static_cast<double>(SnapshotBytes(flags.dir)) / static_cast<double>(std::max<size_t>(entries, 1)));
  if (!flags.cli) {
    if (flags.in_process) OpenInProcess(flags, entries);
    return 0;
  }
  // Without a snapshot first (that process writes one at its close), then from the snapshot.
  std::filesystem::remove(flags.dir / StoreLayout::kIndexSnapshotFile);
  DropCache(flags.dir);
  TimeCliSearch(flags, "hybrid, cold page cache, no snapshot (writes one at close)");
  DropCache(flags.dir);
  TimeCliSearch(flags, "hybrid, cold page cache, snapshot");
  TimeCliSearch(flags, "hybrid, warm page cache, snapshot");
  TimeCliSearch(flags, "hybrid, warm page cache, snapshot, again");
  if (SetRetrieval(flags, "vector")) {
    TimeCliSearch(flags, "vector, warm page cache, snapshot");
    TimeCliSearch(flags, "vector, warm page cache, snapshot, again");
    DropCache(flags.dir);
    TimeCliSearch(flags, "vector, cold page cache, snapshot");
    SetRetrieval(flags, "hybrid");
  }
  if (flags.in_process) OpenInProcess(flags, entries);
  if (!temp.empty() && !flags.keep) std::filesystem::remove_all(temp);
  return 0;
}

}  // namespace
}  // namespace bulwark

int main(int argc, char** argv) {
  bulwark::Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string_view name) -> const char* {
      return arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '='
                 ? argv[i] + name.size() + 1
                 : nullptr;
    };
    if (const char* v = value("--entries")) {
      flags.entries = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--batch")) {
      flags.batch = std::max<size_t>(1, std::strtoull(v, nullptr, 10));
    } else if (const char* v = value("--dir")) {
      flags.dir = v;
    } else if (const char* v = value("--max_build_s")) {
      flags.max_build_s = std::atof(v);
    } else if (const char* v = value("--bulwark")) {
      flags.bulwark = v;
    } else if (arg == "--keep") {
      flags.keep = true;
    } else if (const char* v = value("--export_jsonl")) {
      flags.export_jsonl = v;
    } else if (arg == "--no_in_process") {
      flags.in_process = false;
    } else if (arg == "--no_cli") {
      flags.cli = false;
    } else if (const char* v = value("--open_config")) {
      flags.open_config = nlohmann::json::parse(v, nullptr, /*allow_exceptions=*/false);
      if (flags.open_config.is_discarded()) {
        std::fprintf(stderr, "--open_config is not JSON\n");
        return 2;
      }
    } else {
      std::fprintf(
          stderr,
          "usage: store_size_bench [--entries=N] [--batch=N] [--dir=DIR] [--keep] [--max_build_s=S] "
          "[--bulwark=PATH] [--no_in_process] [--no_cli] [--open_config=JSON] [--export_jsonl=PATH]\n");
      return 2;
    }
  }
  if (flags.entries == 0 || flags.entries > 10'000'000) {
    std::fprintf(stderr, "--entries must be 1 .. 10,000,000\n");
    return 2;
  }
  return bulwark::Run(flags);
}
