#pragma once
// GradientAllReduce: averages the gradients of a set of parameters over the ranks of a
// RankGroup, the way DistributedDataParallel does: the gradients are flattened into buckets of
// about `bucket_bytes` (one dtype each, the last layers first, since backward produces their
// gradients first), each bucket's all-reduce starts as soon as the bucket is filled, and the
// averages are copied back once all have completed. The buckets are laid out once, on the first
// call; later calls only copy. A parameter without a gradient takes part with zeros, so every
// rank always runs the same collectives. Collective failures throw (RankGroup).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace streetgan {

class RankGroup;

struct GradientAllReduceOptions {
  std::int64_t bucket_bytes = 25 << 20;  ///< about 25 MB per bucket, DDP's default
};

class GradientAllReduce {
public:
  /// `params` must be the same tensors, in the same order, on every rank; `group` outlives this.
  GradientAllReduce(RankGroup& group, std::vector<at::Tensor> params, GradientAllReduceOptions options = {});

  /// Averages the gradients of the parameters over the ranks, in buckets.
  void average();
  /// The same average with one all-reduce of every gradient at once (the benchmark's baseline).
  void averageFlat();
  std::size_t bucketCount() const { return buckets_.size(); }

private:
  struct Bucket {
    std::vector<std::size_t> members;  ///< indices into params_
    at::Tensor flat;
  };
  void layOut();
  void fill(Bucket& bucket);
  void drain(Bucket& bucket);

  RankGroup& group_;
  std::vector<at::Tensor> params_;
  GradientAllReduceOptions options_;
  std::vector<Bucket> buckets_;
  Bucket all_;  ///< every parameter, for averageFlat()
};

}  // namespace streetgan
