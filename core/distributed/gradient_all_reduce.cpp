#include "core/distributed/gradient_all_reduce.h"

#include "core/distributed/rank_group.h"

#include <torch/torch.h>

#include <stdexcept>

namespace streetgan {

GradientAllReduce::GradientAllReduce(RankGroup& group, std::vector<at::Tensor> params,
                                     GradientAllReduceOptions options)
    : group_(group), params_(std::move(params)), options_(options) {
  if (options_.bucket_bytes <= 0) throw std::invalid_argument("GradientAllReduce: bucket_bytes must be positive");
}

void GradientAllReduce::layOut() {
  // Backward reaches the last layers first: their buckets fill (and start) first.
  Bucket current;
  std::int64_t bytes = 0;
  for (std::size_t k = params_.size(); k-- > 0;) {
    const auto& p = params_[k];
    const std::int64_t size = p.numel() * static_cast<std::int64_t>(p.element_size());
    const bool other_kind = !current.members.empty() &&
                            (params_[current.members.front()].scalar_type() != p.scalar_type() ||
                             params_[current.members.front()].device() != p.device());
    if (!current.members.empty() && (other_kind || bytes + size > options_.bucket_bytes)) {
      buckets_.push_back(std::move(current));
      current = Bucket();
      bytes = 0;
    }
    current.members.push_back(k);
    bytes += size;
    all_.members.push_back(k);
  }
  if (!current.members.empty()) buckets_.push_back(std::move(current));
}

void GradientAllReduce::fill(Bucket& bucket) {
  std::int64_t total = 0;
  for (auto k : bucket.members) total += params_[k].numel();
  const auto& first = params_[bucket.members.front()];
  if (!bucket.flat.defined() || bucket.flat.numel() != total || bucket.flat.scalar_type() != first.scalar_type())
    bucket.flat = torch::empty({total}, first.options());
  std::int64_t offset = 0;
  for (auto k : bucket.members) {
    auto& p = params_[k];
    const auto n = p.numel();
    auto slice = bucket.flat.narrow(0, offset, n);
    if (p.grad().defined())
      slice.view(p.sizes()).copy_(p.grad());
    else
      slice.zero_();
    offset += n;
  }
}

void GradientAllReduce::drain(Bucket& bucket) {
  bucket.flat.div_(group_.worldSize());
  std::int64_t offset = 0;
  for (auto k : bucket.members) {
    auto& p = params_[k];
    const auto n = p.numel();
    auto slice = bucket.flat.narrow(0, offset, n).view(p.sizes());
    if (p.grad().defined())
      p.mutable_grad().copy_(slice);
    else
      p.mutable_grad() = slice.clone();
    offset += n;
  }
}

void GradientAllReduce::average() {
  torch::NoGradGuard no_grad;
  if (buckets_.empty()) layOut();
  for (auto& bucket : buckets_) {
    fill(bucket);
    group_.startAllReduceSum(bucket.flat);
  }
  group_.waitAll();
  for (auto& bucket : buckets_) drain(bucket);
}

void GradientAllReduce::averageFlat() {
  torch::NoGradGuard no_grad;
  if (buckets_.empty()) layOut();
  // One flat buffer needs one dtype; the nets here train in one, checked rather than assumed.
  for (auto k : all_.members)
    if (params_[k].scalar_type() != params_[all_.members.front()].scalar_type())
      throw std::invalid_argument("GradientAllReduce::averageFlat: parameters of more than one dtype");
  fill(all_);
  group_.allReduceSum(all_.flat);
  drain(all_);
}

}  // namespace streetgan
