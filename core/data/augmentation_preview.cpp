#include "core/data/augmentation_preview.h"

#include <torch/torch.h>

namespace streetgan {

Result<torch::Tensor> augmentedVariants(const SamplePipeline& pipeline, const std::string& path,
                                        int count, std::uint64_t seed) {
  auto image = pipeline.decode(path);
  if (!image) return makeError(image.error());
  torch::Tensor out = torch::empty({count, pipeline.channels(), pipeline.imageSize(), pipeline.imageSize()});
  float* data = out.data_ptr<float>();
  for (int i = 0; i < count; ++i)
    pipeline.augment(image->view(), SamplePipeline::sampleSeed(seed, 0, static_cast<std::uint64_t>(i)),
                     data + i * pipeline.sampleSize());
  return out;
}

}  // namespace streetgan
