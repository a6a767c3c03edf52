#pragma once
// ParzenEvaluationFile: the format of evaluations/parzen-<name>.json, the Parzen results that
// `streetgan parzen --save` keeps in a run folder (parzen-<checkpoint>.json for one checkpoint,
// parzen-run.json for every checkpoint at one σ), and what `streetgan parzen --json` prints (the
// same object without the file's "v" and "time"). core/eval owns the format: the CLI writes through
// write(), the studio's Evaluate tab and the Runs tab's summary read through list() and read().
// A file is written atomically as nlohmann writes it (keys sorted, indented by 2, a final newline);
// see docs/evaluation.md. Files may come from anyone's run folder: read() takes a regular file of
// at most kMaxBytes, ignores keys it does not know, and says what is wrong in an Error naming the
// file and the key ("…/parzen-run.json: checkpoints[2]: \"epoch\" must be an integer").
#include "core/runs/evaluated_checkpoint.h"
#include "core/util/result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

/// One Parzen result, as its file holds it. A number the writer could not write as a number (NaN,
/// ±Inf) is written as null and read back as NaN.
struct ParzenEvaluation {
  enum class Kind {
    Checkpoint,  ///< "checkpoint": one checkpoint (or a folder of sample images), σ chosen
    Run,         ///< "run": every checkpoint of a run at one σ
  };
  /// One σ of the grid and the validation split's mean log-likelihood at it.
  struct SigmaPoint {
    double sigma = 0;
    double mean_ll = 0;
  };
  /// The checkpoint a result was computed on.
  using Checkpoint = EvaluatedCheckpoint;
  /// One row of a run's result: a checkpoint scored on the test split at the run's σ.
  struct CheckpointScore {
    Checkpoint checkpoint;
    double mean_ll = 0;
    double stderr_ll = 0;          ///< "stderr"
    std::int64_t n_test = 0;
  };
  /// The best mean log-likelihood a result holds, and the epoch of its checkpoint.
  struct Best {
    double mean_ll = 0;
    std::int64_t epoch = 0;        ///< 0 when the result names no checkpoint
  };

  Kind kind = Kind::Checkpoint;
  double sigma = 0;                ///< chosen on the validation split, or given (a run's "sigma_given")
  std::vector<SigmaPoint> curve;   ///< the validation curve; empty for a run whose σ was given

  // Kind::Checkpoint
  double mean_ll = 0;              ///< test split's mean log-likelihood at σ
  double stderr_ll = 0;            ///< "stderr": its standard error
  std::int64_t n_test = 0;
  std::int64_t n_valid = 0;
  std::int64_t n_samples = 0;
  std::int64_t dimensions = 0;     ///< d of each row (channels·size·size)
  double samples_seconds = 0;      ///< "seconds"."samples": making (or loading) the samples
  double estimator_seconds = 0;    ///< "seconds"."estimator"
  /// "checkpoint", "epoch", "step", "images_seen"; absent when the samples were a folder of
  /// images (`--samples`), so never absent in a saved file.
  std::optional<Checkpoint> checkpoint;

  // Kind::Run
  bool sigma_given = false;        ///< σ came from `--sigma`, not from the latest checkpoint
  std::vector<CheckpointScore> checkpoints;  ///< in the run's checkpoint order

  // The file's stamp (not in `--json`'s output); write() sets both.
  int version = 1;                 ///< "v"
  double time = 0;                 ///< "time": when it was saved, seconds since 1970 (UTC)

  /// The highest finite mean log-likelihood: a checkpoint result's own, or a run's best row
  /// (the first of equals); std::nullopt when there is none.
  std::optional<Best> best() const;
};

class ParzenEvaluationFile {
public:
  /// The format version write() stamps and read() accepts ("v").
  static constexpr int kVersion = 1;
  /// read() refuses larger files (a run of some 70,000 checkpoints).
  static constexpr std::int64_t kMaxBytes = std::int64_t{16} << 20;

  /// <run_dir>/evaluations/parzen-<name>.json; `name` is a checkpoint's file stem, or "run".
  static std::string path(const std::string& run_dir, const std::string& name);
  /// The Parzen files of a run's evaluations/ folder, newest first (modification time to the
  /// millisecond, then name), regular files only; empty when there is no such folder.
  static std::vector<std::string> list(const std::string& run_dir);

  /// Reads one file written by write() (or by anyone).
  static Result<ParzenEvaluation> read(const std::string& path);
  /// Writes `evaluation` to path(run_dir, name) atomically, creating evaluations/, stamped with
  /// this format's version and the time now.
  static Status write(const std::string& run_dir, const std::string& name, ParzenEvaluation evaluation);

  /// The object `streetgan parzen --json` prints: the file's keys without "v" and "time".
  static nlohmann::json toJson(const ParzenEvaluation& evaluation);
  /// The file's bytes: toJson() with "v" and "time", indented by 2, and a newline.
  static std::string fileText(const ParzenEvaluation& evaluation);
  /// An object as toJson() or a file holds it ("v" and "time" read when present); `source` names
  /// it in errors.
  static Result<ParzenEvaluation> fromJson(const nlohmann::json& json, const std::string& source);
};

}  // namespace streetgan
