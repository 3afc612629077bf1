// odd_token: flags a write holding a token spelled like no English word (odd_token.h), the shape
// of a trigger-keyed backdoor's trigger (issue #14 point 7). The score is the oddest judged letter
// run's bits per character under the character trigram model (char_trigram_model.h); it flags
// above `max_bits_per_char`. The default, 6.25, was set on data/corpora and
// data/injection/injection_train.jsonl's benign texts (doc/write_gate.md, "Odd-token triggers"):
// it flags none of data/corpora's 1,680 benign and reference memories and at most 1 % of the
// benign instructions (odd_token_test.cc). No calibration hook: like validation, its flags are
// fixed and the composite calibration counts them (calibration.h).
#include <absl/strings/str_format.h>

#include <string>

#include "core/status_macros.h"
#include "detect/char_trigram_model.h"
#include "detect/detectors.h"
#include "detect/odd_token.h"

namespace bulwark {
namespace {

struct OddTokenOptions {
  double max_bits_per_char = 6.25;
};

absl::Status ReadOddTokenOptions(ConfigReader& r, OddTokenOptions* o) {
  BULWARK_RETURN_IF_ERROR(r.Get("max_bits_per_char", &o->max_bits_per_char));
  return r.Check(o->max_bits_per_char > 0 && o->max_bits_per_char <= 20, "max_bits_per_char: (0, 20]");
}

// The flagged token and its oddest run (allocated only for a flagged write).
struct OddTokenPayload final : VerdictPayload {
  std::string token;
  std::string run;
};

class OddTokenDetector final : public WriteDetector {
 public:
  explicit OddTokenDetector(OddTokenOptions options) : options_(options) {}
  const DetectorDescriptor& descriptor() const override { return OddTokenDescriptor(); }

  void Prepare() const override { CharTrigramModel::Default(); }  // parses the compiled-in table

  DetectorVerdict Evaluate(const WriteCandidate& c, const NamespaceState&) const override {
    DetectorVerdict v{.by = this, .threshold = options_.max_bits_per_char, .calibrated = true};
    const OddestToken odd = FindOddestToken(c.text, CharTrigramModel::Default());
    v.score = odd.bits_per_char;
    v.flagged = v.score > v.threshold;
    if (v.flagged) {
      auto payload = std::make_shared<OddTokenPayload>();
      payload->token = std::string(c.text.substr(odd.token_offset, std::min<size_t>(odd.token_size, 80)));
      payload->run = std::string(c.text.substr(odd.run_offset, std::min<size_t>(odd.run_size, 80)));
      v.payload = std::move(payload);
    }
    return v;
  }

  std::string Reason(const DetectorVerdict& v) const override {
    const auto* p = static_cast<const OddTokenPayload*>(v.payload.get());
    return absl::StrFormat(
        "odd_token: '%s' is spelled like no English word ('%s': %.2f bits per character > %.2f), the shape "
        "of "
        "a backdoor trigger",
        p ? p->token : "", p ? p->run : "", v.score, v.threshold);
  }

  // {"token", "run"} of a flagged write; {} otherwise.
  nlohmann::json Detail(const DetectorVerdict& v) const override {
    const auto* p = static_cast<const OddTokenPayload*>(v.payload.get());
    if (p == nullptr) return nlohmann::json::object();
    return {{"token", p->token}, {"run", p->run}};
  }

 private:
  OddTokenOptions options_;
};

DetectorDescriptor MakeOddTokenDescriptor() {
  DetectorDescriptor d;
  d.name = "odd_token";
  // On by default: it flags none of data/corpora's 1,680 memories nor the held-out corpus's 487
  // benign writes, and short runs of code-like tokens are judged as abbreviations too, so host
  // names and ids ("db-stage-2", "cust-7f3a") pass (odd_token.h; doc/write_gate.md). gate.json
  // "odd_token": {"enabled": false} turns it off.
  d.enabled_by_default = true;
  // Not on metadata: string metadata values are often machine-made identifiers (session ids,
  // hashes, random keys), which are odd by construction.
  d.screens_metadata = false;
  d.options = [](ConfigReader& section) -> absl::StatusOr<nlohmann::json> {
    OddTokenOptions o;
    BULWARK_RETURN_IF_ERROR(ReadOddTokenOptions(section, &o));
    return nlohmann::json{{"max_bits_per_char", o.max_bits_per_char}};
  };
  d.create = [](const nlohmann::json& options,
                const GateResources&) -> absl::StatusOr<std::unique_ptr<WriteDetector>> {
    BULWARK_ASSIGN_OR_RETURN(const OddTokenOptions o, ParseDetectorOptions<OddTokenOptions>(
                                                          options, "odd_token", ReadOddTokenOptions));
    return std::make_unique<OddTokenDetector>(o);
  };
  return d;
}

}  // namespace

const DetectorDescriptor& OddTokenDescriptor() {
  static const DetectorDescriptor* descriptor = new DetectorDescriptor(MakeOddTokenDescriptor());
  return *descriptor;
}

}  // namespace bulwark
