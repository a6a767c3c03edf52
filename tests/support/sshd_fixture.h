#pragma once
// SshdFixture: a real OpenSSH server (/usr/sbin/sshd from Debian's openssh-server) on 127.0.0.1
// at a free high port, with a host key and a user key generated for the test, for the remote-run
// tests. stop() ends the server and every session it holds (the connections drop, as in a crash
// or a restart that takes sessions down); start() again serves on the same port and key.
#include "app/studio/control/host_profile.h"

#include <QString>

class SshdFixture {
public:
  /// Keys and config under `dir`.
  explicit SshdFixture(QString dir);
  ~SshdFixture();

  /// Starts sshd and waits until it accepts connections; false with `error` set when it cannot.
  bool start(QString* error);
  /// Kills sshd and all its session processes.
  void stop();
  /// A new host key (the next start() serves it: a "changed host key").
  bool regenerateHostKey(QString* error);
  /// Adds the current host key to the profile's known_hosts, as a user who accepted it earlier.
  bool trustHostKey(QString* error);

  int port() const { return port_; }
  /// "ED25519 SHA256:…" of the current host key.
  QString hostKeyFingerprint() const;
  /// A profile reaching this server as the current user, with the test's key and known_hosts,
  /// ~/.ssh/config ignored, and the built `streetgan` as the remote program.
  streetgan::studio::HostProfile profile() const;
  QString knownHostsFile() const { return dir_ + "/known_hosts"; }
  QString controlDir() const { return dir_ + "/cm"; }
  QString remoteRunsRoot() const { return dir_ + "/remote-runs"; }

private:
  QString dir_;
  int port_ = 0;
  qint64 pid_ = 0;
};
