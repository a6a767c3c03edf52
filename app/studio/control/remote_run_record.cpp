#include "app/studio/control/remote_run_record.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace streetgan::studio {

QString RemoteRunRecord::remoteRunDirFor(const HostProfile& host, const QString& name) {
  QString root = host.runs_root.trimmed();
  if (root == "~") root = ".";
  else if (root.startsWith("~/")) root = root.mid(2);
  while (root.size() > 1 && root.endsWith('/')) root.chop(1);
  return root.isEmpty() ? name : root + "/" + name;
}

QString RemoteRunRecord::write() const {
  if (!QDir().mkpath(local_run_dir)) return local_run_dir + ": cannot create the folder";
  QSaveFile file(QDir(local_run_dir).filePath(fileName()));
  if (!file.open(QIODevice::WriteOnly)) return file.fileName() + ": cannot write it (" + file.errorString() + ")";
  const QJsonObject object{{"host", host.toJson()}, {"remote_run_dir", remote_run_dir}};
  file.write(QJsonDocument(object).toJson());
  if (!file.commit()) return file.fileName() + ": cannot write it (" + file.errorString() + ")";
  return {};
}

std::optional<RemoteRunRecord> RemoteRunRecord::read(const QString& local_run_dir) {
  QFile file(QDir(local_run_dir).filePath(fileName()));
  if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
  const QJsonObject object = QJsonDocument::fromJson(file.readAll()).object();
  if (!object.value("host").isObject() || object.value("remote_run_dir").toString().isEmpty()) return std::nullopt;
  RemoteRunRecord record;
  record.host = HostProfile::fromJson(object.value("host").toObject());
  record.remote_run_dir = object.value("remote_run_dir").toString();
  record.local_run_dir = local_run_dir;
  return record;
}

}  // namespace streetgan::studio
