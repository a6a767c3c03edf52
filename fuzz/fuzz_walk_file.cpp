// A walk file (streetgan walk --walk FILE, Explore's saved walks): JSON, then LatentWalk.
#include "core/latent/latent_walk.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return 0;
  auto walk = streetgan::LatentWalk::fromJson(json, "fuzz");
  if (walk && walk->validate() && walk->frameCount() > 0 && walk->frameCount() < 10000) {
    (void)walk->frame(0);
    (void)walk->frame(walk->frameCount() - 1);
  }
  return 0;
}
