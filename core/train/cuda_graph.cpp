#include "core/train/cuda_graph.h"

#include "core/util/exception_message.h"

#include <stdexcept>

#if STREETGAN_CUDA_GRAPHS
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace streetgan {

#if STREETGAN_CUDA_GRAPHS

struct CudaGraph::Impl {
  explicit Impl(const c10::Device& d)
      : device(d), side(c10::cuda::getStreamFromPool(false, d.index())) {}
  c10::Device device;
  c10::cuda::CUDAStream side;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  bool captured = false;
};

std::string CudaGraph::unavailableReason(const c10::Device& device) {
  if (!device.is_cuda()) return "CUDA graphs need a CUDA device, and this is " + device.str();
  return {};
}

CudaGraph::CudaGraph(const c10::Device& device) {
  if (!unavailableReason(device).empty()) throw std::logic_error("CudaGraph: " + unavailableReason(device));
  // cuda (no index) means the current device, as LibTorch reads it.
  c10::Device indexed = device.has_index() ? device : c10::Device(c10::kCUDA, c10::cuda::current_device());
  impl_ = std::make_unique<Impl>(indexed);
}

CudaGraph::~CudaGraph() = default;

void CudaGraph::warmUp(const std::function<void()>& work) {
  c10::cuda::CUDAGuard device_guard(impl_->device);
  const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(impl_->device.index());
  at::cuda::CUDAEvent ready;
  ready.record(caller);
  ready.block(impl_->side);
  {
    c10::cuda::CUDAStreamGuard stream_guard(impl_->side);
    work();
  }
  at::cuda::CUDAEvent done;
  done.record(impl_->side);
  done.block(caller);
}

Status CudaGraph::capture(const std::function<void()>& work) {
  c10::cuda::CUDAGuard device_guard(impl_->device);
  impl_->graph.reset();
  impl_->captured = false;
  // Recording must not see work of other streams half done; an event cannot cross into a capture.
  c10::cuda::device_synchronize();
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  std::string failure;
  {
    c10::cuda::CUDAStreamGuard stream_guard(impl_->side);
    // Thread-local mode: other threads of the process (the data loader, a metrics worker) may
    // go on allocating and copying while this thread records.
    graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      work();
    } catch (...) {
      failure = exceptionMessage(std::current_exception());
    }
    try {
      graph->capture_end();  // ends the capture also after a failure, so the stream is usable again
    } catch (...) {
      if (failure.empty()) failure = exceptionMessage(std::current_exception());
    }
  }
  if (!failure.empty()) {
    // A refused recording leaves the CUDA error set on the thread: read it so the next eager
    // launch does not report it as its own.
    (void)cudaGetLastError();
    return makeError("the training step could not be recorded as a CUDA graph: " + failure);
  }
  impl_->graph = std::move(graph);
  impl_->captured = true;
  return {};
}

void CudaGraph::replay() {
  if (!impl_->captured) throw std::logic_error("CudaGraph::replay: nothing was captured");
  c10::cuda::CUDAGuard device_guard(impl_->device);
  impl_->graph->replay();
}

bool CudaGraph::captured() const { return impl_->captured; }

#else  // no CUDA graphs in this build

struct CudaGraph::Impl {};

std::string CudaGraph::unavailableReason(const c10::Device& device) {
  if (!device.is_cuda()) return "CUDA graphs need a CUDA device, and this is " + device.str();
  return "this build has no CUDA graphs (its LibTorch has no CUDA, or CMake could not compile "
         "ATen/cuda/CUDAGraph.h: see the configure output)";
}

CudaGraph::CudaGraph(const c10::Device& device) {
  throw std::logic_error("CudaGraph: " + unavailableReason(device));
}

CudaGraph::~CudaGraph() = default;

void CudaGraph::warmUp(const std::function<void()>& work) { work(); }

Status CudaGraph::capture(const std::function<void()>&) { return makeError(unavailableReason(c10::Device(c10::kCPU))); }

void CudaGraph::replay() { throw std::logic_error("CudaGraph::replay: this build has no CUDA graphs"); }

bool CudaGraph::captured() const { return false; }

#endif

}  // namespace streetgan
