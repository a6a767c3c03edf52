#pragma once
// FollowedRunTransport: watches a run through its run directory instead of its process's stdout —
// a run left running by an earlier studio, or a finished run opened to look at. It reads
// events.jsonl from the start in bounded chunks (so opening a long run never blocks the GUI
// thread for long), then follows what is appended. The run has ended once its run_finished is
// read, or once its process (the pid in run_started) is gone and the log has been read to the
// end. interrupt() and kill() signal that process — only while it is a valid pid of the run's
// own process, the one that holds this events.jsonl open for writing (see
// core/runs/process_identity.h); otherwise they say why on diagnosticBytes() and signal nothing.
// detach() stops watching.
#include "app/studio/control/training_transport.h"
#include "core/runs/run_summary.h"

#include <QFile>
#include <QTimer>

namespace streetgan::studio {

class FollowedRunTransport : public TrainingTransport {
  Q_OBJECT
public:
  /// `program_name`: what the training process's command line contains (pid reuse check).
  explicit FollowedRunTransport(QString run_dir, QString program_name = "streetgan", QObject* parent = nullptr);

  /// Starts reading; `arguments` are ignored (nothing is started). Fails when the run directory
  /// has no readable events.jsonl.
  Status start(const QStringList& arguments) override;
  void interrupt() override;
  void kill() override;
  void detach() override;
  bool isRunning() const override { return following_; }
  QString where() const override { return "this computer"; }
  qint64 pid() const { return summary_.pid(); }
  /// Bytes a poll reads at most (default 256 KiB); the next poll follows at once while there is more.
  void setChunkBytes(qint64 bytes) { chunk_bytes_ = bytes; }
  /// Delay between polls once the end of the log is reached (default 250 ms).
  void setPollInterval(int ms) { poll_.setInterval(ms); }

private:
  void poll();
  void end();
  void sendSignal(int signal_number);

  QString run_dir_, program_name_;
  QFile file_;
  QTimer poll_;
  RunSummaryBuilder summary_;
  qint64 chunk_bytes_ = 256 * 1024;
  bool following_ = false;
  bool gone_seen_ = false;  // the process was gone at the last poll: one more read, then end
};

}  // namespace streetgan::studio
