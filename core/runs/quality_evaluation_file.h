#pragma once
// QualityEvaluationFile: the format of evaluations/metrics-<name>.json, the quality metrics that
// `streetgan metrics --save` keeps in a run folder (one file per checkpoint), and what
// `streetgan metrics --json` prints (the same object without "v" and "time"). core/eval owns the
// format: the CLI writes through write(), readers (the studio, RunSummary) through list() and
// read(). Every figure is one number under "metrics", named by the constants of QualityFigure
// (docs/evaluation.md lists them); figures a run did not compute are absent. A figure the writer
// cannot write as a number (NaN, ±Inf) is written as null and read back as NaN.
// Files may come from anyone's run folder: read() takes a regular file of at most kMaxBytes,
// nested at most 16 levels, ignores keys it does not know, and says what is wrong in an Error
// naming the file and the key.
#include "core/runs/evaluated_checkpoint.h"
#include "core/util/result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

/// The names of the figures under "metrics".
namespace quality_figure {
inline constexpr char kSwd[] = "swd_e3";                    ///< SWD ×10³, mean over the levels
inline constexpr char kSwdLevelPrefix[] = "swd_e3_";        ///< + resolution: one level's SWD ×10³
inline constexpr char kMsSsimSamples[] = "msssim_samples";  ///< mean MS-SSIM of pairs of samples
inline constexpr char kMsSsimTrain[] = "msssim_train";      ///< the same for pairs of training images
inline constexpr char kNdb[] = "ndb";                       ///< bins whose shares differ (α = 0.05)
inline constexpr char kNdbFraction[] = "ndb_fraction";      ///< ndb / bins
inline constexpr char kJsd[] = "jsd";                       ///< Jensen–Shannon divergence of the bins
inline constexpr char kFid[] = "fid";
inline constexpr char kKid[] = "kid";                       ///< mean unbiased MMD² over the subsets
inline constexpr char kKidStddev[] = "kid_std";
inline constexpr char kPrecision[] = "precision";
inline constexpr char kRecall[] = "recall";
inline constexpr char kDensity[] = "density";
inline constexpr char kCoverage[] = "coverage";
inline constexpr char kCopyRate[] = "copy_rate";            ///< share of samples nearer a training image than its 1st percentile
inline constexpr char kNearestRatio[] = "nn_ratio_median";  ///< median (sample's nearest distance / training's median)
inline constexpr char kSpreadRatio[] = "spread_ratio";      ///< samples' median distance to the nearest other sample / training's
}  // namespace quality_figure

/// One evaluation of a generator (or of a folder of sample images) against training images.
struct QualityEvaluation {
  using Checkpoint = EvaluatedCheckpoint;
  std::optional<Checkpoint> checkpoint;  ///< absent when the samples were a folder of images
  std::int64_t n_samples = 0;
  std::int64_t n_train = 0;
  int image_size = 0;
  /// The space FID, KID and precision/recall were computed in: "pixels32-pca256" (our own, see
  /// PixelPcaFeatures) or NetworkFeatures::spaceName(); figures of different spaces are never
  /// compared.
  std::string feature_space;
  std::string features_sha256;     ///< the features file's SHA-256 ("" for the pixel space)
  int features_input_size = 0;     ///< the size its network was given (0 for the pixel space)
  std::map<std::string, double> metrics;   ///< figure name → value
  std::map<std::string, double> seconds;   ///< metric → seconds it took
  std::vector<std::string> notes;          ///< plain remarks, e.g. "MS-SSIM on 3 scales at 64 px"
  /// The verdicts its figures gave (core/eval/quality_alarms.h): "collapse" or "memorisation" and
  /// the sentence a researcher reads; absent from files written before they were.
  struct Alarm {
    std::string kind, message;
  };
  std::vector<Alarm> alarms;

  // The file's stamp (not in `--json`'s output); write() sets both.
  int version = 1;                 ///< "v"
  double time = 0;                 ///< "time": when it was saved, seconds since 1970 (UTC)
};

class QualityEvaluationFile {
public:
  static constexpr int kVersion = 1;
  static constexpr std::int64_t kMaxBytes = std::int64_t{4} << 20;

  /// <run_dir>/evaluations/metrics-<name>.json; `name` is a checkpoint's file stem.
  static std::string path(const std::string& run_dir, const std::string& name);
  /// The metrics files of a run's evaluations/ folder, in name order (so in checkpoint order),
  /// regular files only; empty when there is none.
  static std::vector<std::string> list(const std::string& run_dir);

  static Result<QualityEvaluation> read(const std::string& path);
  /// Writes atomically, creating evaluations/, stamped with the version and the time now.
  static Status write(const std::string& run_dir, const std::string& name, QualityEvaluation evaluation);

  static nlohmann::json toJson(const QualityEvaluation& evaluation);
  static Result<QualityEvaluation> fromJson(const nlohmann::json& json, const std::string& source);
};

}  // namespace streetgan
