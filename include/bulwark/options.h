// Options of a store: Options and its parts configure bulwark::DB (db.h), the public API, which
// translates them into the library's internal configurations (src/store/store_options.h). Every
// field states its default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "bulwark/env.h"

namespace bulwark {

// Which embedder turns texts into vectors (doc/embedders.md). A store keeps the fingerprint of
// the embedder it was created with and refuses to open with one whose vectors differ.
struct EmbedderOptions {
  enum class Kind {
    kAsCreated,  // Create: kLexical; Open: the configuration the store was created with
    kLexical,    // built in: hashed words and character n-grams, WordNet synonyms
    kBert,       // a local sentence-transformers directory (model_dir)
    kHttp,       // an OpenAI-compatible /v1/embeddings endpoint (url, model, dimension)
  };
  Kind kind = Kind::kAsCreated;
  bool synonyms = true;             // kLexical: WordNet synonym classes when the data is installed
  std::filesystem::path model_dir;  // kBert: required
  std::string url;                  // kHttp: required, e.g. "http://127.0.0.1:8080"
  std::string model;                // kHttp: required
  int dimension = 0;                // kHttp: required, 1 .. 65536
  std::string api_key_env;          // kHttp: environment variable holding the API key; empty: none
  int timeout_ms = 0;               // kHttp: 0 means the client's default
  // A custom embedder to use instead of `kind` (its fingerprint is checked like any other).
  std::shared_ptr<const Embedder> instance;
};

// The write gate (doc/write_gate.md): the detectors that screen every write before it is
// stored; a flagged write is quarantined, never lost. The typed fields are what an operator sets
// most; they override the same settings of the configuration file. Unset: the file's value, or
// the detector's default.
struct WriteGateOptions {
  // A gate configuration file (JSON, doc/write_gate.md) for the rest: the detectors' parameters.
  // Empty: <store dir>/gate.json when it exists.
  std::filesystem::path config_file;
  std::optional<double> target_fpr;  // calibration's false-positive rate, [0, 1); default 0.01
  // Detectors on or off. Defaults: memsad, memsad_plus, proactive, validation on; watermark,
  // conflict, flood off.
  std::optional<bool> memsad;
  std::optional<bool> memsad_plus;
  std::optional<bool> proactive;
  std::optional<bool> validation;
  std::optional<bool> watermark;
  std::optional<bool> conflict;
  std::optional<bool> flood;
};

// Smoothing of a search's results (SMSR; doc/api.md, "POST /v1/answer"): nruns uniform k-subsets of the
// m best candidates, a responder per subset and a majority vote with its certificate.
struct SmoothingSettings {
  int m = 20;     // candidates over-fetched; k .. 1000
  int k = 5;      // entries per run; 1 .. m
  int nruns = 5;  // runs; 1 .. 101
};

// The read path (doc/api.md, "POST /v1/memories/search"; doc/retrieval.md).
struct RetrievalOptions {
  enum class Ranking { kVector, kHybrid };
  // Ranking of namespaces without their own setting (`bulwark retrieval set`).
  Ranking ranking = Ranking::kHybrid;
  // Smooth every search with these settings. Default: smoothing only when a namespace's query
  // gate escalates a query (then with the default settings).
  std::optional<SmoothingSettings> smoothing;
  // The MemPot honeypot monitor (doc/honeypots.md) for namespaces without their own setting:
  // kMonitor observes searches against the namespace's honeypots, kBlock also refuses callers it
  // has flagged. Honeypots themselves are never returned, whatever this says.
  enum class Honeypots { kOff, kMonitor, kBlock };
  Honeypots honeypots = Honeypots::kMonitor;
  // A query gate fitted by another process takes effect within this long.
  int gate_refresh_ms = 1000;
};

struct StoreLimits {
  size_t max_text_bytes = 16 * 1024;      // per entry and per query; 1 .. 16 MiB
  size_t max_metadata_bytes = 16 * 1024;  // compact JSON dump of the metadata object
  size_t max_batch_entries = 100'000;     // entries in one AddBatch
};

// Everything DB::Create and DB::Open take.
struct Options {
  EmbedderOptions embedder;
  WriteGateOptions write_gate;
  RetrievalOptions retrieval;
  // The signing keyring. Default (empty): <store dir>/keyring.json.
  std::filesystem::path keyring_path;
  StoreLimits limits;
  // Searches see writes by other processes to the same store within this long; 0: checked before
  // every search; negative: never.
  int other_writers_check_ms = 100;
  // A store whose index holds at least this many entries leaves a keyed index snapshot
  // (<store dir>/index.snap) when it closes, from which the next open skips the row scan; an
  // untrusted cache, checked against the keyring and the history before use. Negative: none is
  // read or written.
  int64_t index_snapshot_min_rows = 10'000;
  Env* env = nullptr;  // clock and randomness; default Env::Default(); not owned
};

}  // namespace bulwark
