#include "core/eval/parzen_inputs.h"

#include "core/data/image_decoder.h"
#include "core/data/sample_pipeline.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cstdio>
#include <numeric>
#include <random>

namespace streetgan {

Result<ImageRows> loadImageRows(const std::vector<std::string>& paths, int size, int channels,
                                double crop_scale) {
  AugmentConfig fixed;  // the deterministic part of the pipeline only
  fixed.shift = 0;
  fixed.noise_std = 0;
  fixed.crop_scale = crop_scale;
  const SamplePipeline pipeline(fixed, size, channels, /*reduced_decode=*/false);
  // At the model size the crop is the whole image and nothing is resized: the pixels as is.
  AugmentConfig whole = fixed;
  whole.crop_scale = 1.0;
  const SamplePipeline as_is(whole, size, channels, false);
  const std::int64_t row = pipeline.sampleSize();
  torch::Tensor rows = torch::empty({static_cast<std::int64_t>(paths.size()), row});
  std::vector<std::string> errors(paths.size());
  float* data = rows.data_ptr<float>();
  at::parallel_for(0, static_cast<std::int64_t>(paths.size()), 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      auto image = pipeline.decode(paths[static_cast<std::size_t>(i)]);
      if (!image) {
        errors[static_cast<std::size_t>(i)] = image.error();
        continue;
      }
      const bool model_size = image->width == size && image->height == size;
      (model_size ? as_is : pipeline).augment(image->view(), 0, data + i * row);
    }
  });
  ImageRows out;
  std::vector<std::int64_t> good;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (errors[i].empty()) {
      good.push_back(static_cast<std::int64_t>(i));
      out.paths.push_back(paths[i]);
    } else {
      out.skipped.push_back({paths[i], errors[i]});
    }
  }
  if (good.empty()) return makeError(paths.empty() ? "no images given" : "not one of the " +
                                                         std::to_string(paths.size()) + " images could be read (the first: " +
                                                         out.skipped.front().reason + ")");
  out.rows = static_cast<std::size_t>(good.size()) == paths.size() ? rows : rows.index_select(0, torch::tensor(good));
  return out;
}

Result<ImageRows> loadCachedImageRows(const ImageCache& cache, std::size_t count, std::uint64_t seed, int size,
                                      int channels, double crop_scale) {
  if (cache.channels() != channels)
    return makeError(cache.path() + ": the cache holds " + std::to_string(cache.channels()) +
                     "-channel images; " + std::to_string(channels) + " are needed");
  if (cache.size() == 0) return makeError(cache.path() + ": the cache holds no image");
  AugmentConfig fixed;
  fixed.shift = 0;
  fixed.noise_std = 0;
  fixed.crop_scale = crop_scale;
  // Pixels decoded smaller than this crop needs would be scaled up: other figures than the
  // images' own. A cache of full decodes serves every size.
  const int needed = SamplePipeline::reductionFor(fixed, size);
  if (cache.reduction() > needed) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", crop_scale);
    return makeError(cache.path() + ": the cache holds images decoded at 1/" + std::to_string(cache.reduction()) +
                     " size; " + std::to_string(size) + " px with crop_scale " + scale + " needs at most 1/" +
                     std::to_string(needed) +
                     " (rebuild it with streetgan cache build --full-decode, or give the data folder)");
  }
  std::vector<std::size_t> order(cache.size());  // the same seeded shuffle as shuffledPaths
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng() % i)]);
  order.resize(std::min(count, order.size()));
  const SamplePipeline pipeline(fixed, size, channels);
  AugmentConfig whole = fixed;  // an image at the model size is used as is, as loadImageRows does
  whole.crop_scale = 1.0;
  const SamplePipeline as_is(whole, size, channels);
  const std::int64_t row = pipeline.sampleSize();
  torch::Tensor rows = torch::empty({static_cast<std::int64_t>(order.size()), row});
  std::vector<std::string> errors(order.size());
  float* data = rows.data_ptr<float>();
  at::parallel_for(0, static_cast<std::int64_t>(order.size()), 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      auto image = cache.image(order[static_cast<std::size_t>(i)]);
      if (!image) errors[static_cast<std::size_t>(i)] = image.error();
      else
        (image->full_width == size && image->full_height == size ? as_is : pipeline).augment(*image, 0, data + i * row);
    }
  });
  ImageRows out;
  std::vector<std::int64_t> good;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::string& path = cache.relativePath(order[i]);
    if (errors[i].empty()) {
      good.push_back(static_cast<std::int64_t>(i));
      out.paths.push_back(path);
    } else {
      out.skipped.push_back({path, errors[i]});
    }
  }
  if (good.empty())
    return makeError(cache.path() + ": not one of the " + std::to_string(order.size()) +
                     " images could be read (the first: " + out.skipped.front().reason + ")");
  out.rows = good.size() == order.size() ? rows : rows.index_select(0, torch::tensor(good));
  return out;
}

torch::Tensor generateSampleRows(Generator& generator, int nz, std::int64_t count, std::uint64_t seed,
                                 std::int64_t batch, const c10::Device& device, bool train_mode) {
  torch::NoGradGuard no_grad;
  if (train_mode) generator->train(); else generator->eval();
  // All noise first, from one generator: the rows do not depend on the batch size.
  auto rng = at::make_generator<at::CPUGeneratorImpl>(seed);
  const torch::Tensor noise = torch::randn({count, nz, 1, 1}, rng, torch::kFloat32);
  const std::int64_t batches = (count + batch - 1) / batch;
  std::vector<torch::Tensor> parts(static_cast<std::size_t>(batches));
  auto run = [&](std::int64_t b) {
    torch::NoGradGuard no_grad_here;  // grad mode is per thread: parallel_for's threads need their own
    const std::int64_t i = b * batch, n = std::min(batch, count - i);
    parts[static_cast<std::size_t>(b)] =
        generator->forward(noise.narrow(0, i, n).to(device)).to(torch::kCPU, torch::kFloat32).flatten(1);
  };
  if (device.is_cpu() && !train_mode) {
    // LibTorch 1.13 runs a CPU transposed convolution on one core; batches side by side use them
    // all. Eval-mode BatchNorm treats every image alone, so the rows are the same either way.
    at::parallel_for(0, batches, 1, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t b = lo; b < hi; ++b) run(b);
    });
  } else {
    for (std::int64_t b = 0; b < batches; ++b) run(b);
  }
  return torch::cat(parts);
}

std::vector<std::string> shuffledPaths(const ImageDataset& dataset, std::uint64_t seed, std::size_t offset,
                                       std::size_t count) {
  std::vector<std::size_t> order(dataset.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng() % i)]);
  std::vector<std::string> paths;
  for (std::size_t i = offset; i < order.size() && paths.size() < count; ++i) paths.push_back(dataset.path(order[i]));
  return paths;
}

}  // namespace streetgan
