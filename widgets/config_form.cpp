#include "widgets/config_form.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

namespace streetgan::widgets {

namespace {

using json = nlohmann::json;

/// The value of a dotted key ("augment.shift") in a config's JSON.
json valueOf(const json& config, const std::string& key) {
  return config.at(json::json_pointer("/" + QString::fromStdString(key).replace('.', '/').toStdString()));
}

/// {"augment": {"shift": value}} for "augment.shift".
json nested(const std::string& key, json value) {
  const auto dot = key.find('.');
  if (dot == std::string::npos) return json{{key, std::move(value)}};
  return json{{key.substr(0, dot), nested(key.substr(dot + 1), std::move(value))}};
}

QString shortMessage(const std::string& message, const std::string& key) {
  // "form: config key "lr": -1 is not allowed; ..." → "-1 is not allowed; ..."
  const std::string marker = "config key \"" + key + "\": ";
  const auto at = message.find(marker);
  if (at != std::string::npos) return QString::fromStdString(message.substr(at + marker.size()));
  const std::string source = "form: ";
  return QString::fromStdString(message.rfind(source, 0) == 0 ? message.substr(source.size()) : message);
}

}  // namespace

ConfigForm::ConfigForm(QWidget* parent) : QWidget(parent) {
  const json defaults = configToJson(TrainConfig{});
  auto* layout = new QVBoxLayout(this);
  QMap<QString, QFormLayout*> groups;
  for (const std::string& name : configKeyNames()) {
    const QString key = QString::fromStdString(name);
    const QString group = QString::fromStdString(configKeyGroup(name));
    if (!groups.contains(group)) {
      auto* box = new QGroupBox(group, this);
      group_boxes_[group] = box;
      groups[group] = new QFormLayout(box);
      layout->addWidget(box);
    }
    const json value = valueOf(defaults, name);
    Field field;
    field.kind = value.is_boolean()           ? Field::Kind::Flag
                 : value.is_number_integer()  ? Field::Kind::Integer
                 : value.is_number()          ? Field::Kind::Number
                 : value.is_array()           ? (name == "parzen.sigmas" ? Field::Kind::Numbers : Field::Kind::Names)
                                              : Field::Kind::Text;
    auto* row = new QWidget(this);
    auto* row_layout = new QHBoxLayout(row);
    row_layout->setContentsMargins(0, 0, 0, 0);
    if (field.kind == Field::Kind::Flag) {
      field.check = new QCheckBox(row);
      field.check->setObjectName(key);
      row_layout->addWidget(field.check);
      connect(field.check, &QCheckBox::toggled, this, [this, key] { commit(key); });
    } else {
      field.edit = new QLineEdit(row);
      field.edit->setObjectName(key);
      if (field.kind == Field::Kind::Names || field.kind == Field::Kind::Numbers)
        field.edit->setPlaceholderText("comma-separated; empty for none");
      row_layout->addWidget(field.edit, 1);
      connect(field.edit, &QLineEdit::editingFinished, this, [this, key] { commit(key); });
    }
    field.error = new QLabel(row);
    field.error->setStyleSheet("color: #c62828;");
    field.error->setWordWrap(true);
    field.error->hide();
    row_layout->addWidget(field.error, 2);
    const QString label = key.contains('.') ? key.section('.', 1) : key;
    row->setToolTip(key + ": " + QString::fromStdString(configKeyAllowed(name)));
    groups[group]->addRow(label, row);
    fields_.insert(key, field);
  }
  layout->addStretch(1);
  setConfig(TrainConfig{});
}

void ConfigForm::setConfig(const TrainConfig& config) {
  config_ = config;
  const bool was_valid = isValid();
  errors_.clear();
  const json values = configToJson(config_);
  for (auto it = fields_.begin(); it != fields_.end(); ++it) {
    it->error->hide();
    showValue(it.key(), valueOf(values, it.key().toStdString()));
  }
  if (!was_valid) emit validityChanged(true);
  emit configChanged();
}

void ConfigForm::showValue(const QString& key, const json& value) {
  Field& field = fields_[key];
  if (field.check) {
    const QSignalBlocker block(field.check);
    field.check->setChecked(value.get<bool>());
    return;
  }
  QString text;
  if (value.is_array()) {
    QStringList items;
    for (const json& item : value) items << (item.is_string() ? QString::fromStdString(item.get<std::string>()) : QString::fromStdString(item.dump()));
    text = items.join(", ");
  } else if (value.is_string()) {
    text = QString::fromStdString(value.get<std::string>());
  } else {
    text = QString::fromStdString(value.dump());
  }
  field.edit->setText(text);
}

void ConfigForm::commit(const QString& key) {
  Field& field = fields_[key];
  const bool was_valid = isValid();
  const std::string name = key.toStdString();
  json value;
  const QString text = field.edit ? field.edit->text().trimmed() : QString();
  bool parsed = true;
  switch (field.kind) {
    case Field::Kind::Flag: value = field.check->isChecked(); break;
    case Field::Kind::Integer: {
      bool ok = false;
      const qlonglong n = text.toLongLong(&ok);
      if (ok) value = n;
      else value = json::parse(text.toStdString(), nullptr, false);  // "1.5" or garbage: core says why
      if (value.is_discarded()) value = text.toStdString();
      break;
    }
    case Field::Kind::Number: {
      bool ok = false;
      const double d = text.toDouble(&ok);
      value = ok ? json(d) : json(text.toStdString());
      break;
    }
    case Field::Kind::Text: value = text.toStdString(); break;
    case Field::Kind::Names:
    case Field::Kind::Numbers: {
      value = json::array();
      for (const QString& item : text.split(',', Qt::SkipEmptyParts)) {
        const QString trimmed = item.trimmed();
        if (trimmed.isEmpty()) continue;
        if (field.kind == Field::Kind::Numbers) {
          bool ok = false;
          const double d = trimmed.toDouble(&ok);
          if (!ok && parsed) {
            parsed = false;
            errors_[key] = "\"" + trimmed + "\" is not a number";
          }
          value.push_back(d);
        } else {
          value.push_back(trimmed.toStdString());
        }
      }
      break;
    }
  }
  if (parsed) {
    auto applied = applyConfigJson(config_, nested(name, value), ConfigScope::All, "form");
    if (applied) {
      config_ = std::move(*applied);
      errors_.remove(key);
    } else {
      errors_[key] = shortMessage(applied.error(), name);
    }
  }
  if (errors_.contains(key)) {
    field.error->setText(errors_[key]);
    field.error->show();
  } else {
    field.error->hide();
    emit configChanged();
  }
  if (was_valid != isValid()) emit validityChanged(isValid());
}

void ConfigForm::enterText(const QString& key, const QString& text) {
  Field& field = fields_[key];
  if (field.check) {
    field.check->setChecked(text == "true");
    commit(key);  // also when the state did not change
    return;
  }
  field.edit->setText(text);
  commit(key);
}

QString ConfigForm::fieldText(const QString& key) const {
  const Field& field = fields_[key];
  if (field.check) return field.check->isChecked() ? "true" : "false";
  return field.edit->text();
}

void ConfigForm::showOnlyGroups(const QStringList& groups) {
  for (auto it = group_boxes_.begin(); it != group_boxes_.end(); ++it) it.value()->setVisible(groups.contains(it.key()));
}

}  // namespace streetgan::widgets
