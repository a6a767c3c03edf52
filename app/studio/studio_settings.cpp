#include "app/studio/studio_settings.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace streetgan::studio {

StudioSettings StudioSettings::load() {
  QSettings settings;
  StudioSettings s;
  s.runs_root = settings.value("runs_root", QDir::home().filePath("StreetGAN/runs")).toString();
  s.device = settings.value("device", "auto").toString();
  s.threads = settings.value("threads", 0).toInt();
  return s;
}

void StudioSettings::save() const {
  QSettings settings;
  settings.setValue("runs_root", runs_root);
  settings.setValue("device", device);
  settings.setValue("threads", threads);
}

QString findStreetganProgram() {
  const QString from_environment = qEnvironmentVariable("STREETGAN_CLI");
  if (!from_environment.isEmpty()) return from_environment;
  const QDir here(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {here.filePath("streetgan"), here.filePath("../cli/streetgan")}) {
    const QFileInfo info(candidate);
    if (info.isFile() && info.isExecutable()) return info.canonicalFilePath();
  }
  return "streetgan";
}

}  // namespace streetgan::studio
