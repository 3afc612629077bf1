// libFuzzer target for the safetensors loader of the bert embedder (src/embed/bert/safetensors.h)
// and the weight lookup built on it (bert_weights.h). Every input is parsed as a safetensors file;
// it must either be refused with DataLoss or yield tensors that lie inside the input with exactly
// elements * dtype-size bytes, convert to float without reading outside them (ASan checks), and
// then be either accepted or refused with FailedPrecondition by LoadBertWeights for a tiny fixed
// BERT shape -- anything else aborts. The seed corpus (fuzz/corpus/safetensors/) holds small F32,
// F16/BF16/I64 files and a whole tiny BERT model of that shape, written by
//   src/embed/bert/testdata/make_random_bert.py DIR --hidden 4 --layers 1 --heads 2
//       --intermediate 8 --max-pos 8 --max-seq-length 8 --prefix --dtype F16
//
//   scripts/fuzz [SECONDS]      builds build-fuzz/ with clang and runs every target
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "embed/bert/bert_config.h"
#include "embed/bert/bert_weights.h"
#include "embed/bert/safetensors.h"

namespace {

using bulwark::bert::SafetensorsDtype;

// The shape of the seed model.
bulwark::bert::BertConfig TinyConfig() {
  bulwark::bert::BertConfig config;
  config.hidden_size = 4;
  config.num_hidden_layers = 1;
  config.num_attention_heads = 2;
  config.intermediate_size = 8;
  config.max_position_embeddings = 8;
  config.vocab_size = 164;
  config.type_vocab_size = 2;
  return config;
}

bool IsFloat(SafetensorsDtype dtype) {
  return dtype == SafetensorsDtype::kF32 || dtype == SafetensorsDtype::kF16 ||
         dtype == SafetensorsDtype::kBF16;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view buffer(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<bulwark::bert::SafetensorsFile> file =
      bulwark::bert::SafetensorsFile::Parse(buffer, {.max_header_bytes = 1 << 16, .max_tensors = 1024});
  if (!file.ok()) {
    if (file.status().code() != absl::StatusCode::kDataLoss) std::abort();
    return 0;
  }
  for (const std::string& name : file->Names()) {
    const bulwark::bert::SafetensorsTensor* tensor = file->Find(name);
    if (tensor == nullptr) std::abort();
    if (tensor->bytes.data() < buffer.data() ||
        tensor->bytes.data() + tensor->bytes.size() > buffer.data() + buffer.size()) {
      std::abort();
    }
    if (tensor->bytes.size() !=
        static_cast<size_t>(tensor->elements()) * bulwark::bert::DtypeSize(tensor->dtype)) {
      std::abort();
    }
    std::vector<float> values(static_cast<size_t>(tensor->elements()));
    const bool converted = bulwark::bert::TensorToFloat(*tensor, values).ok();
    if (converted != IsFloat(tensor->dtype)) std::abort();
  }
  absl::StatusOr<bulwark::bert::BertWeights> weights = bulwark::bert::LoadBertWeights(*file, TinyConfig());
  if (!weights.ok() && weights.status().code() != absl::StatusCode::kFailedPrecondition) std::abort();
  return 0;
}
