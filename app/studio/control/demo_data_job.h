#pragma once
// DemoDataJob: renders the procedural demo street scenes into a folder with a
// `streetgan demo-data --progress` child process (4 cities × 10 sequences × 25 frames: 1,000
// scenes, what the `demo` preset learns street-like samples from in minutes on 2 CPU cores),
// reports how many images are done, and one finished() with the folder or the reason it failed. A
// folder that already holds them is used as it is. Qt Core only.
#include "app/studio/control/child_process_job.h"
#include "core/data/demo_data_generator.h"

#include <QString>

namespace streetgan::studio {

class DemoDataJob : public ChildProcessJob {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit DemoDataJob(QString program, QObject* parent = nullptr);
  ~DemoDataJob() override;

  /// The same set `streetgan demo-data` renders without size options.
  static constexpr int kCities = kDemoCities, kSequences = kDemoSequencesPerCity, kFrames = kDemoFramesPerSequence;
  /// Where the studio keeps the demo data: beside the runs folder, named by its size.
  static QString defaultFolder(const QString& runs_root);
  /// True when `folder` already holds the demo data set (its train_val/ folder).
  static bool isRendered(const QString& folder);
  /// Starts rendering into `folder` (its parent folders are made), or says why it
  /// cannot (the program does not start, or a job is already running).
  Status start(const QString& folder);

signals:
  /// `done` of `total` images rendered.
  void progressChanged(int done, int total);
  // finished(ok, folder_or_reason): ok with the folder, or not with why (the program's last error
  // line, or its exit code).

private:
  Outcome outcome(int exit_code, int signal_number) override;
  void onProgress(const ProgressLine& line) override;

  QString folder_;
};

}  // namespace streetgan::studio
