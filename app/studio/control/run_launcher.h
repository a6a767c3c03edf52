#pragma once
// RunLauncher: how the Train tab starts, resumes and opens runs, and the session of the run it
// shows. It checks a new run's data set folder, names the run's folder
// (<runs root>/<name>-<yyyyMMdd-HHmmss>-<4 random hex digits>), writes its config into a temporary file for the process
// (kept until the run ends), and, for a run on a host, the local mirror's remote record; it lets
// TrainingTransportFactory choose how each run is reached (a local process, a followed log, SSH by
// the folder's remote record) and adds the device arguments (a host profile's, or this computer's
// run defaults). For a run on a host it fetches files into the local copy and passes the
// transport's fetch signals on. The tab connects to the session and to these signals and never
// learns which transport a run goes over. Failures are messages to show. Qt Core only.
#include "app/studio/control/host_profile.h"
#include "app/studio/control/status_text.h"
#include "app/studio/control/training_session.h"
#include "app/studio/control/training_transport_factory.h"
#include "core/config/train_config.h"

#include <QObject>
#include <QString>
#include <QTemporaryFile>

#include <memory>
#include <optional>

namespace streetgan::studio {

class RemoteRunTransport;

class RunLauncher : public QObject {
  Q_OBJECT
public:
  /// `program`: the local `streetgan` executable.
  explicit RunLauncher(QString program, QObject* parent = nullptr);
  ~RunLauncher() override;

  /// The SSH shared-connection folder for remote runs (empty: the default).
  void setSshControlDir(const QString& dir) { transports_.setSshControlDir(dir); }
  /// Device, CPU threads and processes of runs started or resumed on this computer (`--device`,
  /// `--threads`, `--nproc` above 1); empty / 0 leave the config's.
  void setRunDefaults(const QString& device, int threads, int processes = 1);

  /// `config` as JSON in a new temporary file, named from QTemporaryFile's `name_template` in the
  /// temporary folder, or "Cannot write the config file: …" when it cannot.
  static Result<std::unique_ptr<QTemporaryFile>> writeTemporaryConfig(const TrainConfig& config,
                                                                      const QString& name_template);

  /// A new run of `config` under `runs_root` (made when missing), on `host` or on this computer:
  /// its data set folder checked, its folder named, its config written to a temporary file and, on
  /// a host, its remote record written into the folder. The request to start, or the message to
  /// show when it cannot be started.
  /// `more_hosts`: with `host`, a run on several hosts, one node each (`host` is node 0, where
  /// the run's files are; RemoteRunRecord::more_hosts).
  Result<TrainingRequest> prepareNewRun(const TrainConfig& config, const QString& runs_root,
                                        const std::optional<HostProfile>& host,
                                        const QList<HostProfile>& more_hosts = {});

  /// A new session for the run in `run_dir`, replacing the last one, not started yet (the caller
  /// connects to it, then calls start()): `attach` follows a run that exists (opened from the Runs
  /// tab), otherwise the session starts or resumes one.
  TrainingSession& newSession(const QString& run_dir, bool attach);
  /// Starts the session newSession() made on `request`. A run started or resumed gets the device
  /// arguments too: on a host, its profile's (HostProfile::deviceArguments, unless `config`, the
  /// form's, sets a device or threads of its own); here, the run defaults. False as
  /// TrainingSession::start() (its finished() then says why).
  bool start(const TrainingRequest& request, const TrainConfig& config);

  TrainingSession* session() { return session_.get(); }
  const TrainingSession* session() const { return session_.get(); }
  /// Where the session's run is, for labels ("this computer", "user@host").
  QString where() const;
  /// Whether the session's run trains on a remote host, so that its files can be fetched.
  bool isRemote() const { return remote() != nullptr; }
  /// A remote run's newest checkpoint its log named so far (a path inside the run); empty when
  /// there is none yet or the run is not remote.
  QString latestCheckpoint() const;
  /// Fetches `relative` (a path inside a remote run) into its local copy: fileFetched() or
  /// fetchFailed() follows. False, fetching nothing, when the run is not remote.
  bool fetchFile(const QString& relative);

signals:
  /// A remote run's file arrived in its local copy (sample grids as the log names them, and what
  /// fetchFile() asked for).
  void fileFetched(const QString& relative, const QString& local_path);
  void fetchProgress(const QString& relative, qint64 received, qint64 total);
  void fetchFailed(const QString& relative, const QString& message);

private:
  RemoteRunTransport* remote() const;

  TrainingTransportFactory transports_;
  QString device_;
  int threads_ = 0;
  int processes_ = 1;  // local runs: ranks (`--nproc`) when above 1
  bool attached_ = false;
  std::unique_ptr<QTemporaryFile> config_file_;  // a new run's config, until its session ends
  std::unique_ptr<TrainingSession> session_;     // after config_file_: destroyed first
};

}  // namespace streetgan::studio
