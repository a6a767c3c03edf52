#pragma once
// RankPlacement: where this process sits in a distributed run (rank, world size, local rank, the
// store's address), read from the environment torchrun sets, or given by
// `streetgan train --nproc N` to the ranks it starts. No LibTorch here: the CLI's launcher uses it.
#include "core/util/result.h"

#include <optional>
#include <string>

namespace streetgan {

/// Where this process sits in a distributed run: torchrun's environment, or what
/// `streetgan train --nproc N` gives the ranks it starts.
struct RankPlacement {
  int rank = 0;                           ///< RANK
  int world_size = 1;                     ///< WORLD_SIZE
  int local_rank = 0;                     ///< LOCAL_RANK: the accelerator index on its host
  int local_world_size = 1;               ///< LOCAL_WORLD_SIZE
  std::string master_addr = "127.0.0.1";  ///< MASTER_ADDR: the host of the store
  int master_port = 29500;                ///< MASTER_PORT
  bool agent_store = false;  ///< TORCHELASTIC_USE_AGENT_STORE=True: torchrun's agent hosts the store
  std::string store_prefix;  ///< with the agent's store: "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>"
  int timeout_s = 300;       ///< STREETGAN_DIST_TIMEOUT: a collective or the rendezvous gives up after this
  int node_rank = 0;         ///< GROUP_RANK: this host's place among the hosts (default RANK / LOCAL_WORLD_SIZE)
  int restart_count = 0;     ///< TORCHELASTIC_RESTART_COUNT: 0 on the first attempt, k after the k-th restart
  int max_restarts = 0;      ///< TORCHELASTIC_MAX_RESTARTS: restarts the launcher allows in all
  std::string job_id;        ///< TORCHELASTIC_RUN_ID: the launch every attempt belongs to ("" when unset)
  std::string job_token;     ///< STREETGAN_JOB_TOKEN: what each rank proves to rank 0's store (job_token.h)

  /// Hosts in the job, when each runs LOCAL_WORLD_SIZE ranks.
  int nodeCount() const { return (world_size + local_world_size - 1) / local_world_size; }
  /// Whether a restart follows when this attempt fails.
  bool restartFollows() const { return restart_count < max_restarts; }
};

/// The host a rank runs on, when every host runs `ranks_per_node` ranks: "node 1 (ranks 2 and 3)".
std::string describeNode(int node, int ranks_per_node, int world_size);

/// The placement the environment names (RANK and WORLD_SIZE set), nothing when it names none,
/// or an Error naming the variable whose value is unusable.
Result<std::optional<RankPlacement>> rankPlacementFromEnvironment();

/// The device rank `placement` trains on for the config's `device`: cuda:LOCAL_RANK for "auto"
/// (with CUDA) and "cuda"; the device itself otherwise.
std::string rankDeviceSpec(const std::string& device, const RankPlacement& placement);

}  // namespace streetgan
