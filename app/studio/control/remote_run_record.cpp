#include "app/studio/control/remote_run_record.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>

namespace streetgan::studio {

QString RemoteRunRecord::remoteRunDirFor(const HostProfile& host, const QString& name) {
  QString root = host.runs_root.trimmed();
  if (root == "~") root = ".";
  else if (root.startsWith("~/")) root = root.mid(2);
  while (root.size() > 1 && root.endsWith('/')) root.chop(1);
  if (root.isEmpty()) return name.startsWith('-') ? "./" + name : name;
  return root + "/" + name;
}

QString RemoteRunRecord::remoteRunDirOn(int node) const {
  if (node <= 0 || node > more_hosts.size()) return remote_run_dir;
  return remoteRunDirFor(more_hosts[node - 1], QFileInfo(remote_run_dir).fileName());
}

QString RemoteRunRecord::validate() const {
  const QString file = QDir(local_run_dir).filePath(fileName());
  if (const QString problem = host.validate(); !problem.isEmpty()) return file + ": " + problem;
  if (remote_run_dir.isEmpty()) return file + ": the remote run directory is empty.";
  // It is an argument of `streetgan remote …` on the host, where a leading '-' is an option.
  if (remote_run_dir.startsWith('-'))
    return file + ": the remote run directory '" + remote_run_dir + "' cannot start with '-'.";
  if (remote_run_dir.contains(QChar(0))) return file + ": the remote run directory cannot contain a NUL character.";
  for (int i = 0; i < more_hosts.size(); ++i)
    if (const QString problem = more_hosts[i].validate(); !problem.isEmpty())
      return file + ": more_hosts[" + QString::number(i) + "]: " + problem;
  if (!more_hosts.isEmpty()) {
    // An argument of `streetgan train` on every host.
    const QString address = masterAddress();
    if (address.isEmpty() || address.startsWith('-') || address.contains(QRegularExpression("[\\s\\x00]")))
      return file + ": master_addr '" + address + "' is not a host name or address.";
    if (master_port < 1 || master_port > 65535)
      return file + ": master_port " + QString::number(master_port) + " is not allowed; allowed: 1 to 65535.";
  }
  return {};
}

QString RemoteRunRecord::write() const {
  if (!QDir().mkpath(local_run_dir)) return local_run_dir + ": cannot create the folder";
  QSaveFile file(QDir(local_run_dir).filePath(fileName()));
  if (!file.open(QIODevice::WriteOnly)) return file.fileName() + ": cannot write it (" + file.errorString() + ")";
  QJsonObject object{{"host", host.toJson()}, {"remote_run_dir", remote_run_dir}};
  if (!more_hosts.isEmpty()) {
    QJsonArray more;
    for (const auto& profile : more_hosts) more.append(profile.toJson());
    object.insert("more_hosts", more);
    object.insert("master_addr", master_addr);
    object.insert("master_port", master_port);
  }
  file.write(QJsonDocument(object).toJson());
  if (!file.commit()) return file.fileName() + ": cannot write it (" + file.errorString() + ")";
  return {};
}

std::optional<RemoteRunRecord> RemoteRunRecord::read(const QString& local_run_dir) {
  QFile file(QDir(local_run_dir).filePath(fileName()));
  // Only a regular file: opening a FIFO named remote.json would wait for a writer forever.
  if (!QFileInfo(file.fileName()).isFile() || !file.open(QIODevice::ReadOnly)) return std::nullopt;
  // A record is a few hundred bytes; a link to /dev/zero or a huge file is not one.
  const QByteArray bytes = file.read(1 << 20);
  if (!file.atEnd()) return std::nullopt;
  const QJsonObject object = QJsonDocument::fromJson(bytes).object();
  if (!object.value("host").isObject() || object.value("remote_run_dir").toString().isEmpty()) return std::nullopt;
  RemoteRunRecord record;
  record.host = HostProfile::fromJson(object.value("host").toObject());
  record.remote_run_dir = object.value("remote_run_dir").toString();
  record.local_run_dir = local_run_dir;
  // At most the hosts a job may have; more is not a record (validate() checks each one).
  const QJsonArray more = object.value("more_hosts").toArray();
  for (qsizetype i = 0; i < more.size() && i < 65535; ++i) record.more_hosts.append(HostProfile::fromJson(more[i].toObject()));
  record.master_addr = object.value("master_addr").toString();
  record.master_port = object.value("master_port").toInt(29500);
  return record;
}

}  // namespace streetgan::studio
