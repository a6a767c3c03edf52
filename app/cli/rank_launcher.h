#pragma once
// RankLauncher: `streetgan train --nproc N` starts N ranks of itself on this host (as the
// original tool's mp.spawn did, and as torchrun would), with torchrun's environment (RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), and supervises them:
// SIGINT/SIGTERM is passed on to every rank (they stop together at one step, rank 0 saves one
// checkpoint); a rank that fails or dies ends the others: they notice through their collectives
// (at once for a closed connection, after the timeout for a hung rank) and end by themselves;
// any still running 10 s (or the timeout, if shorter) after the first failure are killed. When rank 0 itself died without
// finishing the event log, the launcher writes the `error` and `run_finished` events for it.
// The ranks stay in the launcher's process group (a studio's Kill of the group reaches them) and
// get SIGKILL as their parent-death signal (PR_SET_PDEATHSIG): a launcher killed outright takes
// its ranks with it instead of leaving them training. With --max-restarts K, a failed attempt
// (every rank ended, one of them in failure) is followed by another, at most K times: the same
// ranks, with TORCHELASTIC_RESTART_COUNT set as torchrun sets it, continue the run from its last
// checkpoint; rank 0 writes a `restart` event. Each host's launcher restarts its own ranks.
#include <string>
#include <vector>

namespace streetgan::cli {

struct RankLaunchOptions {
  int nproc = 1;                          ///< ranks on this host
  int nnodes = 1;                         ///< hosts in the job
  int node_rank = 0;                      ///< this host's place among them
  std::string master_addr = "127.0.0.1";  ///< host of rank 0 (the store)
  int master_port = 0;                    ///< 0: a free port (one host only)
  int timeout_s = 300;                    ///< the collective timeout the ranks get
  int max_restarts = 0;                   ///< restarts of the whole group after a rank fails
  std::vector<std::string> rank_args;     ///< `train` arguments of every rank
  std::string events_path;                ///< rank 0's events.jsonl (node 0), for a dead rank 0
  std::string job_token;                  ///< what each rank proves to rank 0's store (job_token.h)
};

/// Runs the ranks to their end; returns the exit code of the whole job (0 when every rank
/// exited 0, else 1), or 2 with a message when the ranks cannot be started.
int launchRanks(const RankLaunchOptions& options);

}  // namespace streetgan::cli
