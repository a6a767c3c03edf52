#pragma once
// CacheBuildJob: builds a pre-decoded cache of a data set with a `streetgan cache build
// --progress` child process (the images decoded once, at the size the config trains at), reports
// how many images are done, and one finished() with the cache file or the reason it failed.
// cancel() stops the build, and the program removes its unfinished file. Qt Core only.
#include "app/studio/control/child_process_job.h"

#include <QString>

namespace streetgan::studio {

class CacheBuildJob : public ChildProcessJob {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit CacheBuildJob(QString program, QObject* parent = nullptr);
  ~CacheBuildJob() override;

  /// Starts caching the images of `dataroot`, with the filters, nc, img_size and crop of the config
  /// file `config`, into `out` (its parent folders are made), or says why it
  /// cannot (the program does not start, or a build is already running).
  Status start(const QString& dataroot, const QString& config, const QString& out);

signals:
  /// `done` of `total` images decoded.
  void progressChanged(qint64 done, qint64 total);
  // finished(ok, file_or_reason): ok with the cache file, or not with why (the program's last
  // error line, or "cancelled").

private:
  Outcome outcome(int exit_code, int signal_number) override;
  void onProgress(const ProgressLine& line) override;

  QString out_;
};

}  // namespace streetgan::studio
