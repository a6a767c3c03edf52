// The config JSON as a file, -t and -c take it: the input's first byte picks the scope.
#include "core/config/train_config.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using streetgan::ConfigScope;
  const ConfigScope scopes[] = {ConfigScope::All, ConfigScope::Training, ConfigScope::Checkpoint};
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto config = streetgan::applyConfigText(streetgan::TrainConfig{}, text, scopes[data[0] % 3], "fuzz");
  if (config) (void)streetgan::validateConfig(*config);
  return 0;
}
