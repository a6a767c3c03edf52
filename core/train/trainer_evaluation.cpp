// Trainer's evaluations during training (rank 0's): Parzen's held-out splits and estimate, on a
// thread of its own with several ranks, the quality metrics' worker and its events, and the alarms
// their figures raise.
#include "core/train/trainer_state.h"

namespace streetgan {

// Rank 0's evaluations during training: Parzen's held-out splits, the quality metrics' worker.
Status Trainer::State::prepareEvaluations() {
  if (!writer) return {};
  if (config.parzen.every_epochs > 0)
    if (Status loaded = loadParzenSplits(); !loaded) return makeError(loaded.error());
  if (config.metrics.every_epochs <= 0 && config.metrics.every_images <= 0) return {};
  if (config.nc != 3)
    return makeError(
        "config key \"metrics.every_epochs\": the quality metrics compare RGB images; this run "
        "trains on " +
        std::to_string(config.nc) + " channel(s)");
  auto suite = QualitySuiteOptions::forTraining(config);
  if (!suite) return makeError(suite.error());
  if (auto problem = QualitySuite::unmet(config.metrics.n_samples, config.metrics.n_train, config.img_size, *suite))
    return makeError("config keys \"metrics.n_samples\" and \"metrics.n_train\": " + *problem);
  live_metrics = std::make_unique<LiveQualityMetrics>(config);
  return {};
}

Status Trainer::State::loadParzenSplits() {
  if (!config.data.filter.hasHoldout())
    return makeError("config key \"parzen.every_epochs\": Parzen evaluation needs a held-out split "
                     "(data.holdout_cities or data.holdout_fraction; --holdout-cities, --holdout-fraction)");
  HeldOutSplitsRequest request = HeldOutSplitsRequest::forModel(config);
  request.purpose = "Parzen";
  auto splits = HeldOutSplits::load(request);
  if (!splits)
    return makeError(splits.error() + "; hold out more of the data (data.holdout_fraction, data.holdout_cities) or "
                                      "turn Parzen off (parzen.every_epochs 0)");
  parzen_valid = splits->valid.rows;
  parzen_test = splits->test.rows;
  return {};
}

// With several ranks, rank 0 evaluates on a thread of its own while every rank's main thread meets
// the others twice a second: an evaluation longer than --dist-timeout would otherwise leave the
// other ranks waiting in their next collective until it timed out and ended the job.
void Trainer::State::evaluateParzen() {
  if (!group) return evaluateParzenHere();
  std::atomic<bool> done{!writer};
  std::string failure;
  std::thread worker;
  if (writer)
    worker = std::thread([&] {
      try {
        evaluateParzenHere();
      } catch (const std::exception& e) {
        failure = firstLine(e.what());
      }
      done = true;
    });
  try {
    while (group->gatherOnHost(done ? 1 : 0).front() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } catch (...) {
    if (worker.joinable()) worker.join();  // the evaluation ends on its own; the group's failure goes on up
    throw;
  }
  if (worker.joinable()) worker.join();
  if (!failure.empty()) warn("Parzen evaluation failed: " + failure);
}

void Trainer::State::evaluateParzenHere() {
  if (!writer) return;
  const auto start = Clock::now();
  // The same noise at every evaluation, from its own generator: the curve over epochs compares
  // like with like, and the training streams are untouched (eval-mode G changes no buffer).
  const torch::Tensor samples = generateSampleRows(model->renderingGenerator(), config.nz, config.parzen.n_samples,
                                                   static_cast<std::uint64_t>(config.seed) * 2 + 7,
                                                   std::max(1, config.batch_size), device, false);
  model->generator()->train();
  ParzenOptions options;
  if (!config.parzen.sigmas.empty()) options.sigmas = config.parzen.sigmas;
  options.device = device;
  options.progress = [this](double) { return !stopRequested(); };
  auto result = ParzenEstimator::evaluate(samples, parzen_valid, parzen_test, options);
  if (!result) {
    if (!stopRequested()) warn("Parzen evaluation failed: " + result.error());
    return;
  }
  events::Parzen e;
  e.epoch = progress.epoch;
  e.step = progress.step;
  e.images_seen = progress.images_seen;
  e.sigma = result->sigma;
  e.mean_ll = result->mean_ll;
  e.standard_error = result->stderr_ll;
  e.n_test = result->n_test;
  e.n_valid = result->n_valid;
  e.n_samples = result->n_samples;
  for (const auto& point : result->curve) e.curve.emplace_back(point.sigma, point.mean_ll);
  e.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  emit(std::move(e));
}

// ADA's heuristic over a stretch of steps: one warning when r_t's mean rises above the level, and
// another only after it has fallen back below it.
void Trainer::State::watchOverfitting(double rt, double ada_p) {
  if (!writer || !std::isfinite(rt)) return;
  const auto window = static_cast<std::size_t>(config.metrics.alarm_rt_steps);
  recent_rt.push_back(rt);
  recent_rt_sum += rt;
  while (recent_rt.size() > window) {
    recent_rt_sum -= recent_rt.front();
    recent_rt.pop_front();
  }
  if (recent_rt.size() < window) return;
  const double mean = recent_rt_sum / static_cast<double>(window);
  const QualityAlarmThresholds thresholds = QualityAlarmThresholds::of(config.metrics);
  OverfittingRemedy remedy;
  if (const DiscriminatorAugment* augment = model->augment(); augment && augment->ada()) {
    remedy.ada = true;
    remedy.target = config.augment.ada_target;
    remedy.start_p = config.augment.ada_p;
    remedy.p = ada_p;
  }
  const auto alarm = QualityAlarms::fromRt(mean, config.metrics.alarm_rt_steps, thresholds, remedy);
  if (alarm && !rt_alarm_raised) emitAlarm(*alarm, progress.step);
  rt_alarm_raised = alarm.has_value();
}

// The quality metrics of this moment, on the worker: a CPU copy of G goes with them.
void Trainer::State::startLiveMetrics() {
  if (!live_metrics) return;
  last_metrics_skipped = !live_metrics->start(LiveQualityMetrics::copyOf(model->renderingGenerator(), config), progress);
}

// Finished quality evaluations as metrics events, and the alarms their figures raise.
void Trainer::State::emitLiveMetrics() {
  if (!live_metrics) return;
  for (LiveQualityResult& result : live_metrics->take()) {
    if (!result.evaluation) {
      warn("quality metrics failed: " + result.evaluation.error());
      continue;
    }
    const QualityEvaluation& evaluation = *result.evaluation;
    const std::int64_t skips = live_metrics->skipped();
    events::Metrics e;
    e.epoch = result.at.epoch;
    e.step = result.at.step;
    e.images_seen = result.at.images_seen;
    for (const auto& [name, value] : evaluation.metrics) e.figures.emplace_back(name, value);
    e.feature_space = evaluation.feature_space;
    e.n_samples = evaluation.n_samples;
    e.n_train = evaluation.n_train;
    e.skipped_due_points = skips - reported_metric_skips;
    e.seconds = result.seconds;
    emit(std::move(e));
    reported_metric_skips = skips;
    for (const QualityAlarm& alarm : QualityAlarms::fromEvaluation(evaluation, QualityAlarmThresholds::of(config.metrics)))
      emitAlarm(alarm, result.at.step);
  }
}

void Trainer::State::emitAlarm(const QualityAlarm& alarm, std::int64_t step) {
  events::Warning warning;
  warning.message = alarm.message;
  warning.alarm = alarm.kind;
  warning.step = step;
  emit(std::move(warning));
}

}  // namespace streetgan
