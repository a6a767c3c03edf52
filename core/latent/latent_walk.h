#pragma once
// LatentWalk: a path through latent space that a video is rendered from: keyframes (each a latent,
// with the seed it came from when it came from one), frames per segment, interpolation mode,
// easing and whether the walk loops. An open walk has (K − 1)·F + 1 frames and ends exactly on the
// last keyframe; a loop has K·F frames and its last segment returns to the first keyframe without
// repeating it, so the video repeats seamlessly. Saved as a small JSON file whose latents read
// back bit for bit. A grid walk is R×C walks rendered side by side (GridWalk). Bad files and
// values come back as an Error naming the file and key.
#include "core/latent/latent_math.h"
#include "core/util/result.h"

#include <nlohmann/json_fwd.hpp>
#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

struct WalkKeyframe {
  torch::Tensor latent;               ///< (nz) float32
  std::optional<std::uint64_t> seed;  ///< the seed the latent came from, if any
};

struct LatentWalk {
  std::vector<WalkKeyframe> keyframes;
  int frames_per_key = 30;            ///< frames from one keyframe to the next
  Interpolation mode = Interpolation::Slerp;
  Easing easing = Easing::EaseInOut;
  bool loop = false;

  /// Keyframes from seeds, each latentFromSeed(seed, nz).
  static LatentWalk fromSeeds(const std::vector<std::uint64_t>& seeds, int nz);

  /// Checks the walk can be rendered: ≥ 2 keyframes of one size, frames_per_key ≥ 1.
  Status validate() const;
  std::int64_t frameCount() const;
  /// The latent of frame `index` (0 ≤ index < frameCount()).
  torch::Tensor frame(std::int64_t index) const;
  /// Frames [begin, begin + count) stacked as (count, nz, 1, 1), ready for the generator.
  torch::Tensor frames(std::int64_t begin, std::int64_t count) const;

  nlohmann::json toJson() const;
  static Result<LatentWalk> fromJson(const nlohmann::json& json, const std::string& source);
  Status save(const std::string& path) const;  ///< written atomically
  static Result<LatentWalk> load(const std::string& path);
};

/// R×C independent walks of equal length, rendered as tiles of one frame.
struct GridWalk {
  int rows = 1, columns = 1;
  std::vector<LatentWalk> tiles;  ///< row-major, rows·columns walks of one frame count

  /// Tile (r, c) walks through `keys` seeds of its own: seed base + (r·C + c)·keys + k.
  static GridWalk fromSeedBase(int rows, int columns, int keys, std::uint64_t base, int nz,
                               const LatentWalk& settings);
  Status validate() const;
  std::int64_t frameCount() const { return tiles.empty() ? 0 : tiles.front().frameCount(); }
  /// Frame `index` of every tile, stacked as (rows·columns, nz, 1, 1).
  torch::Tensor frame(std::int64_t index) const;
};

}  // namespace streetgan
