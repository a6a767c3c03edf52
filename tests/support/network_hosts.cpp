#include "tests/support/network_hosts.h"

#include <QFile>
#include <QProcess>

namespace {

const QString kBridge = QString(NetworkHosts::kPrefix) + "-br";

// Runs `ip args`; false with `error` naming the command and what it printed.
bool ip(const QStringList& args, QString* error) {
  QProcess process;
  process.start("ip", args);
  if (!process.waitForFinished(30000) || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
    if (error)
      *error = "ip " + args.join(' ') + " failed: " +
               QString::fromUtf8(process.readAllStandardError()).trimmed() + process.errorString();
    return false;
  }
  return true;
}

QStringList ipLines(const QStringList& args) {
  QProcess process;
  process.start("ip", args);
  process.waitForFinished(30000);
  return QString::fromUtf8(process.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
}

QString hostLink(int host) { return QString("%1-v%2").arg(NetworkHosts::kPrefix).arg(host); }

}  // namespace

NetworkHosts::~NetworkHosts() {
  if (count_ > 0) removeAll();
}

QString NetworkHosts::address(int host) { return QString("10.213.0.%1").arg(host + 1); }
QString NetworkHosts::interfaceName(int host) { return QString("%1-p%2").arg(kPrefix).arg(host); }
QString NetworkHosts::namespaceName(int host) { return QString("%1-h%2").arg(kPrefix).arg(host); }

QStringList NetworkHosts::onHost(int host, const QString& program, const QStringList& args,
                                 const QStringList& environment) {
  return QStringList{"netns", "exec", namespaceName(host), "env"} + environment + QStringList{program} + args;
}

void NetworkHosts::removeAll() {
  const QString prefix = QString(kPrefix) + "-";
  for (const QString& line : ipLines({"netns", "list"})) {
    const QString name = line.section(' ', 0, 0);
    if (name.startsWith(prefix)) ip({"netns", "del", name}, nullptr);
  }
  // `ip -o link` lines read "7: sgt-v0@if6: <...>": the name is before '@' or ':'.
  for (const QString& line : ipLines({"-o", "link", "show"})) {
    QString name = line.section(": ", 1, 1).section('@', 0, 0);
    if (name.startsWith(prefix)) ip({"link", "del", name}, nullptr);
  }
}

bool NetworkHosts::start(int count, QString* error) {
  if (count < 1 || count > 8) {
    *error = "NetworkHosts: 1 to 8 hosts";
    return false;
  }
  // `ip netns exec` makes the root's mounts private, which fails where "/" is no mount point (a
  // chroot, such as the LibTorch 2.x check's tree): no program could run on a host there, so
  // nothing is made.
  bool root_mounted = false;
  QFile mounts("/proc/self/mountinfo");
  if (mounts.open(QIODevice::ReadOnly))
    for (const QByteArray& line : mounts.readAll().split('\n'))
      root_mounted = root_mounted || line.split(' ').value(4) == "/";
  if (!root_mounted) {
    *error = "the root of this file system is no mount point (a chroot?), so `ip netns exec` cannot run programs";
    return false;
  }
  removeAll();
  count_ = count;  // from here on the destructor removes what was made
  if (!ip({"link", "add", kBridge, "type", "bridge"}, error) || !ip({"link", "set", kBridge, "up"}, error))
    return false;
  for (int h = 0; h < count; ++h) {
    const QString ns = namespaceName(h), outside = hostLink(h), inside = interfaceName(h);
    if (!ip({"netns", "add", ns}, error) ||
        !ip({"link", "add", outside, "type", "veth", "peer", "name", inside}, error) ||
        !ip({"link", "set", inside, "netns", ns}, error) || !ip({"link", "set", outside, "master", kBridge}, error) ||
        !ip({"link", "set", outside, "up"}, error) ||
        !ip({"-n", ns, "addr", "add", address(h) + "/24", "dev", inside}, error) ||
        !ip({"-n", ns, "link", "set", inside, "up"}, error) || !ip({"-n", ns, "link", "set", "lo", "up"}, error))
      return false;
  }
  // `ip netns exec` also needs a mount namespace it can make private: in a chroot whose root is
  // no mount point (the LibTorch 2.x check's tree) it fails, and no program could run on a host.
  return ip(onHost(0, "true", {}), error);
}

bool NetworkHosts::setLinkUp(int host, bool up, QString* error) {
  return ip({"link", "set", hostLink(host), up ? "up" : "down"}, error);
}
