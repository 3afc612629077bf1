// libFuzzer target for the stored query-gate model (GateModel::Deserialize, doc/gate_format.md):
// any bytes either fail with DataLoss or give a model whose serialization deserializes again to
// the same bytes. Never a crash, a hang or an allocation the sizes in the header did not bound.
//
//   scripts/fuzz [SECONDS]
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gate/gate_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto model = bulwark::GateModel::Deserialize(bytes);
  if (!model.ok()) {
    if (model.status().code() != absl::StatusCode::kDataLoss) std::abort();
    return 0;
  }
  const std::string again = model->Serialize();
  auto round_trip = bulwark::GateModel::Deserialize(again);
  if (!round_trip.ok() || round_trip->Serialize() != again) std::abort();
  return 0;
}
