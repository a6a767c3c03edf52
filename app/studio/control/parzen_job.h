#pragma once
// ParzenJob: one Parzen-window estimate as a `streetgan parzen --json --progress --save` child
// process, on one checkpoint or on every checkpoint of a run. It reports progress from the
// program's progress lines (tasks "parzen-estimate": percent of the estimate; "parzen-run":
// checkpoints scored, the one being scored in the detail), and one finished() with the parsed JSON result or
// the reason it failed (a failed start, a non-zero exit, a signal, output that is not JSON). The
// results are saved by the program itself in the run's evaluations/ folder. Qt Core only.
#include "app/studio/control/child_process_job.h"

#include <QString>
#include <QStringList>

#include <memory>

#include <nlohmann/json_fwd.hpp>

namespace streetgan::studio {

/// What to estimate. Sizes as in `streetgan parzen`; folders override the run's held-out split.
struct ParzenRequest {
  QString run_dir;       ///< the run; with `every`, all its checkpoints (`--run`)
  QString checkpoint;    ///< the checkpoint file scored when not `every`
  bool every = false;    ///< every checkpoint of the run at the σ chosen on the latest
  int samples = 10000;   ///< generated samples (`--n-samples`)
  int valid = 1000;      ///< validation images (`--n-valid`)
  int test = 1000;       ///< test images (`--n-test`)
  QString valid_dir;     ///< validation folder (`--valid`); empty: the run's held-out split
  QString test_dir;      ///< test folder (`--test`); given together with valid_dir or not at all

  /// The `streetgan` arguments for this request.
  QStringList arguments() const;
};

class ParzenJob : public ChildProcessJob {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit ParzenJob(QString program, QObject* parent = nullptr);
  ~ParzenJob() override;

  /// Starts the estimate, or says why it cannot (a job already
  /// running, only one of the two held-out folders, the program not starting).
  Status start(const ParzenRequest& request);
  // cancel() asks the process to stop (SIGINT); sampling does not look at it, so it is killed 2 s
  // later. finished() follows with "cancelled".
  /// The last successful estimate's JSON (what `streetgan parzen --json` printed).
  const nlohmann::json& result() const { return *result_; }

signals:
  /// Percent done: of the estimate, or over a run, of the checkpoints scored.
  void progressChanged(int percent);
  /// Over a run: "3/10: step-….pt", the checkpoint being scored.
  void scoringCheckpoint(const QString& what);
  // finished(ok, message): ok (result() holds the estimate), or the message saying why not.

private:
  Outcome outcome(int exit_code, int signal_number) override;
  void onProgress(const ProgressLine& line) override;

  std::unique_ptr<nlohmann::json> result_;
};

}  // namespace streetgan::studio
