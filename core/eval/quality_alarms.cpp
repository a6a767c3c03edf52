#include "core/eval/quality_alarms.h"

#include <cmath>
#include <cstdio>

namespace streetgan {
namespace {

namespace figure = quality_figure;

std::optional<double> figureOf(const QualityEvaluation& evaluation, const char* name) {
  const auto it = evaluation.metrics.find(name);
  if (it == evaluation.metrics.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace

std::vector<QualityAlarm> QualityAlarms::fromEvaluation(const QualityEvaluation& evaluation,
                                                        const QualityAlarmThresholds& thresholds) {
  std::vector<QualityAlarm> alarms;
  const auto samples = figureOf(evaluation, figure::kMsSsimSamples);
  const auto train = figureOf(evaluation, figure::kMsSsimTrain);
  if (samples && train && *samples > *train + thresholds.msssim_margin)
    alarms.push_back({"collapse", "mode collapse: the samples are more alike than the training images (MS-SSIM " +
                                      fixed(*samples, 3) + " between samples, " + fixed(*train, 3) +
                                      " between training images); try a lower learning rate for G, a wider D, "
                                      "or an earlier checkpoint"});
  const auto ndb = figureOf(evaluation, figure::kNdbFraction);
  const auto bins = figureOf(evaluation, figure::kNdb);
  if (ndb && bins && *ndb > thresholds.ndb_fraction)
    alarms.push_back({"collapse", "mode collapse: " + fixed(*bins, 0) + " of the " + fixed(*bins / *ndb, 0) +
                                      " k-means bins of the training images (" + fixed(100 * *ndb, 0) +
                                      "%) hold a different share of the samples (NDB); the generator covers only "
                                      "part of the data. Try a lower learning rate for G, a wider D, or an "
                                      "earlier checkpoint"});
  const auto spread = figureOf(evaluation, figure::kSpreadRatio);
  if (spread && *spread < thresholds.spread_ratio)
    alarms.push_back({"collapse", "mode collapse: a sample lies " + fixed(*spread, 2) +
                                      " times as far from its nearest other sample as a training image from its "
                                      "nearest other training image (median); the samples crowd onto a few "
                                      "scenes. Try a lower learning rate for G, a wider D, or an earlier checkpoint"});
  const auto copies = figureOf(evaluation, figure::kCopyRate);
  if (copies && *copies > thresholds.copy_rate)
    alarms.push_back({"memorisation", "memorisation: " + fixed(100 * *copies, 1) +
                                          "% of the samples are nearer a training image than 99% of the training "
                                          "images are to each other; the generator may be copying training "
                                          "photographs. Look at their nearest training images (streetgan metrics, "
                                          "the Evaluate tab); try more data, augmentation of D's inputs (augment.ada_target 0.6 "
                                          "or augment.diff) or an earlier checkpoint"});
  return alarms;
}

QualityAlarmThresholds QualityAlarmThresholds::of(const MetricsConfig& metrics) {
  QualityAlarmThresholds thresholds;
  thresholds.msssim_margin = metrics.alarm_msssim_margin;
  thresholds.ndb_fraction = metrics.alarm_ndb_fraction;
  thresholds.spread_ratio = metrics.alarm_spread_ratio;
  thresholds.copy_rate = metrics.alarm_copy_rate;
  thresholds.rt = metrics.alarm_rt;
  return thresholds;
}

std::optional<QualityAlarm> QualityAlarms::fromRt(double mean_rt, int steps, const QualityAlarmThresholds& thresholds,
                                                  const OverfittingRemedy& remedy) {
  if (!std::isfinite(mean_rt) || mean_rt <= thresholds.rt) return std::nullopt;
  std::string doing;
  if (remedy.ada && remedy.target > 0) {
    doing = (remedy.p > remedy.start_p ? "ADA raised p to " + fixed(remedy.p, 2) : "ADA's p is " + fixed(remedy.p, 2)) +
            " and raises it every 4 steps while r_t is above augment.ada_target " + fixed(remedy.target, 2) +
            "; if this persists, also set r1_gamma (an R1 penalty, 1 to 10) or d_norm spectral";
  } else if (remedy.ada) {
    doing = "augmentation runs at a fixed p " + fixed(remedy.p, 2) +
            " (augment.ada_p); set augment.ada_target 0.6 to let ADA raise it, or r1_gamma (an R1 penalty, 1 to 10)";
  } else {
    doing = "D tells the training images apart. Set augment.ada_target 0.6 (ADA: augmentation of D's inputs that "
            "adapts to r_t), augment.diff \"color,translation,cutout\", r1_gamma (an R1 penalty, 1 to 10) or d_norm "
            "spectral; more data or a smaller D help too";
  }
  return QualityAlarm{"overfitting", "D is overfitting: r_t (the mean sign of D's output on training images) is " +
                                         fixed(mean_rt, 2) + " over the last " + std::to_string(steps) +
                                         " steps, above " + fixed(thresholds.rt, 2) + "; " + doing};
}

}  // namespace streetgan
