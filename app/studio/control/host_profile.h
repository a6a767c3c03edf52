#pragma once
// HostProfile: a remote GPU host as the studio reaches it through the system OpenSSH client, so
// ~/.ssh/config, agents, keys and jump hosts work as they already do. No password is part of a
// profile: authentication is the user's keys or agent. A profile also says how runs on the host
// train (its device and CPU threads: the host's, not this computer's Settings). Profiles are kept
// with QSettings (loadHostProfiles/saveHostProfiles) and copied into each remote run's record.
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace streetgan::studio {

/// A profile's jump host, [user@]host[:port] (the host may be an [IPv6 address]).
struct JumpHost {
  QString user;  ///< empty: ssh's default
  QString host;
  int port = 0;  ///< 0: ssh's default; -1: not a port
  static JumpHost parse(const QString& text);
};

struct HostProfile {
  QString name;                           ///< label in lists; empty: the destination
  QString host;                           ///< host name, address or ~/.ssh/config alias
  QString user;                           ///< empty: ssh's default
  int port = 0;                           ///< 0: ssh's default (22 or ~/.ssh/config)
  QString jump_host;                      ///< one jump host, [user@]host[:port] (e.g. "me@bastion.example.org"); empty: none
  QString identity_file;                  ///< private key; empty: the agent and ssh's defaults
  QString streetgan_path = "streetgan";   ///< the remote program (a leading ~/ is the remote home)
  QString runs_root = "~/streetgan-runs"; ///< remote folder of run directories
  QString environment_line;               ///< shell run first, e.g. "source /opt/habana/env.sh"
  QString ssh_config_file;                ///< ssh -F; empty: ~/.ssh/config
  QString known_hosts_file;               ///< UserKnownHostsFile; empty: ssh's default
  QString device = "auto";                ///< runs on this host train on: auto, cpu, cuda, cuda:N or hpu
  int threads = 0;                        ///< CPU threads of runs on this host; 0: all its cores
  int devices = 1;                        ///< devices a run uses: above 1, `--nproc N` (one rank each)
  double cost_per_hour = 0;               ///< what an hour of this host costs, in dollars; 0: not known

  /// "user@host" or "host".
  QString destination() const;
  QString label() const { return name.isEmpty() ? destination() : name; }
  /// What is wrong with the profile (naming the field), or an empty string: validateConnection(),
  /// then the device, threads, devices and cost. The host dialog's rule, and a remote.json's.
  QString validate() const;
  /// What is wrong with the fields that reach ssh's command line and the remote shell (host, user,
  /// port, jump host, key, config and known-hosts files, the streetgan path and runs folder), or an
  /// empty string. Checked again before every ssh command: a profile read from a file (a run's
  /// remote.json) never puts an option where ssh expects the destination.
  QString validateConnection() const;
  /// The `streetgan train` options that choose the device and threads of a run on this host: the
  /// profile's, except where the run's config sets its own (a device other than "auto", threads
  /// other than 0), which the config then carries; and `--nproc N` with `devices` above 1.
  QStringList deviceArguments(const QString& config_device, int config_threads) const;

  QJsonObject toJson() const;
  static HostProfile fromJson(const QJsonObject& object);
  bool operator==(const HostProfile& other) const { return toJson() == other.toJson(); }
};

QList<HostProfile> loadHostProfiles();
void saveHostProfiles(const QList<HostProfile>& profiles);

}  // namespace streetgan::studio
