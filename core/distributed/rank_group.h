#pragma once
// RankGroup: this process's place in a distributed run and the collectives its ranks train with,
// on PyTorch's own distributed engine (c10d), so a job launches the way PyTorch jobs do
// (torchrun, or `streetgan train --nproc N`). The rendezvous is the job's store at
// MASTER_ADDR:MASTER_PORT (127.0.0.1 for a job on one host), hosted by rank 0 (JobStoreServer:
// every rank proves the job's token first), or torchrun's agent's c10d TCPStore (every rank a
// client, under the agent's prefix for the restart attempt). Tensors on the training device go through the
// device's backend (ProcessGroupGloo on the CPU, ProcessGroupNCCL on CUDA where the LibTorch has
// it); the small host-side agreements of every step (stop, batch sizes) always go through a Gloo
// group on the CPU, so they never wait for an accelerator.
//
// Failure: connect() returns an Error naming the address or the missing backend. A collective
// that fails (a peer's process ended, its connection closed) or does not complete within the
// timeout throws c10d's exception (the caller's boundary catches it) and marks the group failed;
// failureCause() then tells, on rank 0, which rank failed and why, from what the others left in
// the store.
#include "core/distributed/rank_placement.h"
#include "core/util/result.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

class RankGroup {
public:
  /// Joins the ranks: connects to (or on rank 0 hosts) the store and builds the CPU (Gloo)
  /// group. Blocks until every rank has joined or the timeout passes.
  static Result<std::unique_ptr<RankGroup>> connect(const RankPlacement& placement);
  /// Chooses the backend for the training tensors on `device`: Gloo for the CPU, NCCL for CUDA
  /// (an Error when this LibTorch lacks it, or for another device type).
  Status useDevice(const c10::Device& device);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int rank() const;
  int worldSize() const;
  const RankPlacement& placement() const;
  /// "gloo" or "nccl": the backend the training tensors go through.
  const std::string& backend() const;

  /// Starts summing `tensor` (on the training device, contiguous) over the ranks in place;
  /// waitAll() waits for every sum started so far.
  void startAllReduceSum(at::Tensor& tensor);
  void waitAll();
  /// Sums `tensor` over the ranks in place and waits.
  void allReduceSum(at::Tensor& tensor);
  /// Overwrites `tensor` on every rank with rank 0's (contiguous tensors on the training device).
  void broadcastFromRankZero(at::Tensor& tensor);
  /// Host integers summed over the ranks, through the CPU group. Any rank can make a sum what it
  /// likes: callers bound what they get before using it.
  std::vector<std::int64_t> sumOnHost(const std::vector<std::int64_t>& values);
  /// Rank 0's `values` on every rank, through the CPU group.
  std::vector<std::int64_t> fromRankZeroOnHost(const std::vector<std::int64_t>& values);
  /// Rank 0's `bytes` on every rank, through the CPU group (what rank 0 read from its disk: a
  /// checkpoint, a config; the other hosts need no copy of the run folder). More than `max_bytes`
  /// is an Error on every rank, and nothing is sent.
  Status broadcastBytesFromRankZero(std::string& bytes, std::int64_t max_bytes);
  /// One host integer from each rank, in rank order.
  std::vector<std::int64_t> gatherOnHost(std::int64_t value);

  /// True once a collective of this group has failed (its exception may have been rethrown by
  /// LibTorch's autograd engine under another type).
  bool collectiveFailed() const;
  /// After this rank failed with `message`: leaves it in the store for rank 0 (best effort), and
  /// on rank 0 waits a little for the others' and returns one line naming the rank that failed
  /// first and why ("rank 1 stopped responding ..." for a rank that left nothing).
  std::string failureCause(const std::string& message, bool from_collective);
  /// The message rank `rank` left with failureCause(), or "" when it left none (yet).
  std::string reportOf(int rank);

private:
  struct Impl;
  explicit RankGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace streetgan
