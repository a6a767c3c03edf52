#pragma once
// DemoDataGenerator: procedural street scenes (sky, road to a vanishing point, lane marks,
// building blocks with windows, varied colours and times of day) written as 640×480 JPEGs in the
// MSLS layout, so a newcomer can train with no download:
//   train_val/<city>/{database,query}/images/<key>.jpg
//   train_val/<city>/{database,query}/{seq_info.csv,postprocessed.csv,raw.csv}
// Consecutive frames of a sequence move the camera along its road. The output depends only on
// the options (seed included). Failures (unwritable folder, disk full) return an Error.
#include "core/util/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace streetgan {

/// The demo set of the studio, the `demo` preset and run-demo.sh: 4 × 10 × 25 = 1,000 scenes,
/// what `streetgan demo-data` renders without size options.
inline constexpr int kDemoCities = 4, kDemoSequencesPerCity = 10, kDemoFramesPerSequence = 25;

struct DemoDataOptions {
  std::string out_dir;                               ///< created if missing; must not already hold images
  int cities = kDemoCities;                          ///< 1..8 cities
  int sequences_per_city = kDemoSequencesPerCity;    ///< sequences in each city (the last one is a query sequence)
  int frames_per_sequence = kDemoFramesPerSequence;  ///< consecutive frames along the road
  int width = 640;
  int height = 480;
  std::uint64_t seed = 1;
};

struct DemoDataSummary {
  int images = 0;
  std::vector<std::string> cities;
};

class DemoDataGenerator {
public:
  explicit DemoDataGenerator(DemoDataOptions options);

  /// Writes every image and CSV; `progress(done, total)` is called after each image, and
  /// returning false stops with an Error (what was written stays: the caller removes it).
  Result<DemoDataSummary> generate(const std::function<bool(int, int)>& progress = {}) const;

  static std::vector<std::string> cityNames();

private:
  DemoDataOptions options_;
};

}  // namespace streetgan
