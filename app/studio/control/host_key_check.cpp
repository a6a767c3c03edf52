#include "app/studio/control/host_key_check.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

namespace streetgan::studio {

namespace {

struct Ran {
  int exit_code = -1;
  QString out, err;
};

Ran run(const QString& program, const QStringList& args, int timeout_ms = 20000) {
  QProcess process;
  process.start(program, args);
  Ran ran;
  if (!process.waitForStarted(5000)) {
    ran.err = program + ": cannot run it (" + process.errorString() + ")";
    return ran;
  }
  if (!process.waitForFinished(timeout_ms)) {
    process.kill();
    process.waitForFinished(2000);
    ran.err = program + ": no answer within " + QString::number(timeout_ms / 1000) + " s";
    return ran;
  }
  ran.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  ran.out = QString::fromUtf8(process.readAllStandardOutput());
  ran.err = QString::fromUtf8(process.readAllStandardError());
  return ran;
}

QString expandHome(QString path) {
  if (path == "~" || path.startsWith("~/")) path = QDir::homePath() + path.mid(1);
  return path;
}

}  // namespace

HostKeyProbe HostKeyCheck::probe(const SshConnection& connection, bool changed) {
  HostKeyProbe probe;
  probe.changed = changed;
  if (const QString invalid = connection.profile().validateConnection(); !invalid.isEmpty()) {
    probe.status = failure("Cannot get the host key of " + connection.where() + ": " + invalid, ErrorKind::Input);
    return probe;
  }
  // Where ssh itself keeps this host's keys (the first of UserKnownHostsFile).
  const Ran config = run(SshConnection::program(), QStringList{"-G"} + connection.sshArguments());
  for (const auto& line : config.out.split('\n')) {
    if (line.startsWith("userknownhostsfile ")) {
      probe.known_hosts_file = expandHome(line.section(' ', 1, 1));
      break;
    }
  }
  if (probe.known_hosts_file.isEmpty()) probe.known_hosts_file = QDir::homePath() + "/.ssh/known_hosts";

  QTemporaryDir scratch;
  const QString scratch_file = scratch.filePath("offered");
  // ssh takes the first value given for an option: these come before the connection's own.
  const QStringList no_login{"-o", "UserKnownHostsFile=" + scratch_file, "-o", "GlobalKnownHostsFile=/dev/null",
                             "-o", "StrictHostKeyChecking=accept-new", "-o", "HashKnownHosts=no",
                             "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no",
                             "-o", "KbdInteractiveAuthentication=no", "-o", "GSSAPIAuthentication=no",
                             "-o", "HostbasedAuthentication=no", "-o", "ControlMaster=no",
                             "-o", "ControlPath=none", "-o", "LogLevel=ERROR"};
  const Ran offered = run(SshConnection::program(), no_login + connection.sshArguments() << "true");
  QFile file(scratch_file);
  if (file.open(QIODevice::ReadOnly)) {
    for (const auto& line : QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts))
      probe.key_lines << line.trimmed();
  }
  if (probe.key_lines.isEmpty()) {
    const auto lines = offered.err.trimmed().split('\n');
    probe.status = failure("Cannot get the host key of " + connection.where() + ": " +
                           (lines.isEmpty() || lines.back().isEmpty() ? "no answer" : lines.back().trimmed()));
    return probe;
  }
  probe.host_key_name = probe.key_lines.front().section(' ', 0, 0);
  const Ran fingerprints = run("ssh-keygen", {"-l", "-f", scratch_file});
  for (const auto& line : fingerprints.out.split('\n', Qt::SkipEmptyParts)) {
    // "256 SHA256:abc… [host]:port (ED25519)"
    const QString type = line.section(' ', -1).remove('(').remove(')');
    probe.fingerprints << type + " " + line.section(' ', 1, 1);
  }
  if (probe.fingerprints.isEmpty())
    probe.status = failure("Cannot compute the host key's fingerprint: " + fingerprints.err.trimmed());
  return probe;
}

QString HostKeyCheck::accept(const HostKeyProbe& probe) {
  if (!probe.status || probe.key_lines.isEmpty()) return "No host key to accept.";
  const QFileInfo info(probe.known_hosts_file);
  if (!QDir().mkpath(info.absolutePath())) return info.absolutePath() + ": cannot create the folder";
  if (probe.changed && info.exists()) {
    const Ran removed = run("ssh-keygen", {"-R", probe.host_key_name, "-f", probe.known_hosts_file});
    if (removed.exit_code != 0)
      return probe.known_hosts_file + ": cannot remove the old key of " + probe.host_key_name + " (" + removed.err.trimmed() + ")";
  }
  QFile file(probe.known_hosts_file);
  if (!file.open(QIODevice::Append | QIODevice::Text))
    return probe.known_hosts_file + ": cannot write it (" + file.errorString() + ")";
  for (const auto& line : probe.key_lines) file.write((line + "\n").toUtf8());
  if (!file.flush()) return probe.known_hosts_file + ": cannot write it (" + file.errorString() + ")";
  return {};
}

}  // namespace streetgan::studio
