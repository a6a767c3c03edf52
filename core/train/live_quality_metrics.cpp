#include "core/train/live_quality_metrics.h"

#include "core/data/image_dataset.h"
#include "core/eval/parzen_inputs.h"
#include "core/train/network_options.h"
#include "core/eval/quality_suite.h"
#include "core/util/exception_message.h"

#include <torch/torch.h>

#include <chrono>

namespace streetgan {

LiveQualityMetrics::LiveQualityMetrics(const TrainConfig& config) : config_(config) {
  thread_ = std::thread([this] { work(); });
}

LiveQualityMetrics::~LiveQualityMetrics() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  cancel_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Generator LiveQualityMetrics::copyOf(Generator& generator, const TrainConfig& config) {
  Generator copy(generatorOptionsFor(config));
  torch::NoGradGuard no_grad;
  const auto params = generator->named_parameters(/*recurse=*/true);
  for (auto& item : copy->named_parameters(true)) item.value().copy_(params[item.key()].to(torch::kCPU));
  const auto buffers = generator->named_buffers(true);
  for (auto& item : copy->named_buffers(true)) item.value().copy_(buffers[item.key()].to(torch::kCPU));
  copy->eval();
  return copy;
}

bool LiveQualityMetrics::start(Generator generator, const TrainingProgress& at) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_ || job_) {
      ++skipped_;
      return false;
    }
    job_.emplace(std::move(generator), at);
  }
  wake_.notify_all();
  return true;
}

std::vector<LiveQualityResult> LiveQualityMetrics::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LiveQualityResult> out(std::make_move_iterator(done_.begin()), std::make_move_iterator(done_.end()));
  done_.clear();
  return out;
}

void LiveQualityMetrics::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return !running_ && !job_; });
}

void LiveQualityMetrics::work() {
  for (;;) {
    std::optional<std::pair<Generator, TrainingProgress>> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return quit_ || job_.has_value(); });
      if (quit_) return;
      job = std::move(job_);
      job_.reset();
      running_ = true;
    }
    LiveQualityResult result = evaluate(std::move(job->first), job->second);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.push_back(std::move(result));
      running_ = false;
    }
    idle_.notify_all();
  }
}

LiveQualityResult LiveQualityMetrics::evaluate(Generator generator, const TrainingProgress& at) {
  LiveQualityResult result;
  result.at = at;
  const auto start = std::chrono::steady_clock::now();
  try {
    torch::NoGradGuard no_grad;
    if (!train_.defined() && train_error_.empty()) {
      auto dataset = ImageDataset::open(config_.dataroot, config_.data.filter, DatasetPart::Train);
      if (!dataset) {
        train_error_ = dataset.error();
      } else {
        const auto paths = shuffledPaths(*dataset, static_cast<std::uint64_t>(config_.seed) * 3 + 11, 0,
                                         static_cast<std::size_t>(config_.metrics.n_train));
        auto rows = loadImageRows(paths, config_.img_size, config_.nc, config_.augment.crop_scale);
        if (!rows) train_error_ = rows.error();
        else train_ = rows->rows.view({rows->rows.size(0), config_.nc, config_.img_size, config_.img_size});
      }
    }
    if (!train_error_.empty()) {
      result.evaluation = makeError("training images: " + train_error_);
      return result;
    }
    // The same noise at every evaluation: the figures over training compare like with like.
    const torch::Tensor rows = generateSampleRows(generator, config_.nz, config_.metrics.n_samples,
                                                  static_cast<std::uint64_t>(config_.seed) * 5 + 13,
                                                  std::max(1, config_.batch_size), c10::kCPU, false);
    auto options = QualitySuiteOptions::forTraining(config_);
    if (!options) {
      result.evaluation = makeError(options.error());
      return result;
    }
    options->should_stop = [this] { return cancel_.load(); };
    result.evaluation = QualitySuite::evaluate(rows.view({rows.size(0), config_.nc, config_.img_size, config_.img_size}),
                                               train_, *options);
  } catch (...) {
    result.evaluation = makeError(exceptionMessage(std::current_exception()));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace streetgan
