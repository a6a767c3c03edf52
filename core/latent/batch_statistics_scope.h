#pragma once
// BatchStatisticsScope: while alive (and `on`), a generator's BatchNorm layers normalise with each
// call's batch statistics instead of their running ones; the running statistics those calls update
// are put back when the scope ends, so the model never changes. With `on` false it does nothing.
// The caller owns the generator and keeps it alive for the scope's life; nothing here throws
// except LibTorch's own errors from the copies.
#include "core/model/generator.h"

#include <torch/types.h>

#include <vector>

namespace streetgan {

class BatchStatisticsScope {
public:
  BatchStatisticsScope(GeneratorImpl& generator, bool on);
  ~BatchStatisticsScope();
  BatchStatisticsScope(const BatchStatisticsScope&) = delete;
  BatchStatisticsScope& operator=(const BatchStatisticsScope&) = delete;

private:
  GeneratorImpl& generator_;
  bool on_;
  bool was_training_ = false;
  std::vector<torch::Tensor> saved_;
};

}  // namespace streetgan
