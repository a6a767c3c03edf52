#pragma once
// DemoDataJob: renders the procedural demo street scenes into a folder with a
// `streetgan demo-data` child process (4 cities × 10 sequences × 25 frames: 1,000 scenes, what the
// `demo` preset learns street-like samples from in minutes on 2 CPU cores), reports how many
// images are done, and one finished() with the folder or the reason it failed. A folder that
// already holds them is used as it is. Qt Core only.
#include <QByteArray>
#include <QObject>
#include <QString>

#include <memory>

namespace streetgan::studio {

class ChildProcess;

class DemoDataJob : public QObject {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit DemoDataJob(QString program, QObject* parent = nullptr);
  ~DemoDataJob() override;

  static constexpr int kCities = 4, kSequences = 10, kFrames = 25;
  /// Where the studio keeps the demo data: beside the runs folder, named by its size.
  static QString defaultFolder(const QString& runs_root);
  /// True when `folder` already holds the demo data set (its train_val/ folder).
  static bool isRendered(const QString& folder);
  /// Starts rendering into `folder` (its parent folders are made); false with the reason in
  /// `error` when the program cannot start or a job is already running.
  bool start(const QString& folder, QString* error);
  bool isRunning() const { return process_ != nullptr; }

signals:
  /// `done` of `total` images rendered.
  void progressChanged(int done, int total);
  /// Ended: ok with the folder, or not with why (the program's last error line, or its exit code).
  void finished(bool ok, const QString& folder_or_reason);

private:
  QString program_, folder_;
  std::unique_ptr<ChildProcess> process_;
  QByteArray stderr_;
};

}  // namespace streetgan::studio
