#pragma once
// SamplePipeline: decodes one image file and applies the reference augmentation of SPEC § Data
// (horizontal shift, optional flip/rotation/zoom, center crop of crop_scale·img_size padded
// black, resize, [0,1], Gaussian noise, [-1,1]) into a CHW float buffer. The randomness of a
// sample comes only from `sample_seed`, so the same seed gives the same pixels on any thread.
// Grayscale, alpha and 16-bit images are converted; an unreadable file is reported as an Error.
#include "result.h"
#include "train_config.h"

#include <cstdint>
#include <string>

namespace streetgan {

class SamplePipeline {
public:
  SamplePipeline(const AugmentConfig& augment, int img_size, int channels);

  /// Number of floats load() writes: channels·img_size·img_size.
  std::int64_t sampleSize() const;
  int channels() const { return channels_; }
  int imageSize() const { return img_size_; }
  /// Decodes `path`, augments it with randomness from `sample_seed`, writes sampleSize() floats.
  Status load(const std::string& path, std::uint64_t sample_seed, float* out) const;

  /// A per-sample seed from the run seed, the epoch and the sample's index in the dataset.
  static std::uint64_t sampleSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index);

private:
  AugmentConfig augment_;
  int img_size_;
  int channels_;
};

}  // namespace streetgan
