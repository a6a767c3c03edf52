#include "app/studio/control/cache_build_job.h"

#include <QDir>
#include <QFileInfo>

#include <signal.h>

namespace streetgan::studio {

CacheBuildJob::CacheBuildJob(QString program, QObject* parent) : ChildProcessJob(std::move(program), parent) {}

CacheBuildJob::~CacheBuildJob() {
  signalProcess(SIGTERM);  // the build removes its unfinished file
}

Status CacheBuildJob::start(const QString& dataroot, const QString& config, const QString& out) {
  if (isRunning()) return failure("A cache is already being built.");
  out_ = QDir::cleanPath(out);
  QDir().mkpath(QFileInfo(out_).absolutePath());
  return startProcess({"cache", "build", "--progress", "--dataroot", dataroot, "--config", config, "--out", out_});
}

void CacheBuildJob::onProgress(const ProgressLine& line) {
  if (line.task == kProgressTaskCacheBuild) emit progressChanged(line.done, line.total);
}

ChildProcessJob::Outcome CacheBuildJob::outcome(int exit_code, int signal_number) {
  if (exit_code == 0 && signal_number == 0 && QFileInfo(out_).isFile()) return {true, out_};
  return {false, signal_number != 0 ? QString("cancelled") : failureReason(exit_code)};
}

}  // namespace streetgan::studio
