#pragma once
// ConfigForm: a form over every key of a TrainConfig, built from core's key table (configKeyNames,
// configKeyGroup) and the config's own JSON, so a key added to core appears here with no form
// code. Flags are check boxes; numbers, words and lists (comma-separated) are text fields. Each
// edit is applied through core's applyConfigJson, the same rules as a config file: a rejected
// value stays in its field with core's message beside it (in red), and config() keeps the last
// valid value. The form never reads or writes files.
#include "core/config/train_config.h"

#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;

namespace streetgan::widgets {

class ConfigForm : public QWidget {
  Q_OBJECT
public:
  explicit ConfigForm(QWidget* parent = nullptr);

  /// Shows `config` in every field and clears the field errors.
  void setConfig(const TrainConfig& config);
  const TrainConfig& config() const { return config_; }
  /// No field holds a rejected value.
  bool isValid() const { return errors_.isEmpty(); }
  /// Core's message for a rejected value in `key`'s field; empty when it is accepted.
  QString fieldError(const QString& key) const { return errors_.value(key); }
  QStringList keys() const { return fields_.keys(); }
  /// Types `text` into `key`'s field and commits it, as a user would (a flag takes "true"/"false").
  void enterText(const QString& key, const QString& text);
  /// The text `key`'s field shows.
  QString fieldText(const QString& key) const;
  /// Shows only the groups named (e.g. {"Data"}); every key still belongs to config().
  void showOnlyGroups(const QStringList& groups);

signals:
  void configChanged();
  void validityChanged(bool valid);

private:
  struct Field {
    QLineEdit* edit = nullptr;   // or
    QCheckBox* check = nullptr;
    QLabel* error = nullptr;
    enum class Kind { Integer, Number, Flag, Text, Names, Numbers } kind = Kind::Text;
  };
  void commit(const QString& key);
  void showValue(const QString& key, const nlohmann::json& value);

  TrainConfig config_;
  QMap<QString, Field> fields_;
  QMap<QString, QWidget*> group_boxes_;
  QMap<QString, QString> errors_;
};

}  // namespace streetgan::widgets
