#include "core/data/sample_pipeline.h"

#include <ATen/CPUGeneratorImpl.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <torch/torch.h>

#include <cmath>
#include <random>
#include <vector>

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

SamplePipeline::SamplePipeline(const AugmentConfig& augment, int img_size, int channels,
                               bool reduced_decode)
    : augment_(augment),
      img_size_(img_size),
      channels_(channels),
      reduction_(reduced_decode ? reductionFor(augment, img_size) : 1) {}

std::int64_t SamplePipeline::sampleSize() const {
  return static_cast<std::int64_t>(channels_) * img_size_ * img_size_;
}

std::uint64_t SamplePipeline::sampleSeed(std::uint64_t seed, std::uint64_t epoch,
                                         std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ epoch) ^ index);
}

int SamplePipeline::reductionFor(const AugmentConfig& augment, int img_size) {
  const double crop = std::max(1.0, std::round(augment.crop_scale * img_size));
  // A zoom of 1+j magnifies the source: the crop then covers crop/(1+j) source pixels.
  const double source = crop / (1.0 + augment.scale_jitter);
  for (int r : {8, 4, 2})
    if (source / r >= img_size && std::fmod(crop, r) == 0.0) return r;
  return 1;
}

Result<DecodedImage> SamplePipeline::decode(const std::string& path) const {
  return ImageDecoder::decode(path, channels_, reduction_);
}

Status SamplePipeline::load(const std::string& path, std::uint64_t sample_seed, float* out) const {
  auto image = decode(path);
  if (!image) return makeError(image.error());
  augment(image->view(), sample_seed, out);
  return {};
}

Status SamplePipeline::loadPixels(const std::string& path, std::uint64_t sample_seed,
                                  std::uint8_t* out) const {
  auto image = decode(path);
  if (!image) return makeError(image.error());
  augmentPixels(image->view(), sample_seed, out);
  return {};
}

void SamplePipeline::augment(const ImageView& image, std::uint64_t sample_seed, float* out) const {
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(sampleSize()));
  augmentPixels(image, sample_seed, pixels.data());
  // Noise first, straight into the output (LibTorch's vectorized sampler, seeded per sample),
  // then (x/255 + noise − 0.5) / 0.5.
  if (augment_.noise_std > 0) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(splitmix64(sample_seed ^ 0x6e6f697365ULL));
    torch::from_blob(out, {sampleSize()}, torch::kFloat32).normal_(0.0, augment_.noise_std, generator);
  } else {
    std::fill(out, out + sampleSize(), 0.0f);
  }
  for (std::size_t i = 0; i < pixels.size(); ++i)
    out[i] = (pixels[i] * (1.0f / 255.0f) + out[i]) * 2.0f - 1.0f;
}

void SamplePipeline::augmentPixels(const ImageView& image, std::uint64_t sample_seed,
                                   std::uint8_t* out) const {
  std::mt19937_64 rng(sample_seed);
  const double width = image.full_width, height = image.full_height;
  const double crop = std::max(1.0, std::round(augment_.crop_scale * img_size_));
  // Shift and crop window move in whole output pixels (`step` source pixels): finer phases only
  // blur differently after the downscale, and whole steps keep the reduced decode (whose pixels
  // are step-aligned blocks of the source) the same picture as the full-resolution path.
  const double step = std::max(1.0, std::round(crop / img_size_));
  const double dx = step * std::round(uniform(rng, -augment_.shift, augment_.shift) * width / step);
  const bool flip = augment_.flip && uniform(rng, 0.0, 1.0) < 0.5;
  const double angle = augment_.rotate_deg > 0 ? uniform(rng, -augment_.rotate_deg, augment_.rotate_deg) : 0.0;
  const double zoom = augment_.scale_jitter > 0
                          ? uniform(rng, 1.0 - augment_.scale_jitter, 1.0 + augment_.scale_jitter)
                          : 1.0;

  // One affine map from full-resolution source pixels to the crop: flip, rotate/zoom about the
  // image center, shift, then move the centered crop window to the origin.
  const double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
  const double a = std::cos(angle * CV_PI / 180.0) * zoom, b = std::sin(angle * CV_PI / 180.0) * zoom;
  const double fx = flip ? -1.0 : 1.0;
  const double left = step * std::round((width - crop) / 2.0 / step);
  const double top = step * std::round((height - crop) / 2.0 / step);
  double tx = cx - (a * fx * cx + b * cy) + dx - left;
  double ty = cy - (-b * fx * cx + a * cy) - top;
  // The same map on reduced pixels: a reduced pixel q covers full pixels around r·q + (r−1)/2,
  // in the source and in the crop alike, so only the translation changes.
  const double r = image.reduction, h = (r - 1) / 2.0;
  tx = (a * fx * h + b * h + tx - h) / r;
  ty = (-b * fx * h + a * h + ty - h) / r;
  const cv::Matx23d map(a * fx, b, tx, -b * fx, a, ty);
  const int side = static_cast<int>(std::lround(crop / r));

  const int type = image.channels == 3 ? CV_8UC3 : CV_8UC1;
  const cv::Mat source(image.height, image.width, type, const_cast<std::uint8_t*>(image.data), image.stride);
  cv::Mat cropped;
  const bool exact_copy = angle == 0.0 && zoom == 1.0 && tx == std::round(tx) && ty == std::round(ty);
  cv::warpAffine(source, cropped, map, cv::Size(side, side),
                 exact_copy ? cv::INTER_NEAREST : cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                 cv::Scalar::all(0));
  cv::Mat resized;
  if (side == img_size_)
    resized = cropped;
  else
    cv::resize(cropped, resized, cv::Size(img_size_, img_size_), 0, 0,
               side > img_size_ ? cv::INTER_AREA : cv::INTER_LINEAR);

  // HWC BGR -> CHW RGB.
  const int plane = img_size_ * img_size_;
  for (int c = 0; c < channels_; ++c) {
    const int source_channel = channels_ == 3 ? 2 - c : 0;
    std::uint8_t* plane_out = out + c * plane;
    for (int y = 0; y < img_size_; ++y) {
      const std::uint8_t* row = resized.ptr<std::uint8_t>(y);
      std::uint8_t* row_out = plane_out + y * img_size_;
      for (int x = 0; x < img_size_; ++x) row_out[x] = row[x * channels_ + source_channel];
    }
  }
}

}  // namespace streetgan
