#pragma once
// Trainer: one training run, start to finish, in the current process (the `streetgan train`
// process; the studio never trains in its own). Prepares the run directory, restores the latest
// checkpoint on resume, then steps through epochs, emitting the events of docs/events.md, sample
// grids and checkpoints. A stop request (SIGINT/SIGTERM in the CLI) finishes the current step, writes a
// checkpoint and ends with run_finished "stopped". Failures come back as an Error and are also
// logged as `error` + run_finished "failed" events. As one rank of several (TrainerOptions::
// placement) every rank trains its share of each batch and rank 0 writes; a stop or a failure on
// any rank ends every rank at the same step (docs/distributed.md).
#include "core/config/train_config.h"
#include "core/runs/run_event.h"
#include "core/distributed/rank_placement.h"
#include "core/util/result.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace streetgan {

struct TrainerOptions {
  std::string run_dir;                    ///< empty: root/name from the config
  bool resume = false;                    ///< continue from the run's latest checkpoint
  /// On resume: the keys given again, a partial config (the data folder if it moved, the epochs,
  /// device, precision, threads, cache, workers, CUDA graphs) applied to the stored config through
  /// applyConfigJson with ConfigScope::Resume, which refuses any other key.
  nlohmann::json resume_overrides = nlohmann::json::object();
  bool events_to_stdout = false;          ///< also print every event line to stdout
  /// One rank of a distributed run (torchrun or `--nproc`): joins the other ranks in prepare().
  /// Rank 0 alone writes the run directory; the others write nothing and emit no events.
  std::optional<RankPlacement> placement;
  const std::atomic<bool>* stop_requested = nullptr;  ///< polled between steps
  std::function<void(const events::RunEvent&)> on_event;  ///< called with every event, as it is written
};

enum class RunOutcome { Completed, Stopped };

class Trainer {
public:
  /// Checks everything that can be checked before work starts: the config, the device, the data
  /// folder, the run directory (a new run refuses a folder that already holds one). A refusal's
  /// kind says whose it was: the config's or the options' (a bad value, a missing or empty data
  /// folder, a folder that already holds a run; ErrorKind::Input) or the machine's (a run folder
  /// or event log that cannot be created, a checkpoint or image cache that cannot be read, a rank
  /// group that cannot form; ErrorKind::Machine). Nothing was started either way.
  static Result<std::unique_ptr<Trainer>> prepare(const TrainConfig& config, const TrainerOptions& options);
  ~Trainer();

  Result<RunOutcome> run();
  const std::string& runDirectory() const;
  /// The device and precision it trains with, and for "auto" why: "cpu, fp32 (auto: ...)".
  const std::string& deviceChoice() const;
  /// 0 alone; this process's rank in a distributed run.
  int rank() const;

private:
  struct State;
  explicit Trainer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace streetgan
