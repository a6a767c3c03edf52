#pragma once
// DataConfig: which images of a data folder a run uses (the MSLS filters and the held-out split
// of docs/data.md) and how they are loaded (worker threads, prefetch depth, pre-decoded cache).
// Plain values with the defaults below; TrainConfig holds one and reads it from the "data" keys.
#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct DatasetFilter {
  std::vector<std::string> cities;          ///< keep only these cities (empty: every city)
  std::vector<std::string> exclude_cities;  ///< drop these cities
  std::string msls_split = "all";           ///< MSLS top folder: all | train_val | test
  std::string subset = "all";               ///< MSLS images: all | database | query
  bool drop_panoramas = false;              ///< drop images raw.csv marks as panoramas
  std::string time_of_day = "all";          ///< all | day | night (postprocessed.csv "night")
  int max_per_sequence = 0;                 ///< keep at most this many evenly spaced frames per
                                            ///< sequence (seq_info.csv); 0 = keep all
  std::vector<std::string> holdout_cities;  ///< held-out split: every image of these cities
  double holdout_fraction = 0.0;            ///< held-out split: this seeded fraction of the
                                            ///< sequences (of the images without a sequence)
  std::int64_t holdout_seed = 0;            ///< seed of the held-out fraction

  bool needsSequences() const { return max_per_sequence > 0; }
  bool hasHoldout() const { return !holdout_cities.empty() || holdout_fraction > 0.0; }
};

struct DataConfig {
  DatasetFilter filter;
  int workers = 0;          ///< loader threads; 0 = one per core
  int prefetch = 2;         ///< ready batches kept ahead of the training step (per run, not per worker)
  std::string cache;        ///< pre-decoded cache file (`streetgan cache build`); empty = decode files
  bool reduced_decode = true; ///< decode JPEGs at reduced size (DCT scaling) when the crop allows
};

}  // namespace streetgan
