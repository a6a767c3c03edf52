#pragma once
// CacheBuildJob: builds a pre-decoded cache of a data set with a `streetgan cache build` child
// process (the images decoded once, at the size the config trains at), reports how many images
// are done, and one finished() with the cache file or the reason it failed. cancel() stops the
// build, and the program removes its unfinished file. Qt Core only.
#include <QByteArray>
#include <QObject>
#include <QString>

#include <memory>

namespace streetgan::studio {

class ChildProcess;

class CacheBuildJob : public QObject {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit CacheBuildJob(QString program, QObject* parent = nullptr);
  ~CacheBuildJob() override;

  /// Starts caching the images of `dataroot`, with the filters, nc, img_size and crop of the config
  /// file `config`, into `out` (its parent folders are made); false with the reason in `error` when
  /// the program cannot start or a build is already running.
  bool start(const QString& dataroot, const QString& config, const QString& out, QString* error);
  bool isRunning() const { return process_ != nullptr; }
  void cancel();

signals:
  /// `done` of `total` images decoded.
  void progressChanged(qint64 done, qint64 total);
  /// Ended: ok with the cache file, or not with why (the program's last error line).
  void finished(bool ok, const QString& file_or_reason);

private:
  QString program_, out_;
  std::unique_ptr<ChildProcess> process_;
  QByteArray stdout_, stderr_;
};

}  // namespace streetgan::studio
