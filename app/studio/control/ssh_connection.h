#pragma once
// SshConnection: how the studio talks to one host — the system `ssh` program with the profile's
// settings, host keys checked strictly (an unknown or changed key fails; HostKeyCheck shows it to
// the user), no password prompts (BatchMode), keep-alives so a dead network is noticed within
// seconds, and connection sharing (ControlMaster): the first command opens a master connection
// that later commands reuse, so each costs no new handshake. Every remote word is quoted
// (remoteCommandLine), so names and paths are only ever data; the destination always follows
// "--", so ssh never reads it as an option (and profiles are checked: validateConnection()).
//
// describeFailure() turns ssh's exit code and stderr into the sentence the user reads.
#include "app/studio/control/host_profile.h"

#include <QString>
#include <QStringList>

namespace streetgan::studio {

enum class SshFailure {
  None,
  HostKeyUnknown,       ///< the host's key is not in known_hosts
  HostKeyChanged,       ///< known_hosts holds another key for this host
  AuthenticationFailed, ///< the host refused every key offered
  Unreachable,          ///< name lookup, refused or timed-out connection
  ConnectionLost,       ///< ssh ended with 255 otherwise (a dropped connection, a killed client)
  ProgramMissing,       ///< the remote streetgan was not found (exit 127) or cannot run (126)
  EnvironmentFailed,    ///< the profile's environment line failed
  CommandFailed,        ///< the remote command itself failed
};

class SshConnection {
public:
  /// `control_dir`: where the shared-connection socket lives (empty: defaultControlDir()).
  explicit SshConnection(HostProfile profile, QString control_dir = {});

  const HostProfile& profile() const { return profile_; }
  QString where() const { return profile_.destination(); }
  static QString program() { return "ssh"; }
  /// A private (0700, ours, not a link) folder for control sockets:
  /// $XDG_RUNTIME_DIR/streetgan-ssh-<uid>, else <temp>/streetgan-ssh-<uid>; empty when that
  /// folder is not safe to use (then every command makes its own connection).
  static QString defaultControlDir();

  /// ssh's options and the destination ("-T", "--", host), without a command.
  QStringList sshArguments() const;
  /// The full ssh command line running `streetgan args...` on the host (after the environment line).
  QStringList streetganCommand(const QStringList& args) const;
  /// ssh's arguments for a control command to the shared master (`ssh -O check|exit`).
  QStringList controlArguments(const QString& command) const;
  /// Asks the shared master connection to exit (`ssh -O exit`); harmless when there is none.
  void closeMaster() const;

  static SshFailure classify(int exit_code, int signal_number, const QString& stderr_text);
  /// The message for a failed command: what went wrong, on which host, what to do.
  QString describeFailure(SshFailure failure, const QString& stderr_text) const;

private:
  /// ssh's options alone: what sshArguments() puts before "-T -- host".
  QStringList sshOptions() const;
  /// What every ssh of this profile gets, the jump host's too: the config and key files, batch
  /// mode, strict host keys in the profile's known-hosts file, timeouts and keep-alives.
  QStringList protections() const;
  /// The jump host's ssh, with protections(), as ssh's ProxyCommand (a shell line).
  QString proxyCommand() const;

  HostProfile profile_;
  QString control_dir_;
};

}  // namespace streetgan::studio
