// DetectorRegistry: the closed set of write-time detectors (DESIGN 4.5, issue #12 points 5-6). A
// detector is one file (its WriteDetector, its options, factory, defaults and calibration hook,
// described by one DetectorDescriptor) plus one registration line: a line in detector_list.inc for
// the built-in detectors, or a DetectorRegistration object (tests, plug-ins). Everything that used
// to name detectors iterates the registry instead: the gate configuration's parsing and printing
// (write_gate_config.h), the gate (write_gate.h), the calibration record (calibration.h),
// `bulwark calibrate`'s summary and the evaluation's detector lists (bulwark-lab eval).
#pragma once

#include <absl/container/inlined_vector.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status_macros.h"

namespace bulwark {

class Embedder;
class WatermarkScheme;
class WriteDetector;
struct CalibrationInput;

// Strict reader of one JSON object of the gate configuration: every key of the object must be one
// that a Get asks for (Finish), and every value must have the asked-for type.
class ConfigReader {
 public:
  // `path` prefixes the keys in error messages ("memsad." for the memsad section).
  ConfigReader(const nlohmann::json& object, std::string path) : object_(object), path_(std::move(path)) {}

  // Leaves *out unchanged (its default) when `key` is absent; InvalidArgument "gate config:
  // <path><key> has the wrong type" when its value does not convert to T.
  template <typename T>
  [[nodiscard]] absl::Status Get(const char* key, T* out) {
    seen_.push_back(key);
    auto it = object_.find(key);
    if (it == object_.end()) return absl::OkStatus();
    try {
      *out = it->template get<T>();
    } catch (const nlohmann::json::exception&) {
      return absl::InvalidArgumentError(absl::StrCat("gate config: ", path_, key, " has the wrong type"));
    }
    return absl::OkStatus();
  }
  // InvalidArgument "gate config: <path><what>" unless `ok`.
  [[nodiscard]] absl::Status Check(bool ok, const std::string& what) const;
  // InvalidArgument "gate config: unknown field <path><key>" for a key no Get asked for.
  [[nodiscard]] absl::Status Finish() const;

 private:
  const nlohmann::json& object_;
  std::string path_;
  std::vector<std::string> seen_;
};

// What the gate lends the factories: its embedder and its watermark scheme (the one the store
// marks text with, configured by the watermark section). Both outlive the detectors.
struct GateResources {
  const Embedder& embedder;
  const WatermarkScheme& watermark;
};

// What one detector's calibration hook fitted for a namespace. Each detector stores its own type,
// FittedValue<T>; NamespaceCalibration::Get<T> reads it back. FittedValue is the only subclass, and
// type() names its T (the address of kFittedTypeTag<T>, one per T), so that Get<T> is a pointer
// comparison instead of a dynamic_cast on every write (three per write were ~20 ns of the gate).
template <typename T>
inline constexpr char kFittedTypeTag = 0;
class DetectorCalibration {
 public:
  virtual ~DetectorCalibration() = default;
  const void* type() const { return type_; }

 protected:
  explicit DetectorCalibration(const void* type) : type_(type) {}

 private:
  const void* type_;
};
template <typename T>
class FittedValue final : public DetectorCalibration {
 public:
  explicit FittedValue(T v) : DetectorCalibration(&kFittedTypeTag<T>), value(std::move(v)) {}
  T value;
};

// A hook's result: what it fitted (nullptr: nothing to fit, the detector stays uncalibrated) and
// the share of the reference set its fitted threshold flags, and which entries those are
// (reference_flags[i] for reference entry i; empty when the hook cannot say, and then the
// composite calibration counts it by reference_fpr alone, as if its flags fell on entries no
// other detector flags).
struct CalibrationFit {
  std::shared_ptr<const DetectorCalibration> fitted;
  double reference_fpr = 0;
  std::vector<uint8_t> reference_flags;
};

// How a detector calibrates from a namespace's reference set (`bulwark calibrate`), and how its
// part of the stored calibration record is written and read.
struct CalibrationHook {
  // Fits from the reference set and history in `input`. `instance` is the gate's detector when it
  // is enabled, else nullptr (standalone calibration). InvalidArgument for unusable input.
  std::function<absl::StatusOr<CalibrationFit>(const CalibrationInput& input, const WriteDetector* instance)>
      fit;
  // Writes the fitted value into the record: record[name] (the summary an operator reads) and,
  // with `with_data`, whatever else loading needs (kept out of the summary).
  std::function<void(const DetectorCalibration& fitted, bool with_data, nlohmann::json* record)> store;
  // Reads it back from a record whose record[name] is present and not null. DataLoss (or a json
  // exception, which the caller turns into DataLoss) for a malformed record.
  std::function<absl::StatusOr<std::shared_ptr<const DetectorCalibration>>(const nlohmann::json& record)>
      load;
  // The lines `bulwark calibrate` prints for record[name] of a summary (each "  ...\n").
  std::function<std::string(const nlohmann::json& summary)> describe;
};

// Which side of the threshold a detector flags.
enum class FlagSide { kAbove, kBelow };

struct DetectorDescriptor {
  std::string name;  // the configuration section, the report key, the calibration record key
  bool enabled_by_default = true;
  // True for a detector that judges text by what it says, so that it also screens an entry's
  // string metadata values (WriteGate::EvaluateMetadata).
  bool screens_metadata = false;
  FlagSide flags = FlagSide::kAbove;
  // True when the detector needs every legitimate writer's cooperation (the watermark): the
  // evaluation's "composite_no_watermark" leaves such detectors out.
  bool needs_writer_marks = false;
  // True when the detector reads the text's slots (conflict, flood): the gate extracts them once
  // per write for all such detectors (WriteCandidate::slots).
  bool uses_slots = false;
  // True when the detector reads the gate's table of the store's active memories (memory_table.h:
  // conflict, llm_judge): the write path keeps that table only while such a detector is enabled.
  bool reads_memories = false;
  // True when the detector calls a service outside the store (llm_judge: a chat endpoint): the
  // evaluations (bulwark-lab eval), which enable every other detector, leave it out.
  bool calls_service = false;
  // Reads the detector's section (without "enabled", which the gate configuration reads) with
  // defaults for absent keys, validates it, and returns every option with its value. The factory
  // gets that normalized object. InvalidArgument (via `section`) for a bad value.
  std::function<absl::StatusOr<nlohmann::json>(ConfigReader& section)> options;
  // Builds the detector from its normalized options. InvalidArgument / NotFound for resources
  // the options name that are unusable (e.g. a rules file).
  std::function<absl::StatusOr<std::unique_ptr<WriteDetector>>(const nlohmann::json& options,
                                                               const GateResources& resources)>
      create;
  std::optional<CalibrationHook> calibration;  // absent: the detector has nothing to calibrate
};

// The registered detectors. Built-ins come first, in detector_list.inc order (the gate's order,
// hence the order of reports and quarantine reasons), then run-time registrations in order.
class DetectorRegistry {
 public:
  static DetectorRegistry& Global();

  // A snapshot of the registered descriptors (they outlive their registration's use).
  std::vector<const DetectorDescriptor*> All() const;
  // nullptr for an unknown name.
  const DetectorDescriptor* Find(std::string_view name) const;

  // InvalidArgument for a descriptor without a name, options or factory, or whose name is
  // "target_fpr" (the configuration's own key); AlreadyExists for a registered name. `descriptor`
  // must outlive its registration.
  [[nodiscard]] absl::Status Register(const DetectorDescriptor* descriptor);
  void Unregister(const DetectorDescriptor* descriptor);

 private:
  DetectorRegistry();
  mutable absl::Mutex mu_;
  std::vector<const DetectorDescriptor*> descriptors_ ABSL_GUARDED_BY(mu_);
};

// Registers a descriptor for the lifetime of this object (one line per detector outside the
// built-in list); `status()` says whether it was accepted.
class DetectorRegistration {
 public:
  explicit DetectorRegistration(const DetectorDescriptor* descriptor);
  ~DetectorRegistration();
  DetectorRegistration(const DetectorRegistration&) = delete;
  DetectorRegistration& operator=(const DetectorRegistration&) = delete;
  const absl::Status& status() const { return status_; }

 private:
  const DetectorDescriptor* descriptor_;
  absl::Status status_;
};

// Reads a detector's normalized options back into its options struct (whose reader function
// `read` also serves DetectorDescriptor::options). The options were validated when the
// configuration was parsed, so an error here is an internal one.
template <typename Options>
absl::StatusOr<Options> ParseDetectorOptions(const nlohmann::json& options, const std::string& name,
                                             absl::Status (*read)(ConfigReader&, Options*)) {
  Options out;
  if (options.is_null()) return out;
  ConfigReader reader(options, name + ".");
  BULWARK_RETURN_IF_ERROR(read(reader, &out));
  BULWARK_RETURN_IF_ERROR(reader.Finish());
  return out;
}

}  // namespace bulwark
