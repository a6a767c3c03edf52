#pragma once
// MetricsJob: the quality metric suite (docs/evaluation.md, "Quality metrics") as a
// `streetgan metrics --json --progress --save` child process, on one checkpoint or on every
// checkpoint of a run. It reports progress from the program's progress lines (task "metrics": the
// stages of the suite done, the stage starting in the detail; over a run the stages start again
// for each checkpoint, oldest first), and one finished() with the parsed JSON result (an object,
// or a list over a run) or the reason it failed (a failed start, a non-zero exit, a signal, output
// that is not JSON). The program saves each result itself, evaluations/metrics-<checkpoint>.json
// in the run folder. Qt Core only.
#include "app/studio/control/child_process_job.h"

#include <QString>
#include <QStringList>

#include <memory>

#include <nlohmann/json_fwd.hpp>

namespace streetgan::studio {

/// What to score. Sizes as in `streetgan metrics`.
struct MetricsRequest {
  QString run_dir;        ///< the run; with `every`, all its checkpoints (`--run … --every-checkpoint`)
  QString checkpoint;     ///< the checkpoint file scored when not `every`
  bool every = false;     ///< every checkpoint of the run, oldest first
  int samples = 10000;    ///< generated samples (`--n`)
  int train = 10000;      ///< training images, a seeded draw (`--n-train`)
  QStringList only;       ///< the metrics (`--only`: swd, msssim, ndb, fid, kid, prdc, memorisation); empty: all

  /// The `streetgan` arguments for this request.
  QStringList arguments() const;
};

class MetricsJob : public ChildProcessJob {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit MetricsJob(QString program, QObject* parent = nullptr);
  ~MetricsJob() override;

  /// Starts the evaluation, or says why it cannot (a job already
  /// running, no checkpoint or run given, the program not starting).
  Status start(const MetricsRequest& request);
  // cancel() asks the process to stop (SIGINT), which the suite hears between its stages;
  // sampling does not look at it, so a command still running 2 s later is killed. finished()
  // follows with a message saying it was cancelled.
  /// The last successful result's JSON (what `streetgan metrics --json` printed): an object for
  /// one checkpoint, a list of them, oldest first, over a run.
  const nlohmann::json& result() const { return *result_; }

signals:
  /// Percent done: of the suite's stages, or over a run, of every checkpoint's stages.
  void progressChanged(int percent);
  /// The stage starting: "MS-SSIM diversity", or over a run "2/5: step-….pt: MS-SSIM diversity".
  void stageChanged(const QString& what);
  // finished(ok, message): ok (result() holds the figures), or the message saying why not.

private:
  Outcome outcome(int exit_code, int signal_number) override;
  void onProgress(const ProgressLine& line) override;

  std::unique_ptr<nlohmann::json> result_;
  bool every_ = false;
  QStringList checkpoints_;  // the file names scored, in order
  int scored_ = 0;           // checkpoints whose stages are all done
};

}  // namespace streetgan::studio
