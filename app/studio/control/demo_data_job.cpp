#include "app/studio/control/demo_data_job.h"

#include <QDir>
#include <QFileInfo>

namespace streetgan::studio {

DemoDataJob::DemoDataJob(QString program, QObject* parent) : ChildProcessJob(std::move(program), parent) {}

DemoDataJob::~DemoDataJob() = default;

QString DemoDataJob::defaultFolder(const QString& runs_root) {
  // Named by its size: a studio that renders more scenes than an older one did renders them anew.
  return QDir::cleanPath(QDir(runs_root).absoluteFilePath(QString("../demo-data-%1").arg(kCities * kSequences * kFrames)));
}

bool DemoDataJob::isRendered(const QString& folder) { return QFileInfo(folder + "/train_val").isDir(); }

Status DemoDataJob::start(const QString& folder) {
  if (isRunning()) return failure("The demo data is already being rendered.");
  folder_ = QDir::cleanPath(folder);
  QDir().mkpath(QFileInfo(folder_).absolutePath());
  return startProcess({"demo-data", "--progress", "--out", folder_, "--cities", QString::number(kCities), "--sequences",
                       QString::number(kSequences), "--frames", QString::number(kFrames)});
}

void DemoDataJob::onProgress(const ProgressLine& line) {
  // Counts of at most 8 × 1000 × 1000 images (demo-data's own limits) fit an int.
  if (line.task == kProgressTaskDemoData) emit progressChanged(static_cast<int>(line.done), static_cast<int>(line.total));
}

ChildProcessJob::Outcome DemoDataJob::outcome(int exit_code, int) {
  if (exit_code == 0 && isRendered(folder_)) return {true, folder_};
  return {false, failureReason(exit_code)};
}

}  // namespace streetgan::studio
