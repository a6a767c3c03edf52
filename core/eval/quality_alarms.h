#pragma once
// QualityAlarms: the plain-words warnings a run's quality figures raise (docs/evaluation.md):
//  - "collapse": the samples are more alike than training images are (MS-SSIM of sample pairs
//    above that of training pairs by more than a margin), or NDB finds a large share of the bins
//    with a different share of samples than of training images, or the samples lie much nearer
//    each other than training images do (spread ratio below a share);
//  - "memorisation": the copy rate (samples nearer a training image than the 1st percentile of
//    training images to each other) above a share;
//  - "overfitting": ADA's r_t (mean sign of D's logits on real images) above a level, averaged
//    over a stretch of steps.
// Each alarm says what happened, with the figures, and what to try. Pure functions: nothing is
// kept; figures that are absent (not computed) raise nothing.
#include "core/config/train_config.h"
#include "core/runs/quality_evaluation_file.h"

#include <optional>
#include <string>
#include <vector>

namespace streetgan {

struct QualityAlarmThresholds {
  double msssim_margin = 0.1;  ///< collapse: samples' MS-SSIM above training's by more than this
  double ndb_fraction = 0.5;   ///< collapse: NDB / bins above this
  double spread_ratio = 0.5;   ///< collapse: the samples' spread below this share of training's
  double copy_rate = 0.05;     ///< memorisation: copy rate above this
  double rt = 0.6;             ///< overfitting: mean r_t above this

  /// A config's levels (metrics.alarm_*).
  static QualityAlarmThresholds of(const MetricsConfig& metrics);
};

/// What the run does against D's overfitting, for the alarm to say: ADA's p, adaptive or fixed.
struct OverfittingRemedy {
  bool ada = false;       ///< ADA's pipeline runs (augment.ada_target or augment.ada_p)
  double target = 0;      ///< augment.ada_target; 0: p is fixed
  double p = 0;           ///< p at the alarm's step
  double start_p = 0;     ///< augment.ada_p, where p started
};

struct QualityAlarm {
  std::string kind;     ///< "collapse", "memorisation" or "overfitting"
  std::string message;  ///< one line a researcher reads
};

class QualityAlarms {
public:
  /// The alarms of one evaluation's figures.
  static std::vector<QualityAlarm> fromEvaluation(const QualityEvaluation& evaluation,
                                                  const QualityAlarmThresholds& thresholds);
  /// The overfitting alarm for r_t's mean over the last `steps` steps, when it is above the level:
  /// it says what ADA is doing about it (`remedy`), or without ADA which keys to set.
  static std::optional<QualityAlarm> fromRt(double mean_rt, int steps, const QualityAlarmThresholds& thresholds,
                                            const OverfittingRemedy& remedy = {});
};

}  // namespace streetgan
