#pragma once
// HostKeyCheck: shows the user the key a host offers before the studio trusts it. probe() connects
// with no way to log in (every authentication method off, so nothing of the user's is offered to
// a host not yet trusted) and records the key the host sent in a scratch file; fingerprint() and
// accept() then let the user compare and, only on their word, add it to their known_hosts (the
// file ssh itself uses for this host, from `ssh -G`). Checking is never turned off for real
// connections. Both calls block (seconds at most): run them off the GUI thread.
#include "app/studio/control/ssh_connection.h"
#include "app/studio/control/status_text.h"

#include <QString>
#include <QStringList>

namespace streetgan::studio {

struct HostKeyProbe {
  Status status;             ///< why the probe failed (host unreachable); ok on success
  QString known_hosts_file;  ///< where accept() writes
  QString host_key_name;     ///< how known_hosts names the host, e.g. "[gpu.example.org]:2222"
  QStringList key_lines;     ///< the known_hosts lines for the keys the host offered
  QStringList fingerprints;  ///< "ED25519 SHA256:…", one per key
  bool changed = false;      ///< known_hosts already holds another key for this host
};

class HostKeyCheck {
public:
  /// `changed`: the failed connection said the key changed (SshFailure::HostKeyChanged).
  static HostKeyProbe probe(const SshConnection& connection, bool changed);
  /// Adds the probed keys to known_hosts (replacing the old ones when the key changed); returns
  /// an error message, or an empty string.
  static QString accept(const HostKeyProbe& probe);
};

}  // namespace streetgan::studio
