#pragma once
// LiveQualityMetrics: the quality metric suite during training, off the training thread. At each
// due point the trainer hands over a CPU copy of the generator and where training stands; a worker
// thread draws the samples (the same noise at every evaluation, eval-mode BatchNorm), runs
// QualitySuite against training images loaded once on that thread, and queues the result. The
// trainer collects finished results between steps and writes their events itself (events are
// written by one thread). One evaluation runs at a time: a due point that finds the worker busy is
// skipped and counted. The destructor cancels a running evaluation and joins the thread.
// Failures (no training image, too few for a metric) come back as results with an error.
#include "core/config/train_config.h"
#include "core/runs/quality_evaluation_file.h"
#include "core/model/generator.h"
#include "core/train/checkpoint.h"
#include "core/util/result.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace streetgan {

struct LiveQualityResult {
  TrainingProgress at;  ///< where training stood when the copy was taken
  Result<QualityEvaluation> evaluation = makeError("not evaluated");
  double seconds = 0;   ///< the whole evaluation, samples included
};

class LiveQualityMetrics {
public:
  /// For a run of `config`; nothing is loaded until the first evaluation.
  explicit LiveQualityMetrics(const TrainConfig& config);
  ~LiveQualityMetrics();
  LiveQualityMetrics(const LiveQualityMetrics&) = delete;
  LiveQualityMetrics& operator=(const LiveQualityMetrics&) = delete;

  /// A CPU copy of `generator` (parameters and buffers), for handing to start().
  static Generator copyOf(Generator& generator, const TrainConfig& config);

  /// Starts an evaluation of `generator` (a copy nothing else uses) at `at`; false, and the
  /// skip counted, while one is still running.
  bool start(Generator generator, const TrainingProgress& at);
  /// The results finished since the last call, oldest first.
  std::vector<LiveQualityResult> take();
  /// Waits until no evaluation runs (a finished one is then in take()).
  void waitIdle();
  /// Due points skipped because the worker was busy.
  std::int64_t skipped() const { return skipped_; }

private:
  void work();
  LiveQualityResult evaluate(Generator generator, const TrainingProgress& at);

  TrainConfig config_;
  torch::Tensor train_;       // loaded on the worker at its first evaluation
  std::string train_error_;   // why the training images could not be loaded
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::optional<std::pair<Generator, TrainingProgress>> job_;
  bool running_ = false;
  bool quit_ = false;
  std::atomic<bool> cancel_{false};
  std::deque<LiveQualityResult> done_;
  std::atomic<std::int64_t> skipped_{0};
  std::thread thread_;
};

}  // namespace streetgan
