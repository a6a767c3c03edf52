#pragma once
// NetworkHosts: N "hosts" on one machine for the multi-node tests, each a Linux network namespace
// with its own address in 10.213.0.0/24, joined by veth pairs to one bridge. Nothing in them can
// reach or be reached from outside: the bridge has no address and no route leads to it. A program
// runs "on" host i through `ip netns exec`; cutting host i's link (setLinkUp) is a network
// failure as a real cluster sees one: packets vanish, nothing is closed.
//
// Everything it makes is named with kPrefix. A fixture removes what it made when it ends, and at
// its start removes anything of that prefix left by a run that was killed. Needs root and iproute2
// (`ip`); start() says why it cannot otherwise, and the tests skip with that reason.
#include <QString>
#include <QStringList>

class NetworkHosts {
public:
  static constexpr const char* kPrefix = "sgt";

  NetworkHosts() = default;
  ~NetworkHosts();
  NetworkHosts(const NetworkHosts&) = delete;
  NetworkHosts& operator=(const NetworkHosts&) = delete;

  /// Makes `count` hosts (1 to 8); false with `error` set when the machine cannot.
  bool start(int count, QString* error);
  /// Removes the namespaces, links and bridge of the prefix (also those of a killed earlier run).
  static void removeAll();

  int count() const { return count_; }
  /// Host i's address, "10.213.0.<i+1>"; unreachableAddress() is in the range but unused.
  static QString address(int host);
  static QString unreachableAddress() { return "10.213.0.200"; }
  /// The name of host i's interface inside its namespace (for GLOO_SOCKET_IFNAME).
  static QString interfaceName(int host);
  /// The namespace of host i.
  static QString namespaceName(int host);
  /// `ip netns exec <host i> env VARS... program args...`: the argv of `ip` that runs it there.
  static QStringList onHost(int host, const QString& program, const QStringList& args,
                            const QStringList& environment = {});
  /// Brings host i's link down (its packets are dropped from then on) or up again.
  bool setLinkUp(int host, bool up, QString* error);

private:
  int count_ = 0;
};
