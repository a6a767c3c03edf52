#pragma once
// RemoteRunTransport: a `streetgan train` on a remote host, driven over SSH (SshConnection, one
// shared connection). start() launches it detached on the host (`streetgan remote launch`: it
// outlives the connection and the studio) and follows its events.jsonl (`streetgan remote
// follow` from a byte offset). Every byte received is appended to the local mirror's events.jsonl
// (RemoteRunRecord) before it is handed on, so the mirror's size is always the offset to resume
// from: after a dropped connection (the transport emits connectionChanged(false), retries with
// doubling delays, then connectionChanged(true)) and after the studio restarts (attach()), every
// event arrives exactly once, in order. Sample grids named by `samples` events are fetched into
// the mirror as they appear, checkpoints when asked (fetchFile), over the same connection; a
// path from the host is resolved only inside the run directory, here and there. A run on several
// hosts (RemoteRunRecord::more_hosts) is launched on each with --nnodes/--node-rank; node 0 is the
// one followed, and a stop or kill goes to every node (RemoteNodes).
#include "app/studio/control/remote_nodes.h"
#include "app/studio/control/remote_run_record.h"
#include "app/studio/control/ssh_command.h"
#include "app/studio/control/training_transport.h"

#include <QFile>
#include <QTimer>

#include <memory>

namespace streetgan::studio {

class RemoteRunTransport : public TrainingTransport {
  Q_OBJECT
public:
  /// `control_dir`: the shared-connection socket folder (empty: SshConnection's default).
  explicit RemoteRunTransport(RemoteRunRecord run, QString control_dir = {}, QObject* parent = nullptr);
  ~RemoteRunTransport() override;

  /// Launches the run: `arguments` are the local ones (TrainingSession::argumentsFor): --run-dir
  /// becomes the remote run directory, --config FILE is sent as its contents, --events - is
  /// dropped (the log is followed instead). Writes the mirror's remote.json, then follows.
  Status start(const QStringList& arguments) override;
  /// Re-attaches to a launched run: hands on the mirror's log, then follows the host's from there.
  Status attach();
  /// Makes start() attach() instead of launching (a session re-attaching to a running run).
  void setAttachOnStart(bool attach) { attach_on_start_ = attach; }
  void interrupt() override;
  void kill() override;
  void detach() override;
  bool isRunning() const override { return active_; }
  QString where() const override { return connection_.where(); }

  bool isConnected() const { return connected_; }
  /// Bytes of the remote events.jsonl received (and in the mirror).
  qint64 offset() const { return offset_; }
  const RemoteRunRecord& record() const { return run_; }
  const SshConnection& connection() const { return connection_; }
  /// Delays between reconnection attempts: `first_ms`, doubling up to `max_ms` (500, 15000).
  void setRetryDelays(int first_ms, int max_ms);
  /// Fetches `relative` (a path inside the run) into the mirror, after what is already queued.
  void fetchFile(const QString& relative);
  /// The path (inside the run) of the newest checkpoint the log named so far; empty when none.
  QString latestCheckpoint() const { return latest_checkpoint_; }
  /// The local ssh client streaming the log (0 when none), e.g. for tests that kill it.
  qint64 followClientPid() const;

signals:
  void launched(qint64 pid);
  void fetchProgress(const QString& relative, qint64 received, qint64 total);
  void fileFetched(const QString& relative, const QString& local_path);
  void fetchFailed(const QString& relative, const QString& message);

private:
  void replayMirror();
  void follow();
  void onFollowOutput(const QByteArray& bytes);
  void onFollowFinished(const SshResult& result);
  /// Queues the sample grids that `samples` events in `bytes` name and the copy lacks, and
  /// notes the latest `checkpoint` event's path.
  void scanFileEvents(const QByteArray& bytes);
  void checkStatus();
  void onStatus(const SshResult& result);
  void connectionLost(const QString& message);
  void endWith(int exit_code, int signal_number, const QString& diagnostic);
  void sendSignal(const QString& which);
  void nextFetch();
  void onFetchOutput(const QByteArray& bytes);
  void onFetchFinished(const SshResult& result);

  RemoteRunRecord run_;
  QString control_dir_;
  SshConnection connection_;
  std::unique_ptr<RemoteNodes> nodes_;  ///< the other hosts of a run on several hosts; null on one
  std::unique_ptr<SshCommand> launch_, follow_, status_, signal_, fetch_;
  QFile mirror_;
  qint64 offset_ = 0;
  qint64 replayed_ = 0;
  QByteArray line_;            // the incomplete last line, scanned for `samples` events
  QString latest_checkpoint_;
  QString pending_signal_;     // "stop" or "kill" asked for while the connection was down
  QTimer retry_, fetch_delay_;
  int first_retry_ms_ = 500, max_retry_ms_ = 15000, retry_ms_ = 500, attempts_ = 0;
  bool active_ = false, connected_ = true, attach_on_start_ = false;
  QStringList fetch_queue_, fetch_batch_;  // waiting; in the command running now
  int fetch_index_ = 0;                    // the batch's file being received
  QByteArray fetch_pending_, fetch_data_;  // received, not yet parsed; the file so far
  qint64 fetch_total_ = -1;                // its size; -1 while its header is awaited
};

}  // namespace streetgan::studio
