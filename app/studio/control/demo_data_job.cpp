#include "app/studio/control/demo_data_job.h"

#include "app/studio/control/child_process.h"

#include <QDir>
#include <QFileInfo>

namespace streetgan::studio {

DemoDataJob::DemoDataJob(QString program, QObject* parent) : QObject(parent), program_(std::move(program)) {}

DemoDataJob::~DemoDataJob() = default;

QString DemoDataJob::defaultFolder(const QString& runs_root) {
  // Named by its size: a studio that renders more scenes than an older one did renders them anew.
  return QDir::cleanPath(QDir(runs_root).absoluteFilePath(QString("../demo-data-%1").arg(kCities * kSequences * kFrames)));
}

bool DemoDataJob::isRendered(const QString& folder) { return QFileInfo(folder + "/train_val").isDir(); }

bool DemoDataJob::start(const QString& folder, QString* error) {
  if (isRunning()) {
    *error = "The demo data is already being rendered.";
    return false;
  }
  folder_ = QDir::cleanPath(folder);
  process_ = std::make_unique<ChildProcess>();
  stderr_.clear();
  connect(process_.get(), &ChildProcess::standardError, this, [this](const QByteArray& bytes) {
    stderr_ += bytes;
    // "rendered 16/240 images": report the latest count.
    const int at = stderr_.lastIndexOf("rendered ");
    if (at < 0) return;
    const QList<QByteArray> parts = stderr_.mid(at + 9).split(' ').value(0).split('/');
    if (parts.size() == 2 && parts[1].toInt() > 0) emit progressChanged(parts[0].toInt(), parts[1].toInt());
  });
  connect(process_.get(), &ChildProcess::finished, this, [this](int exit_code, int) {
    process_.release()->deleteLater();
    if (exit_code == 0 && isRendered(folder_)) {
      emit finished(true, folder_);
      return;
    }
    emit finished(false, ChildProcess::failureReason(stderr_, exit_code));
  });
  QDir().mkpath(QFileInfo(folder_).absolutePath());
  if (!process_->start(program_, {"demo-data", "--out", folder_, "--cities", QString::number(kCities), "--sequences",
                                  QString::number(kSequences), "--frames", QString::number(kFrames)}, error)) {
    process_.reset();
    return false;
  }
  return true;
}

}  // namespace streetgan::studio
