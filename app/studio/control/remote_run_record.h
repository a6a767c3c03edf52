#pragma once
// RemoteRunRecord: a run that trains on a remote host, as the studio keeps it on this computer.
// The local run directory is a mirror: remote.json (this record: the host profile and the remote
// run directory), events.jsonl (the remote log, byte for byte as far as it has been read — its
// size is the offset to follow from), and the sample grids and checkpoints fetched so far. The
// Runs tab lists it like a local run, with its host.
//
// remote.json is a file in a folder: it may have been edited or copied from elsewhere. read()
// takes it as it is (so the run is still listed, and still recognised as remote); validate() says
// what is wrong with it, by the host dialog's rules, and RemoteRunTransport uses no record that
// fails it.
#include "app/studio/control/host_profile.h"

#include <QList>
#include <QString>

#include <optional>

namespace streetgan::studio {

struct RemoteRunRecord {
  HostProfile host;
  QString remote_run_dir;  ///< on the host; relative paths start at the remote home
  QString local_run_dir;   ///< the mirror on this computer
  /// A run on several hosts: nodes 1 to N-1 (node 0, the host of rank 0 and of the run's files, is
  /// `host`). Each runs the same `streetgan train` with --nnodes N --node-rank i, in its own run
  /// directory (remoteRunDirOn), which rank 0 alone writes; empty for a run on one host.
  QList<HostProfile> more_hosts;
  QString master_addr;      ///< node 0 as the other hosts reach it; empty: host.host
  int master_port = 29500;  ///< the port of rank 0's store on node 0

  /// Hosts of the run: 1 + more_hosts.
  int nodeCount() const { return 1 + static_cast<int>(more_hosts.size()); }
  /// The run directory on node `node` (1 to N-1): the same name under that host's runs root.
  QString remoteRunDirOn(int node) const;
  /// The address the nodes meet at: master_addr, or node 0's host name.
  QString masterAddress() const { return master_addr.isEmpty() ? host.host : master_addr; }

  /// The remote run directory of run `name` under the profile's runs root ("~/x" becomes "x":
  /// ssh commands start in the remote home, and a quoted "~" would not expand; a name starting
  /// with '-' right in the home becomes "./-name", never an option of the remote command).
  static QString remoteRunDirFor(const HostProfile& host, const QString& name);
  static QString fileName() { return "remote.json"; }

  /// Writes local_run_dir/remote.json (creating the folder); an error message, or empty.
  QString write() const;
  /// What is wrong with the record (naming remote.json and the field): the host profiles by
  /// HostProfile::validate(), a remote run directory that is empty or starts with '-', and for a
  /// run on several hosts the master address and port.
  /// Empty when it can be used.
  QString validate() const;
  /// The record of `local_run_dir`, or nothing when it is a local run.
  static std::optional<RemoteRunRecord> read(const QString& local_run_dir);
};

}  // namespace streetgan::studio
