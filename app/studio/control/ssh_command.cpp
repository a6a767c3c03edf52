#include "app/studio/control/ssh_command.h"

#include <QEventLoop>
#include <QTimer>

#include <csignal>

namespace streetgan::studio {

SshCommand::SshCommand(QObject* parent) : QObject(parent) {
  connect(&process_, &ChildProcess::standardOutput, this, [this](const QByteArray& bytes) {
    if (!stream_) result_.output += bytes;
    emit output(bytes);
  });
  connect(&process_, &ChildProcess::standardError, this, [this](const QByteArray& bytes) {
    result_.error_output += QString::fromUtf8(bytes);
    if (result_.error_output.size() > 65536) result_.error_output = result_.error_output.right(65536);
  });
  connect(&process_, &ChildProcess::finished, this, [this](int exit_code, int signal_number) {
    result_.exit_code = exit_code;
    result_.signal_number = signal_number;
    result_.failure = SshConnection::classify(exit_code, signal_number, result_.error_output);
    result_.message = connection_->describeFailure(result_.failure, result_.error_output);
    emit finished(result_);
  });
}

Status SshCommand::start(const SshConnection& connection, const QStringList& args, bool stream) {
  result_ = {};
  stream_ = stream;
  connection_ = connection;
  // The profile may come from a file (a run's remote.json): nothing reaches ssh unchecked.
  if (const QString invalid = connection.profile().validateConnection(); !invalid.isEmpty())
    return failure("The host profile " + connection.profile().label() + " cannot be used: " + invalid,
                   ErrorKind::Input);
  if (Status started = process_.start(SshConnection::program(), connection.streetganCommand(args)); !started)
    return failure("Cannot run ssh (the OpenSSH client): " + errorText(started));
  return {};
}

SshResult SshCommand::runAndWait(const SshConnection& connection, const QStringList& args, int timeout_ms) {
  SshCommand command;
  SshResult result;
  QEventLoop loop;
  QObject::connect(&command, &SshCommand::finished, &loop, [&](const SshResult& r) {
    result = r;
    loop.quit();
  });
  if (Status started = command.start(connection, args, false); !started) {
    result.failure = SshFailure::Unreachable;
    result.message = errorText(started);
    return result;
  }
  QTimer::singleShot(timeout_ms, &loop, [&] { command.abort(); });
  loop.exec();
  return result;
}

}  // namespace streetgan::studio
