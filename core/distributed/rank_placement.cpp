#include "core/distributed/rank_placement.h"

#include "core/distributed/job_token.h"

#include <torch/cuda.h>

#include <algorithm>
#include <cstdlib>
#include <regex>

namespace streetgan {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

// A whole number in [lo, hi] from the environment variable `name`, or `fallback` when unset.
Result<int> envInteger(const char* name, int fallback, int lo, int hi) {
  const char* value = env(name);
  if (!value) return fallback;
  static const std::regex digits("[0-9]{1,9}");
  if (!std::regex_match(value, digits) || std::atoi(value) < lo || std::atoi(value) > hi)
    return makeError(std::string("environment variable ") + name + "=\"" + value + "\" is not allowed; allowed: a whole number from " +
                     std::to_string(lo) + " to " + std::to_string(hi));
  return std::atoi(value);
}

}  // namespace

Result<std::optional<RankPlacement>> rankPlacementFromEnvironment() {
  if (!env("RANK") && !env("WORLD_SIZE")) return std::optional<RankPlacement>();
  if (!env("RANK") || !env("WORLD_SIZE"))
    return makeError(std::string("environment variable ") + (env("RANK") ? "WORLD_SIZE" : "RANK") +
                     " is not set; a rank of a distributed run needs both RANK and WORLD_SIZE");
  RankPlacement p;
  auto world = envInteger("WORLD_SIZE", 1, 1, 65536);
  if (!world) return makeError(world.error());
  p.world_size = *world;
  auto rank = envInteger("RANK", 0, 0, p.world_size - 1);
  if (!rank) return makeError(rank.error());
  p.rank = *rank;
  auto local_world = envInteger("LOCAL_WORLD_SIZE", p.world_size, 1, p.world_size);
  if (!local_world) return makeError(local_world.error());
  p.local_world_size = *local_world;
  auto local_rank = envInteger("LOCAL_RANK", p.rank % p.local_world_size, 0, p.local_world_size - 1);
  if (!local_rank) return makeError(local_rank.error());
  p.local_rank = *local_rank;
  if (const char* addr = env("MASTER_ADDR")) p.master_addr = addr;
  auto port = envInteger("MASTER_PORT", 29500, 1, 65535);
  if (!port) return makeError(port.error());
  p.master_port = *port;
  auto timeout = envInteger("STREETGAN_DIST_TIMEOUT", p.timeout_s, 1, 86400);
  if (!timeout) return makeError(timeout.error());
  p.timeout_s = *timeout;
  auto node = envInteger("GROUP_RANK", p.rank / p.local_world_size, 0, p.world_size - 1);
  if (!node) return makeError(node.error());
  p.node_rank = *node;
  auto attempt = envInteger("TORCHELASTIC_RESTART_COUNT", 0, 0, 1000000);
  if (!attempt) return makeError(attempt.error());
  p.restart_count = *attempt;
  auto most = envInteger("TORCHELASTIC_MAX_RESTARTS", 0, 0, 1000000);
  if (!most) return makeError(most.error());
  p.max_restarts = *most;
  if (env("TORCHELASTIC_MAX_RESTARTS") && p.restart_count > p.max_restarts)
    return makeError("environment variable TORCHELASTIC_RESTART_COUNT=\"" + std::to_string(p.restart_count) +
                     "\" is more than TORCHELASTIC_MAX_RESTARTS=\"" + std::to_string(p.max_restarts) + "\"");
  if (const char* job = env("TORCHELASTIC_RUN_ID")) {
    static const std::regex printable("[\\x21-\\x7e]{1,256}");
    if (!std::regex_match(job, printable))
      return makeError(std::string("environment variable TORCHELASTIC_RUN_ID is not allowed; allowed: 1 to 256 "
                                   "printable characters without spaces"));
    p.job_id = job;
  }
  auto token = jobTokenFromEnvironment();
  if (!token) return makeError(token.error());
  p.job_token = *token;
  if (const char* agent = env("TORCHELASTIC_USE_AGENT_STORE"); agent && std::string(agent) == "True") {
    p.agent_store = true;
    p.store_prefix = "/worker/attempt_" + std::to_string(p.restart_count);
  }
  return std::optional<RankPlacement>(p);
}

std::string describeNode(int node, int ranks_per_node, int world_size) {
  const int first = node * ranks_per_node;
  const int last = std::min(world_size, first + ranks_per_node) - 1;
  std::string text = "node " + std::to_string(node) + " (rank";
  if (last <= first) return text + " " + std::to_string(first) + ")";
  if (last == first + 1) return text + "s " + std::to_string(first) + " and " + std::to_string(last) + ")";
  return text + "s " + std::to_string(first) + " to " + std::to_string(last) + ")";
}

std::string rankDeviceSpec(const std::string& device, const RankPlacement& placement) {
  const std::string cuda = "cuda:" + std::to_string(placement.local_rank);
  if (device == "cuda") return cuda;
  if (device == "hpu") return "hpu:" + std::to_string(placement.local_rank);
  if (device == "auto") return torch::cuda::is_available() ? cuda : "cpu";
  return device;
}

}  // namespace streetgan
