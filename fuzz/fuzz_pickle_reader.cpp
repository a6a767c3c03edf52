// PickleReader on arbitrary bytes: every storage a pickle asks for exists (zeros of the size it
// asks, up to a bound), so the fuzzer reaches the tensor views and not only the refusals.
#include "core/formats/pickle_reader.h"

#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  streetgan::PickleReader reader(
      [](const std::string&, torch::ScalarType dtype, std::int64_t numel) -> streetgan::Result<torch::Tensor> {
        if (numel < 0 || numel > (1 << 16)) return streetgan::makeError("storage too large for the fuzzer");
        return torch::zeros({numel}, torch::TensorOptions().dtype(dtype));
      });
  auto value = reader.read(std::string(reinterpret_cast<const char*>(data), size));
  // Touch what a caller would: every tensor made contiguous, as the checkpoint reader does.
  if (value && value->isDict())
    for (const auto& [key, item] : value->entries())
      if (item.isTensor()) (void)item.toTensor().contiguous();
  return 0;
}
