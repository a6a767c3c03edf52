#include "core/distributed/rank_group.h"

#include "core/distributed/job_store_client.h"
#include "core/distributed/job_store_server.h"
#include "core/distributed/job_token.h"
#include "core/util/exception_message.h"
#include "core/util/plain_text.h"
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
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace streetgan {
namespace {

using Milliseconds = std::chrono::milliseconds;

std::string failureKey(int rank) { return "streetgan/failure/" + std::to_string(rank); }

std::string textOfBytes(const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }
std::vector<std::uint8_t> bytesOf(const std::string& value) { return std::vector<std::uint8_t>(value.begin(), value.end()); }

// What another rank left in the store (its tag and message) as it may be printed and put in an
// event: anyone who reached the store could have written it.
std::string reportText(const std::vector<std::uint8_t>& bytes) {
  constexpr std::size_t kMaxReportBytes = 2000;
  return plainText(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), kMaxReportBytes);
}

std::string rankHostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || !*name) return "?";
  return name;
}

// Where the job's store listens and the ranks reach it: 127.0.0.1 when every rank is on this host
// (nothing listens beyond loopback), else --master-addr, the address the other hosts reach.
std::string storeHost(const RankPlacement& p) {
  return p.local_world_size == p.world_size ? "127.0.0.1" : p.master_addr;
}

c10::intrusive_ptr<c10d::Store> connectToJobStore(const RankPlacement& p) {
  return JobStoreClient::connect({storeHost(p), p.master_port, p.job_token, static_cast<std::uint32_t>(p.rank)},
                                 Milliseconds(static_cast<std::int64_t>(p.timeout_s) * 1000));
}

// After a restart, a host's new ranks may reach the store of the attempt before, whose rank 0 has
// not ended yet: rank 0 writes its attempt into its store, and a rank that finds an older one
// connects again (every second, within the timeout) until it reaches its own attempt's store.
Status joinCurrentAttempt(c10::intrusive_ptr<c10d::Store>& store, const RankPlacement& p) {
  const std::string key = "streetgan/attempt";
  if (p.rank == 0) {
    store->set(key, bytesOf(std::to_string(p.restart_count)));
    return {};
  }
  const auto deadline = std::chrono::steady_clock::now() + Milliseconds(static_cast<std::int64_t>(p.timeout_s) * 1000);
  for (;;) {
    store->wait({key}, Milliseconds(static_cast<std::int64_t>(p.timeout_s) * 1000));
    const int found = std::atoi(textOfBytes(store->get(key)).c_str());
    if (found == p.restart_count) return {};
    if (found > p.restart_count)
      return makeError("rank " + std::to_string(p.rank) + " was started for attempt " + std::to_string(p.restart_count) +
                       " of the job, and rank 0 is at attempt " + std::to_string(found) +
                       ": every host's launcher must restart its ranks together (give each the same --max-restarts)");
    if (std::chrono::steady_clock::now() >= deadline)
      return makeError("rank 0 of attempt " + std::to_string(p.restart_count) + " did not come within --dist-timeout " +
                       std::to_string(p.timeout_s) + " s (the store at " + p.master_addr + ":" +
                       std::to_string(p.master_port) + " still belongs to attempt " + std::to_string(found) + ")");
    store.reset();
    std::this_thread::sleep_for(Milliseconds(1000));
    store = connectToJobStore(p);
  }
}

// The ranks not yet joined, by host: "node 1 (ranks 2 and 3)", "rank 3 (node 1)"; at most 4 named.
std::string missingRanks(const std::vector<bool>& joined, const RankPlacement& p) {
  std::vector<std::string> parts;
  int more = 0;
  for (int node = 0; node < p.nodeCount(); ++node) {
    const int first = node * p.local_world_size, end = std::min(p.world_size, first + p.local_world_size);
    std::vector<int> ranks;
    for (int r = first; r < end; ++r)
      if (!joined[static_cast<std::size_t>(r)]) ranks.push_back(r);
    if (ranks.empty()) continue;
    if (parts.size() >= 4) {
      ++more;
      continue;
    }
    if (static_cast<int>(ranks.size()) == end - first && p.nodeCount() > 1) {
      parts.push_back(describeNode(node, p.local_world_size, p.world_size));
      continue;
    }
    std::string named = ranks.size() == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < ranks.size(); ++i)
      named += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
    parts.push_back(p.nodeCount() > 1 ? named + " (node " + std::to_string(node) + ")" : named);
  }
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : ", ") + parts[i];
  if (more > 0) text += " and " + std::to_string(more) + " more node(s)";
  return text;
}

// Before Gloo's own rendezvous (which waits without a word for ranks that never come, and cannot
// tell a wrong launch from a slow one), every rank signs in through the store: a rank number taken
// twice, ranks started for another job size, and hosts missing when the timeout ends each fail the
// join with one line saying so. Rank 0 gives the verdict; the others wait for it.
Status checkJoin(c10d::Store& store, const RankPlacement& p) {
  const std::string of = " of " + std::to_string(p.world_size);
  const std::string job_key = "streetgan/join/job", verdict_key = "streetgan/join/verdict";
  const auto timeout = Milliseconds(static_cast<std::int64_t>(p.timeout_s) * 1000);
  const auto launch = [](int world, int local_world) {
    return std::to_string(world) + " ranks (" + std::to_string(world / std::max(1, local_world)) + " host(s) × " +
           std::to_string(local_world) + ")";
  };
  const auto claim = [&]() -> Status {
    if (store.add("streetgan/join/rank/" + std::to_string(p.rank), 1) == 1) return {};
    return makeError("rank " + std::to_string(p.rank) + of + " has already joined from another host: two hosts were "
                     "started with --node-rank " + std::to_string(p.node_rank) + " (give each host its own "
                     "--node-rank, 0 to " + std::to_string(p.nodeCount() - 1) + ")");
  };
  if (p.rank != 0) {
    // Rank 0's job size first: a rank started for another one says so to every rank (the
    // verdict) and never takes a place in this job.
    store.wait({job_key}, timeout);
    std::istringstream job(textOfBytes(store.get(job_key)));
    int world = 0, local_world = 0;
    job >> world >> local_world;
    if (world != p.world_size || local_world != p.local_world_size) {
      const std::string message = "rank " + std::to_string(p.rank) + " (host " + rankHostName() + ", --node-rank " +
                                  std::to_string(p.node_rank) + ") was started for a job of " +
                                  launch(p.world_size, p.local_world_size) + ", and rank 0 for " +
                                  launch(world, local_world) + ": give every host the same --nnodes and --nproc";
      store.set(verdict_key, bytesOf(message));
      return makeError(message);
    }
    if (Status claimed = claim(); !claimed) return claimed;
    store.set("streetgan/join/in/" + std::to_string(p.rank), bytesOf(rankHostName()));
    store.add("streetgan/join/count", 1);
    // Rank 0 decides within the timeout; the margin covers its last look at the store.
    store.wait({verdict_key}, timeout + Milliseconds(10000));
    const std::string verdict = reportText(store.get(verdict_key));
    if (verdict == "ok") return {};
    return makeError(verdict);
  }
  if (Status claimed = claim(); !claimed) return claimed;
  store.set(job_key, bytesOf(std::to_string(p.world_size) + " " + std::to_string(p.local_world_size)));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string verdict;
  for (;;) {
    // Two small requests a round, whatever the job's size: the count, and a refusal of another rank.
    if (store.check({verdict_key})) return makeError(reportText(store.get(verdict_key)));
    if (store.add("streetgan/join/count", 0) >= p.world_size - 1) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::vector<bool> joined(static_cast<std::size_t>(p.world_size), true);
      for (int r = 1; r < p.world_size; ++r)
        joined[static_cast<std::size_t>(r)] = store.check({"streetgan/join/in/" + std::to_string(r)});
      verdict = missingRanks(joined, p) + " did not join within --dist-timeout " + std::to_string(p.timeout_s) +
                " s: is `streetgan train --node-rank N` running there, and can it reach " + p.master_addr + ":" +
                std::to_string(p.master_port) + "?";
      break;
    }
    std::this_thread::sleep_for(Milliseconds(50));
  }
  store.set(verdict_key, bytesOf(verdict.empty() ? "ok" : verdict));
  if (verdict.empty()) return {};
  return makeError(verdict);
}

// The network interface Gloo talks through: GLOO_SOCKET_IFNAME as PyTorch reads it, loopback
// when every rank is on this host, else the address this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> glooDevice(const RankPlacement& placement) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface)
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  if (placement.local_world_size == placement.world_size)
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// torchrun's agent hosts the store: every rank is its client (c10d's TCPStore, as torchrun speaks).
c10::intrusive_ptr<c10d::Store> torchrunAgentStore(const RankPlacement& p) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(p.master_port);
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = Milliseconds(static_cast<std::int64_t>(p.timeout_s) * 1000);
  options.multiTenant = true;
  torch_compat::usePlainTcpStore(options);
  return c10::make_intrusive<c10d::TCPStore>(p.master_addr, options);
}

Result<std::unique_ptr<JobStoreServer>> startJobStore(const RankPlacement& p) {
  JobStoreServerOptions options;
  options.address = storeHost(p);
  options.port = p.master_port;
  options.token = p.job_token;
  options.world_size = p.world_size;
  options.warn = [](const std::string& text) { std::fprintf(stderr, "warning: %s\n", text.c_str()); };
  auto server = JobStoreServer::start(std::move(options));
  if (!server && p.local_world_size != p.world_size)
    return makeError(server.error() + ": --master-addr must be an address of this host (rank 0's) that the other "
                                      "hosts reach");
  return server;
}

}  // namespace

struct RankGroup::Impl {
  std::unique_ptr<JobStoreServer> server;  // rank 0's; first, so that it ends after every user of it
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
    c10::intrusive_ptr<c10d::Store> store;
    if (placement.agent_store) {
      store = c10::make_intrusive<c10d::PrefixStore>(placement.store_prefix, torchrunAgentStore(placement));
    } else {
      if (placement.job_token.empty())
        return makeError("rank " + std::to_string(placement.rank) + " of a distributed run needs the job's token in "
                         "the environment variable " + kJobTokenVariable + " (streetgan train --nproc gives it to the "
                         "ranks it starts; with torchrun, set it on every host: docs/distributed.md)");
      if (placement.rank == 0) {
        auto server = startJobStore(placement);
        if (!server) return makeError(server.error());
        impl->server = std::move(*server);
      }
      store = connectToJobStore(placement);
      if (Status current = joinCurrentAttempt(store, placement); !current) return makeError(current.error());
    }
    impl->store = store;
    if (Status joined = checkJoin(*store, placement); !joined) return makeError(joined.error());
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

std::vector<std::int64_t> RankGroup::fromRankZeroOnHost(const std::vector<std::int64_t>& values) {
  std::vector<at::Tensor> tensors{torch::tensor(values, torch::kInt64)};
  impl_->wait(impl_->start([&] {
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    return impl_->control->broadcast(tensors, options);
  }));
  const auto* got = tensors[0].data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(got, got + values.size());
}

// The size comes from rank 0 alone (a sum of every rank's would let another rank make rank 0 send
// past its buffer), and every rank refuses the same size before allocating, so all of them skip
// the bytes' broadcast together.
Status RankGroup::broadcastBytesFromRankZero(std::string& bytes, std::int64_t max_bytes) {
  const auto size = fromRankZeroOnHost({rank() == 0 ? static_cast<std::int64_t>(bytes.size()) : 0}).front();
  if (size < 0 || size > max_bytes)
    return makeError("rank 0 has " + std::to_string(size) + " bytes to send, more than the " + std::to_string(max_bytes) +
                     " the ranks accept");
  if (rank() != 0) bytes.assign(static_cast<std::size_t>(size), '\0');
  if (size == 0) return {};
  std::vector<at::Tensor> tensors{torch::from_blob(bytes.data(), {size}, torch::kUInt8)};
  impl_->wait(impl_->start([&] {
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    return impl_->control->broadcast(tensors, options);
  }));
  return {};
}

// Each rank fills only its own slot (an all-gather, not a sum that any rank could skew).
std::vector<std::int64_t> RankGroup::gatherOnHost(std::int64_t value) {
  std::vector<at::Tensor> input{torch::tensor({value}, torch::kInt64)};
  std::vector<std::vector<at::Tensor>> output(1);
  for (int r = 0; r < worldSize(); ++r) output[0].push_back(torch::empty({1}, torch::kInt64));
  impl_->wait(impl_->start([&] { return impl_->control->allgather(output, input); }));
  std::vector<std::int64_t> values;
  for (const auto& slot : output[0]) values.push_back(slot.item<std::int64_t>());
  return values;
}

std::string RankGroup::reportOf(int rank) {
  try {
    if (!impl_->store->check({failureKey(rank)})) return {};
    const std::string value = reportText(impl_->store->get(failureKey(rank)));
    return value.empty() ? value : value.substr(1);
  } catch (...) {
    return {};
  }
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
          reports[static_cast<std::size_t>(r)] = reportText(impl_->store->get(failureKey(r)));
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
  const bool hosts = p.nodeCount() > 1;
  const auto on_node = [&](int r) { return hosts ? " (node " + std::to_string(r / p.local_world_size) + ")" : std::string(); };
  for (int r = 1; r < p.world_size; ++r)
    if (reports[static_cast<std::size_t>(r)].rfind("o", 0) == 0)
      return "rank " + std::to_string(r) + of + on_node(r) + " failed: " + reports[static_cast<std::size_t>(r)].substr(1);
  std::vector<bool> reported(reports.size(), true);
  bool silent = false;
  for (int r = 1; r < p.world_size; ++r) {
    reported[static_cast<std::size_t>(r)] = !reports[static_cast<std::size_t>(r)].empty();
    silent = silent || !reported[static_cast<std::size_t>(r)];
  }
  if (silent && hosts)
    return missingRanks(reported, p) + " of " + std::to_string(p.world_size) + " ranks stopped responding (the host "
           "went away, its network failed, or its processes ended, were killed or hang), so training stopped on every "
           "rank; rank 0 saw: " + message;
  for (int r = 1; r < p.world_size; ++r)
    if (reports[static_cast<std::size_t>(r)].empty())
      return "rank " + std::to_string(r) + of + " stopped responding (its process ended, was killed or hangs), so "
             "training stopped on every rank; rank 0 saw: " + message;
  return "a collective operation failed on every rank: " + message;
}

}  // namespace streetgan
