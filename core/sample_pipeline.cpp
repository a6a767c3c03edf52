#include "sample_pipeline.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <random>

namespace streetgan {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  // Our own mapping: std::uniform_real_distribution is implementation-defined.
  const double unit = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * unit;
}

}  // namespace

SamplePipeline::SamplePipeline(const AugmentConfig& augment, int img_size, int channels)
    : augment_(augment), img_size_(img_size), channels_(channels) {}

std::int64_t SamplePipeline::sampleSize() const {
  return static_cast<std::int64_t>(channels_) * img_size_ * img_size_;
}

std::uint64_t SamplePipeline::sampleSeed(std::uint64_t seed, std::uint64_t epoch,
                                         std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ epoch) ^ index);
}

Status SamplePipeline::load(const std::string& path, std::uint64_t sample_seed, float* out) const {
  cv::Mat image;
  try {
    image = cv::imread(path, channels_ == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    return makeError(path + ": cannot decode the image (" + e.msg + ")");
  }
  if (image.empty() || image.cols < 1 || image.rows < 1)
    return makeError(path + ": cannot decode the image (unreadable, empty, truncated or not an image)");

  std::mt19937_64 rng(sample_seed);
  const double width = image.cols, height = image.rows;
  const double crop = std::max(1.0, std::round(augment_.crop_scale * img_size_));
  const double dx = std::round(uniform(rng, -augment_.shift, augment_.shift) * width);
  const bool flip = augment_.flip && uniform(rng, 0.0, 1.0) < 0.5;
  const double angle = augment_.rotate_deg > 0 ? uniform(rng, -augment_.rotate_deg, augment_.rotate_deg) : 0.0;
  const double zoom = augment_.scale_jitter > 0
                          ? uniform(rng, 1.0 - augment_.scale_jitter, 1.0 + augment_.scale_jitter)
                          : 1.0;

  // One affine map from the source to the crop: flip, rotate/zoom about the image center, shift,
  // then move the centered crop window to the origin. Pixels from outside the image are black.
  const double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
  const double a = std::cos(angle * CV_PI / 180.0) * zoom, b = std::sin(angle * CV_PI / 180.0) * zoom;
  const double fx = flip ? -1.0 : 1.0;
  const double left = std::round((width - crop) / 2.0), top = std::round((height - crop) / 2.0);
  cv::Matx23d map(a * fx, b, 0, -b * fx, a, 0);
  map(0, 2) = cx - (a * fx * cx + b * cy) + dx - left;
  map(1, 2) = cy - (-b * fx * cx + a * cy) - top;
  const int side = static_cast<int>(crop);
  cv::Mat cropped;
  const bool exact_copy = !flip && angle == 0.0 && zoom == 1.0;
  cv::warpAffine(image, cropped, map, cv::Size(side, side),
                 exact_copy ? cv::INTER_NEAREST : cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                 cv::Scalar::all(0));
  cv::Mat resized;
  if (side == img_size_)
    resized = cropped;
  else
    cv::resize(cropped, resized, cv::Size(img_size_, img_size_), 0, 0,
               side > img_size_ ? cv::INTER_AREA : cv::INTER_LINEAR);

  // HWC BGR uint8 -> CHW RGB float: x/255 + noise, then (x - 0.5) / 0.5.
  std::normal_distribution<float> noise(0.0f, static_cast<float>(augment_.noise_std));
  const int plane = img_size_ * img_size_;
  for (int y = 0; y < img_size_; ++y) {
    const std::uint8_t* row = resized.ptr<std::uint8_t>(y);
    for (int x = 0; x < img_size_; ++x)
      for (int c = 0; c < channels_; ++c) {
        const int source_channel = channels_ == 3 ? 2 - c : 0;
        float v = row[x * channels_ + source_channel] * (1.0f / 255.0f);
        if (augment_.noise_std > 0) v += noise(rng);
        out[c * plane + y * img_size_ + x] = v * 2.0f - 1.0f;
      }
  }
  return {};
}

}  // namespace streetgan
