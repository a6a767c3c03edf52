#include "core/latent/batch_statistics_scope.h"

#include <torch/torch.h>

namespace streetgan {

BatchStatisticsScope::BatchStatisticsScope(GeneratorImpl& generator, bool on) : generator_(generator), on_(on) {
  if (!on_) return;
  was_training_ = generator_.is_training();
  for (const auto& buffer : generator_.buffers()) saved_.push_back(buffer.clone());
  generator_.train();
}

BatchStatisticsScope::~BatchStatisticsScope() {
  if (!on_) return;
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (auto& buffer : generator_.buffers()) buffer.copy_(saved_[i++]);
  generator_.train(was_training_);
}

}  // namespace streetgan
