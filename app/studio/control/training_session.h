#pragma once
// TrainingSession: one `streetgan train` run driven from the studio. It starts the process through
// a TrainingTransport with its events on stdout, parses them (EventStreamReader: malformed or
// truncated lines are skipped and counted, never fatal) and hands them on in batches, and follows
// the run's state: starting → running → completed, stopped or failed. stop() sends SIGINT and the
// session waits for the run's `run_finished`. A process that ends without one (a crash, a kill,
// an exit before training) is failed, with the reason and the tail of its stderr.
#include "app/studio/control/training_transport.h"
#include "core/runs/event_stream_reader.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace streetgan::studio {

/// What to run: `streetgan train --run-dir R [--resume] [--dataroot D] [--config F] extra...`.
struct TrainingRequest {
  QString run_dir;
  QString dataroot;              ///< empty: none (a resumed run keeps its own)
  QString config_file;           ///< a JSON config file, or empty
  QStringList extra_arguments;   ///< e.g. {"--epochs", "20", "--device", "cpu"}
  bool resume = false;
};

/// Reconnecting: a remote run's connection was lost and the transport is retrying; the run goes on
/// on its host, and the session returns to the state it was in once the link is back.
enum class SessionState { Idle, Starting, Running, Stopping, Reconnecting, Completed, Stopped, Failed, Detached };

class TrainingSession : public QObject {
  Q_OBJECT
public:
  explicit TrainingSession(std::unique_ptr<TrainingTransport> transport, QObject* parent = nullptr);
  ~TrainingSession() override;

  static QStringList argumentsFor(const TrainingRequest& request);
  static QString stateName(SessionState state);

  /// Starts the run; false (state Failed, errorMessage() set) when the process cannot start.
  bool start(const TrainingRequest& request);
  /// Asks the run to stop after its current step; the state becomes Stopped when it has.
  void stop();
  /// Ends the process at once; the run shows as failed.
  void kill();
  /// Leaves the run going without the studio (it keeps writing its run directory).
  void detach();

  SessionState state() const { return state_; }
  bool isActive() const;
  QString errorMessage() const { return error_; }
  /// The last `lines` lines the process wrote to stderr.
  QString stderrTail(int lines = 20) const;
  qint64 eventCount() const { return reader_.eventsRead(); }
  qint64 malformedLines() const { return reader_.malformedLines(); }
  /// What the transport last said about its connection (a remote run), e.g. why it reconnects.
  QString connectionMessage() const { return connection_message_; }
  TrainingTransport& transport() { return *transport_; }

signals:
  /// Events parsed from one chunk of the stream, in order.
  void eventsReceived(const std::vector<streetgan::StreamEvent>& events);
  void stateChanged(streetgan::studio::SessionState state);
  /// The process is gone: Completed, Stopped or Failed, with the message to show.
  void finished(streetgan::studio::SessionState state, const QString& message);
  /// A remote run's connection was lost (the state is then Reconnecting) or is back.
  void connectionChanged(bool connected, const QString& message);

private:
  void onEventBytes(const QByteArray& bytes);
  void onDiagnostics(const QByteArray& bytes);
  void onEnded(int exit_code, int signal_number);
  void onConnectionChanged(bool connected, const QString& message);
  void handle(std::vector<StreamEvent> events);
  void setState(SessionState state);

  std::unique_ptr<TrainingTransport> transport_;
  EventStreamReader reader_;
  SessionState state_ = SessionState::Idle;
  SessionState state_before_reconnecting_ = SessionState::Idle;
  QString connection_message_;
  QString finished_status_;  // the run_finished event's status, once seen
  QString error_;
  QByteArray stderr_;        // the last 64 KiB
};

}  // namespace streetgan::studio

Q_DECLARE_METATYPE(streetgan::studio::SessionState)
