#pragma once
// SamplePipeline: one training sample from one image file, the reference augmentation of
// docs/data.md: horizontal shift, optional flip/rotation/zoom, center crop of crop_scale·img_size
// padded black, resize, [0,1], Gaussian noise, [-1,1], into a CHW float buffer — or, for training,
// only the geometry into CHW RGB bytes (augmentPixels), the noise and scaling being done on the
// training device (DeviceBatchFeeder), so batches travel as uint8. JPEGs decode at
// reduction() (the largest DCT scale that keeps the crop at or above img_size); the geometry is
// worked out at full resolution and mapped onto the reduced pixels, so both paths give the same
// picture. The randomness of a sample comes only from `sample_seed`: the same seed gives the
// same pixels on any thread, from the file or from a pre-decoded cache record.
#include "core/config/train_config.h"
#include "core/data/image_decoder.h"
#include "core/util/result.h"

#include <cstdint>
#include <string>

namespace streetgan {

class SamplePipeline {
public:
  SamplePipeline(const AugmentConfig& augment, int img_size, int channels, bool reduced_decode = true);

  /// Number of floats load() writes: channels·img_size·img_size.
  std::int64_t sampleSize() const;
  int channels() const { return channels_; }
  int imageSize() const { return img_size_; }
  /// The DCT reduction (1, 2, 4 or 8) JPEGs are decoded at.
  int reduction() const { return reduction_; }

  /// Decodes `path` at reduction() (an Error names the file and the reason).
  Result<DecodedImage> decode(const std::string& path) const;
  /// Augments decoded pixels with randomness from `sample_seed`; writes sampleSize() floats.
  void augment(const ImageView& image, std::uint64_t sample_seed, float* out) const;
  /// The geometric part of augment() only (shift, flip, rotation, zoom, crop, resize): writes
  /// sampleSize() bytes, CHW RGB, in [0, 255]; no noise, no scaling.
  void augmentPixels(const ImageView& image, std::uint64_t sample_seed, std::uint8_t* out) const;
  /// decode() then augment().
  Status load(const std::string& path, std::uint64_t sample_seed, float* out) const;
  /// decode() then augmentPixels().
  Status loadPixels(const std::string& path, std::uint64_t sample_seed, std::uint8_t* out) const;

  /// A per-sample seed from the run seed, the epoch and the sample's index in the dataset.
  static std::uint64_t sampleSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index);
  /// The largest reduction in {1, 2, 4, 8} whose crop (allowing for zoom) stays ≥ img_size.
  static int reductionFor(const AugmentConfig& augment, int img_size);

private:
  AugmentConfig augment_;
  int img_size_;
  int channels_;
  int reduction_;
};

}  // namespace streetgan
