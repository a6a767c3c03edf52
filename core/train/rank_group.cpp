#include "core/train/rank_group.h"

#include "core/util/exception_message.h"
#include "core/util/torch_compat.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace streetgan {
namespace {

using Milliseconds = std::chrono::milliseconds;

std::string failureKey(int rank) { return "streetgan/failure/" + std::to_string(rank); }

bool isLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The network interface Gloo talks through: GLOO_SOCKET_IFNAME as PyTorch reads it, loopback
// when every rank is on this host, else the address this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> glooDevice(const RankPlacement& placement) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface)
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  if (isLoopback(placement.master_addr) && placement.local_world_size == placement.world_size)
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

}  // namespace

struct RankGroup::Impl {
  RankPlacement placement;
  std::string backend_name;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<torch_compat::CollectiveBackend> data;
  c10::intrusive_ptr<torch_compat::CollectiveBackend> control;
  std::vector<c10::intrusive_ptr<c10d::Work>> pending;
  std::atomic<bool> failed{false};

  void wait(const c10::intrusive_ptr<c10d::Work>& work) {
    try {
      work->wait();
    } catch (...) {
      failed = true;
      throw;
    }
  }
  c10::intrusive_ptr<c10d::Work> start(const std::function<c10::intrusive_ptr<c10d::Work>()>& call) {
    try {
      return call();
    } catch (...) {
      failed = true;
      throw;
    }
  }
};

RankGroup::RankGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RankGroup::~RankGroup() {
  // A group whose peers are gone can block in its destructor (Gloo joins its worker threads
  // after their pending work times out); a failed run ends without waiting for that.
  if (impl_ && impl_->failed) {
    (void)impl_.release();
  }
}

Result<std::unique_ptr<RankGroup>> RankGroup::connect(const RankPlacement& placement) {
  auto impl = std::make_unique<Impl>();
  impl->placement = placement;
  const Milliseconds timeout(static_cast<std::int64_t>(placement.timeout_s) * 1000);
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(placement.master_port);
    options.isServer = !placement.agent_store && placement.rank == 0;
    if (!placement.agent_store) options.numWorkers = placement.world_size;
    options.waitWorkers = false;
    options.timeout = timeout;
    options.multiTenant = true;
    torch_compat::usePlainTcpStore(options);
    c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(placement.master_addr, options);
    if (placement.agent_store) store = c10::make_intrusive<c10d::PrefixStore>(placement.store_prefix, store);
    impl->store = store;
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
    gloo_options->devices.push_back(glooDevice(placement));
    impl->control = c10::make_intrusive<c10d::ProcessGroupGloo>(
        c10::make_intrusive<c10d::PrefixStore>("streetgan/gloo", store), placement.rank, placement.world_size,
        gloo_options);
    impl->data = impl->control;
    impl->backend_name = "gloo";
  } catch (...) {
    return makeError("could not join the distributed run as rank " + std::to_string(placement.rank) + " of " +
                     std::to_string(placement.world_size) + " through the store at " + placement.master_addr + ":" +
                     std::to_string(placement.master_port) + " (--dist-timeout " + std::to_string(placement.timeout_s) +
                     " s): " + exceptionMessage(std::current_exception()));
  }
  return std::unique_ptr<RankGroup>(new RankGroup(std::move(impl)));
}

Status RankGroup::useDevice(const c10::Device& device) {
  if (device.is_cpu()) return {};
  if (!device.is_cuda())
    return makeError("distributed training on " + device.str() + " needs its vendor's collective backend "
                     "(HCCL for Gaudi), which this build of streetgan does not link; train with one process per host");
#ifdef USE_C10D_NCCL
  try {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = std::chrono::milliseconds(static_cast<std::int64_t>(impl_->placement.timeout_s) * 1000);
    impl_->data = c10::make_intrusive<c10d::ProcessGroupNCCL>(
        c10::make_intrusive<c10d::PrefixStore>("streetgan/nccl", impl_->store), impl_->placement.rank,
        impl_->placement.world_size, options);
    impl_->backend_name = "nccl";
    return {};
  } catch (...) {
    return makeError("cannot start PyTorch's NCCL backend: " + exceptionMessage(std::current_exception()));
  }
#else
  return makeError("distributed training on CUDA needs PyTorch's NCCL backend, and this LibTorch was built "
                   "without it (no ProcessGroupNCCL); train with --device cpu, or build streetgan against a "
                   "LibTorch with CUDA and NCCL");
#endif
}

int RankGroup::rank() const { return impl_->placement.rank; }
int RankGroup::worldSize() const { return impl_->placement.world_size; }
const RankPlacement& RankGroup::placement() const { return impl_->placement; }
const std::string& RankGroup::backend() const { return impl_->backend_name; }
bool RankGroup::collectiveFailed() const { return impl_->failed; }

void RankGroup::startAllReduceSum(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  impl_->pending.push_back(impl_->start([&] {
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    return impl_->data->allreduce(tensors, options);
  }));
}

void RankGroup::waitAll() {
  auto pending = std::move(impl_->pending);
  impl_->pending.clear();
  for (auto& work : pending) impl_->wait(work);
}

void RankGroup::allReduceSum(at::Tensor& tensor) {
  startAllReduceSum(tensor);
  waitAll();
}

void RankGroup::broadcastFromRankZero(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  impl_->wait(impl_->start([&] {
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    return impl_->data->broadcast(tensors, options);
  }));
}

std::vector<std::int64_t> RankGroup::sumOnHost(const std::vector<std::int64_t>& values) {
  std::vector<at::Tensor> tensors{torch::tensor(values, torch::kInt64)};
  impl_->wait(impl_->start([&] {
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    return impl_->control->allreduce(tensors, options);
  }));
  const auto* sums = tensors[0].data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(sums, sums + values.size());
}

std::vector<std::int64_t> RankGroup::gatherOnHost(std::int64_t value) {
  std::vector<std::int64_t> slots(static_cast<std::size_t>(worldSize()), 0);
  slots[static_cast<std::size_t>(rank())] = value;
  return sumOnHost(slots);
}

std::string RankGroup::failureCause(const std::string& message, bool from_collective) {
  const auto& p = impl_->placement;
  try {
    const std::string value = std::string(from_collective ? "c" : "o") + message;
    impl_->store->set(failureKey(p.rank), std::vector<std::uint8_t>(value.begin(), value.end()));
  } catch (...) {
    // The store is gone with rank 0; this rank's own message still reaches its stderr.
  }
  if (p.rank != 0 || !from_collective) return message;
  // Rank 0's collective failed because of another rank: wait a little for the others to say why.
  std::vector<std::string> reports(static_cast<std::size_t>(p.world_size));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::min(3, p.timeout_s));
  for (;;) {
    bool all = true;
    for (int r = 1; r < p.world_size; ++r) {
      if (!reports[static_cast<std::size_t>(r)].empty()) continue;
      try {
        if (impl_->store->check({failureKey(r)})) {
          const auto bytes = impl_->store->get(failureKey(r));
          reports[static_cast<std::size_t>(r)] = std::string(bytes.begin(), bytes.end());
          if (reports[static_cast<std::size_t>(r)].empty()) reports[static_cast<std::size_t>(r)] = "c";
        }
      } catch (...) {
      }
      all = all && !reports[static_cast<std::size_t>(r)].empty();
    }
    bool own_cause = false;
    for (int r = 1; r < p.world_size; ++r) own_cause = own_cause || reports[static_cast<std::size_t>(r)].rfind("o", 0) == 0;
    if (all || own_cause || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(Milliseconds(100));
  }
  const std::string of = " of " + std::to_string(p.world_size);
  for (int r = 1; r < p.world_size; ++r)
    if (reports[static_cast<std::size_t>(r)].rfind("o", 0) == 0)
      return "rank " + std::to_string(r) + of + " failed: " + reports[static_cast<std::size_t>(r)].substr(1);
  for (int r = 1; r < p.world_size; ++r)
    if (reports[static_cast<std::size_t>(r)].empty())
      return "rank " + std::to_string(r) + of + " stopped responding (its process ended, was killed or hangs), so "
             "training stopped on every rank; rank 0 saw: " + message;
  return "a collective operation failed on every rank: " + message;
}

}  // namespace streetgan
