#include "app/studio/control/host_profile.h"

#include "core/config/train_config.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace streetgan::studio {

namespace {

bool hasControlCharacter(const QString& text) {
  for (QChar c : text)
    if (c.unicode() < 0x20 || c.unicode() == 0x7f) return true;
  return false;
}

}  // namespace

JumpHost JumpHost::parse(const QString& text) {
  JumpHost jump;
  QString rest = text;
  if (const int at = rest.lastIndexOf('@'); at >= 0) {
    jump.user = rest.left(at);
    rest = rest.mid(at + 1);
  }
  const int close = rest.startsWith('[') ? rest.indexOf(']') : -1;
  const int colon = rest.indexOf(':', close < 0 ? 0 : close);
  if (colon >= 0 && (close >= 0 || rest.count(':') == 1)) {
    bool ok = false;
    const int port = rest.mid(colon + 1).toInt(&ok);
    jump.port = ok && port >= 1 && port <= 65535 ? port : -1;
    rest = rest.left(colon);
  }
  jump.host = close >= 0 ? rest.mid(1, close - 1) : rest;
  return jump;
}

QString HostProfile::destination() const { return user.isEmpty() ? host : user + "@" + host; }

QString HostProfile::validateConnection() const {
  if (host.trimmed().isEmpty()) return "Host: enter a host name, address or ~/.ssh/config alias.";
  // ssh reads a leading '-' as an option and whitespace splits its arguments.
  for (const auto& [field, value] : {std::pair<QString, QString>{"Host", host}, {"User", user}, {"Jump host", jump_host}}) {
    if (value.startsWith('-')) return field + ": '" + value + "' cannot start with '-'.";
    if (value.contains(' ') || value.contains('\t') || hasControlCharacter(value))
      return field + ": '" + value + "' cannot contain spaces or control characters.";
  }
  if (!jump_host.isEmpty()) {
    const JumpHost jump = JumpHost::parse(jump_host);
    if (jump_host.contains(',') || jump.host.isEmpty() || jump.port < 0 || jump.host.startsWith('-'))
      return "Jump host: '" + jump_host + "' is not one host as [user@]host[:port].";
  }
  if (port < 0 || port > 65535) return "Port: " + QString::number(port) + " is not a port (1–65535, or 0 for ssh's default).";
  if (streetgan_path.trimmed().isEmpty()) return "streetgan path: enter the remote program (e.g. streetgan or ~/bin/streetgan).";
  if (runs_root.trimmed().isEmpty()) return "Runs folder: enter the remote folder for run directories.";
  if (hasControlCharacter(streetgan_path) || hasControlCharacter(runs_root))
    return "The remote paths cannot contain control characters.";
  // The program is run with `exec`, which reads a leading '-' as its own option.
  if (streetgan_path.trimmed().startsWith('-')) return "streetgan path: '" + streetgan_path + "' cannot start with '-'.";
  // Each is one argument of ssh (-i, -F) or the value of one -o option: a line break in it would
  // be read as more of ssh's configuration.
  for (const auto& [field, value] : {std::pair<QString, QString>{"Key file", identity_file},
                                     {"ssh config file", ssh_config_file}, {"Known hosts file", known_hosts_file}})
    if (hasControlCharacter(value)) return field + ": the path cannot contain control characters.";
  return {};
}

QString HostProfile::validate() const {
  if (const QString problem = validateConnection(); !problem.isEmpty()) return problem;
  // The config's own rule for "device", so the host accepts what a run's config would.
  auto checked = applyConfigJson(TrainConfig(), nlohmann::json{{"device", device.toStdString()}}, ConfigScope::All, "");
  if (!checked) {
    const std::string message = checked.error();
    const std::size_t problem = message.find("\": ");  // after `config key "device"`
    return "Device: " + QString::fromStdString(problem == std::string::npos ? message : message.substr(problem + 3)) + ".";
  }
  if (threads < 0 || threads > 1024) return "CPU threads: " + QString::number(threads) + " is not allowed (0 for all cores, or 1–1024).";
  if (devices < 1 || devices > 1024) return "Devices to use: " + QString::number(devices) + " is not allowed (1–1024).";
  if (!(cost_per_hour >= 0 && cost_per_hour <= 100000))
    return "Cost per hour: " + QString::number(cost_per_hour) + " is not allowed (0 for not known, up to 100000 dollars).";
  return {};
}

QStringList HostProfile::deviceArguments(const QString& config_device, int config_threads) const {
  QStringList arguments;
  if (config_device.isEmpty() || config_device == "auto") arguments << "--device" << device;
  if (config_threads == 0) arguments << "--threads" << QString::number(threads);
  if (devices > 1) arguments << "--nproc" << QString::number(devices);
  return arguments;
}

QJsonObject HostProfile::toJson() const {
  return {{"name", name},
          {"host", host},
          {"user", user},
          {"port", port},
          {"jump_host", jump_host},
          {"identity_file", identity_file},
          {"streetgan_path", streetgan_path},
          {"runs_root", runs_root},
          {"environment_line", environment_line},
          {"ssh_config_file", ssh_config_file},
          {"known_hosts_file", known_hosts_file},
          {"device", device},
          {"threads", threads},
          {"devices", devices},
          {"cost_per_hour", cost_per_hour}};
}

HostProfile HostProfile::fromJson(const QJsonObject& o) {
  HostProfile p;
  p.name = o.value("name").toString();
  p.host = o.value("host").toString();
  p.user = o.value("user").toString();
  p.port = o.value("port").toInt(0);
  p.jump_host = o.value("jump_host").toString();
  p.identity_file = o.value("identity_file").toString();
  p.streetgan_path = o.value("streetgan_path").toString(p.streetgan_path);
  p.runs_root = o.value("runs_root").toString(p.runs_root);
  p.environment_line = o.value("environment_line").toString();
  p.ssh_config_file = o.value("ssh_config_file").toString();
  p.known_hosts_file = o.value("known_hosts_file").toString();
  // Profiles saved before hosts had their own device and threads: auto, and all cores.
  p.device = o.value("device").toString().trimmed();
  if (p.device.isEmpty()) p.device = "auto";
  p.threads = std::max(0, o.value("threads").toInt(0));
  p.devices = std::max(1, o.value("devices").toInt(1));
  p.cost_per_hour = std::max(0.0, o.value("cost_per_hour").toDouble(0));
  return p;
}

QList<HostProfile> loadHostProfiles() {
  QSettings settings;
  QList<HostProfile> profiles;
  const auto array = QJsonDocument::fromJson(settings.value("hosts/profiles").toByteArray()).array();
  for (const auto& value : array) profiles.push_back(HostProfile::fromJson(value.toObject()));
  return profiles;
}

void saveHostProfiles(const QList<HostProfile>& profiles) {
  QJsonArray array;
  for (const auto& profile : profiles) array.push_back(profile.toJson());
  QSettings settings;
  settings.setValue("hosts/profiles", QJsonDocument(array).toJson(QJsonDocument::Compact));
}

}  // namespace streetgan::studio
