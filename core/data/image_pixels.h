#pragma once
// RgbImage: 8-bit pixels handed from core to a GUI without LibTorch types.
#include <cstdint>
#include <vector>

namespace streetgan {

/// An 8-bit image, rows of width × channels bytes (RGB or grey), top row first.
struct RgbImage {
  int width = 0, height = 0, channels = 3;
  std::vector<std::uint8_t> pixels;
};

}  // namespace streetgan
