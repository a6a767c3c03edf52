#include "app/studio/control/ssh_connection.h"

#include "core/runs/shell_quote.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>

#include <sys/stat.h>
#include <unistd.h>

namespace streetgan::studio {

namespace {

QString lastLine(const QString& text) {
  const auto lines = text.split('\n', Qt::SkipEmptyParts);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const QString line = it->trimmed();
    // ssh's own chatter around the real message
    if (line.startsWith("Warning: Permanently added") || line.startsWith("Pseudo-terminal")) continue;
    return line;
  }
  return {};
}

}  // namespace

SshConnection::SshConnection(HostProfile profile, QString control_dir)
    : profile_(std::move(profile)), control_dir_(control_dir.isEmpty() ? defaultControlDir() : std::move(control_dir)) {}

QString SshConnection::defaultControlDir() {
  // The user's runtime folder when there is one, else the temporary folder. Another user could
  // have made that name first and planted a socket there: a folder that is a link, not ours or
  // open to others is not used, and commands then go without connection sharing.
  const QByteArray runtime = qgetenv("XDG_RUNTIME_DIR");
  const QString base = !runtime.isEmpty() && QFileInfo(QString::fromLocal8Bit(runtime)).isDir()
                           ? QString::fromLocal8Bit(runtime) : QDir::tempPath();
  const QString dir = base + "/streetgan-ssh-" + QString::number(::getuid());
  const QByteArray path = QFile::encodeName(dir);
  ::mkdir(path.constData(), 0700);
  struct stat info {};
  if (::lstat(path.constData(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::getuid() ||
      (info.st_mode & 077) != 0)
    return {};
  return dir;
}

QStringList SshConnection::protections() const {
  QStringList args;
  if (!profile_.ssh_config_file.isEmpty()) args << "-F" << profile_.ssh_config_file;
  args << "-o" << "BatchMode=yes"                 // never a password or passphrase prompt
       << "-o" << "StrictHostKeyChecking=yes"     // unknown or changed keys fail; the user decides
       << "-o" << "ConnectTimeout=10"
       << "-o" << "ServerAliveInterval=5"
       << "-o" << "ServerAliveCountMax=3"
       << "-o" << "LogLevel=ERROR";
  if (!profile_.known_hosts_file.isEmpty()) args << "-o" << "UserKnownHostsFile=" + profile_.known_hosts_file;
  if (!profile_.identity_file.isEmpty()) args << "-i" << profile_.identity_file << "-o" << "IdentitiesOnly=yes";
  return args;
}

QString SshConnection::proxyCommand() const {
  const JumpHost jump = JumpHost::parse(profile_.jump_host);
  QStringList words = QStringList{program()} + protections();
  words << "-o" << "ControlMaster=no" << "-o" << "ControlPath=none";
  if (jump.port > 0) words << "-p" << QString::number(jump.port);
  if (!jump.user.isEmpty()) words << "-l" << jump.user;
  words << "-W" << "%h:%p" << "--" << jump.host;
  QString line;
  for (const QString& word : words) {
    // ssh expands %-tokens in the whole line: only -W's are meant as tokens.
    QString quoted = QString::fromStdString(shellQuote(word.toStdString()));
    if (word != "%h:%p") quoted.replace("%", "%%");
    line += (line.isEmpty() ? "" : " ") + quoted;
  }
  return line;
}

QStringList SshConnection::sshOptions() const {
  QStringList args = protections();
  if (control_dir_.isEmpty()) {
    args << "-o" << "ControlMaster=no" << "-o" << "ControlPath=none";
  } else {
    args << "-o" << "ControlMaster=auto" << "-o" << "ControlPath=" + control_dir_ + "/%C" << "-o" << "ControlPersist=120";
  }
  if (profile_.port > 0) args << "-p" << QString::number(profile_.port);
  // Not -J: the ssh it starts for the jump host gets none of these options (no BatchMode, no
  // strict host keys, not the profile's known-hosts or key file).
  if (!profile_.jump_host.isEmpty()) args << "-o" << "ProxyCommand=" + proxyCommand();
  if (!profile_.user.isEmpty()) args << "-l" << profile_.user;
  return args;
}

QStringList SshConnection::sshArguments() const {
  // "--" ends ssh's options: whatever the host field holds is the destination, never an option.
  return sshOptions() << "-T" << "--" << profile_.host;
}

QStringList SshConnection::streetganCommand(const QStringList& args) const {
  std::vector<std::string> words;
  for (const auto& arg : args) words.push_back(arg.toStdString());
  const std::string line = remoteCommandLine(profile_.environment_line.toStdString(),
                                             profile_.streetgan_path.toStdString(), words);
  return sshArguments() << QString::fromStdString(line);  // after "-- host": the command
}

QStringList SshConnection::controlArguments(const QString& command) const {
  return sshOptions() << "-O" << command << "-T" << "--" << profile_.host;
}

void SshConnection::closeMaster() const {
  QProcess process;
  process.start(program(), controlArguments("exit"));
  process.waitForFinished(3000);
}

SshFailure SshConnection::classify(int exit_code, int signal_number, const QString& stderr_text) {
  if (exit_code == 0 && signal_number == 0) return SshFailure::None;
  if (stderr_text.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")) return SshFailure::HostKeyChanged;
  if (stderr_text.contains("Host key verification failed")) return SshFailure::HostKeyUnknown;
  if (signal_number != 0) return SshFailure::ConnectionLost;
  if (exit_code == 255) {
    if (stderr_text.contains("Permission denied")) return SshFailure::AuthenticationFailed;
    if (stderr_text.contains("Could not resolve hostname") || stderr_text.contains("Connection refused") ||
        stderr_text.contains("timed out") || stderr_text.contains("No route to host") ||
        stderr_text.contains("Network is unreachable"))
      return SshFailure::Unreachable;
    return SshFailure::ConnectionLost;
  }
  if (exit_code == 127 || exit_code == 126) return SshFailure::ProgramMissing;
  if (exit_code == kEnvironmentLineFailed) return SshFailure::EnvironmentFailed;
  return SshFailure::CommandFailed;
}

QString SshConnection::describeFailure(SshFailure failure, const QString& stderr_text) const {
  const QString host = where();
  const QString said = lastLine(stderr_text);
  switch (failure) {
    case SshFailure::None: return {};
    case SshFailure::HostKeyUnknown:
      return host + ": the host's key is not known yet. Press Test Connection in Hosts… to see its "
                    "fingerprint and accept it.";
    case SshFailure::HostKeyChanged:
      return host + ": the host's key has CHANGED since it was accepted. This can be a reinstalled host "
                    "or someone intercepting the connection; the studio refuses to connect.";
    case SshFailure::AuthenticationFailed:
      return host + " refused the login (" + said + "). The studio never asks for passwords: load your key "
                    "in ssh-agent or set the profile's key file.";
    case SshFailure::Unreachable: return "Cannot reach " + host + ": " + said;
    case SshFailure::ConnectionLost:
      // The jump host's ssh says why it failed only on a stderr that connection sharing closes.
      if (!profile_.jump_host.isEmpty() && said.startsWith("kex_exchange_identification"))
        return "Cannot reach " + host + " through the jump host " + profile_.jump_host +
               ": the jump host refused or could not be reached. Its host key must be known too (in " +
               (profile_.known_hosts_file.isEmpty() ? QString("~/.ssh/known_hosts") : profile_.known_hosts_file) +
               "; Test Connection on a profile for the jump host shows it), and it must accept the profile's key.";
      return "The connection to " + host + " was lost" + (said.isEmpty() ? "." : ": " + said);
    case SshFailure::ProgramMissing:
      return "streetgan was not found on " + host + " as '" + profile_.streetgan_path +
             "'. Install it there or set the path to the remote streetgan in the host profile." +
             (said.isEmpty() ? "" : " (" + said + ")");
    case SshFailure::EnvironmentFailed:
      return "The host profile's environment line failed on " + host + ": " + said;
    case SshFailure::CommandFailed: return host + ": " + (said.isEmpty() ? "the remote command failed." : said);
  }
  return said;
}

}  // namespace streetgan::studio
