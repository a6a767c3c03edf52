#pragma once
// CudaGraph: work on one CUDA device recorded once as a CUDA graph and replayed as a single launch
// (LibTorch's at::cuda::CUDAGraph, owned here behind a pointer so that no CUDA header reaches the
// includers). warmUp() runs the work eagerly on a side stream that waits for the caller's stream
// (and the caller's waits for it), as CUDA's capture rules want; capture() records it on that side
// stream without running it; replay() runs the recording on the caller's current stream. The
// graph's memory pool (every tensor the work made while it was recorded) lives as long as this
// object, and the tensors the work read (parameters, optimizer state, inputs) must stay where they
// are: a replay reads and writes those addresses.
//
// Only a build whose LibTorch has CUDA, and whose CUDA headers compile, has graphs
// (STREETGAN_CUDA_GRAPHS, set by core/CMakeLists.txt); unavailableReason() says plainly why
// another cannot. Failures come back as an Error (a capture that CUDA refused: an operation that
// cannot be recorded, a host synchronisation inside the work); after a failed capture the object
// holds no graph and the work can go on eagerly.
#include "core/util/result.h"

#include <c10/core/Device.h>

#include <functional>
#include <memory>
#include <string>

namespace streetgan {

class CudaGraph {
public:
  /// Empty when this build can record graphs on `device`, else why it cannot (plain words).
  static std::string unavailableReason(const c10::Device& device);

  /// A graph for `device`, which must be one unavailableReason() accepts (else std::logic_error).
  explicit CudaGraph(const c10::Device& device);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  /// Runs `work` eagerly on the side stream; its exceptions reach the caller.
  void warmUp(const std::function<void()>& work);
  /// Records `work` on the side stream after the device has finished everything queued; nothing
  /// runs. An Error when CUDA refused the recording (the exception's text, translated here).
  Status capture(const std::function<void()>& work);
  /// Runs the recording on the current stream. Requires captured().
  void replay();
  bool captured() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace streetgan
