#pragma once
// StreetSceneRenderer: one procedural street (its colours, time of day, road and the buildings
// along it), drawn in perspective from a camera that drives down the road: frame f is the view
// kMetresPerFrame·f metres further along. Deterministic for a seed. Used by DemoDataGenerator.
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

class StreetSceneRenderer {
public:
  static constexpr double kMetresPerFrame = 4.0;

  StreetSceneRenderer(std::uint64_t seed, int width, int height);

  /// Renders frame `frame` and encodes it as JPEG (quality 92).
  Result<std::string> renderJpeg(int frame) const;
  bool isNight() const { return time_of_day_ == 2; }

  struct Colour {
    double b, g, r;
  };
  struct Building {
    bool left;
    double z0, z1;        ///< start and end along the road, metres
    double height;        ///< metres
    double setback;       ///< distance from the road edge, metres
    Colour wall;
    Colour window;
    int floors;
    std::uint64_t window_seed;
  };

private:
  int width_, height_;
  int time_of_day_;  ///< 0 day, 1 dusk, 2 night, 3 overcast
  Colour sky_top_, sky_horizon_, ground_, road_, lane_;
  double road_half_width_, horizon_, vanish_x_, focal_;
  bool dashed_centre_;
  std::vector<Building> buildings_;
};

}  // namespace streetgan
