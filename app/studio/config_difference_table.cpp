#include "app/studio/config_difference_table.h"

#include "core/config/train_config.h"

#include <QHeaderView>

#include <algorithm>
#include <set>

namespace streetgan::studio {
namespace {

// The key table's order for the keys it knows, then the others by name.
std::vector<std::string> orderedKeys(const std::set<std::string>& keys) {
  std::vector<std::string> ordered;
  for (const std::string& name : configKeyNames())
    if (keys.count(name)) ordered.push_back(name);
  for (const std::string& name : keys)
    if (std::find(ordered.begin(), ordered.end(), name) == ordered.end()) ordered.push_back(name);
  return ordered;
}

}  // namespace

ConfigDifferenceTable::ConfigDifferenceTable(QWidget* parent) : QTableWidget(parent) {
  setObjectName("configDifferences");
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  verticalHeader()->hide();
  setToolTip("The config keys whose values differ between the compared runs (each run's latest start)");
}

void ConfigDifferenceTable::setRuns(const QStringList& runs,
                                    const std::vector<std::map<std::string, std::string>>& configs) {
  std::set<std::string> all;
  for (const auto& config : configs)
    for (const auto& [key, value] : config) all.insert(key);
  std::vector<std::string> differing;
  for (const std::string& key : orderedKeys(all)) {
    std::set<std::string> values;
    for (const auto& config : configs) {
      const auto it = config.find(key);
      values.insert(it == config.end() ? std::string("\x01") : it->second);
    }
    if (values.size() > 1) differing.push_back(key);
  }
  clear();
  setColumnCount(static_cast<int>(configs.size()) + 1);
  setRowCount(static_cast<int>(differing.size()));
  setHorizontalHeaderLabels(QStringList{"config key"} + runs);
  for (int row = 0; row < rowCount(); ++row) {
    const std::string& key = differing[static_cast<std::size_t>(row)];
    setItem(row, 0, new QTableWidgetItem(QString::fromStdString(key)));
    for (std::size_t run = 0; run < configs.size(); ++run) {
      const auto it = configs[run].find(key);
      setItem(row, static_cast<int>(run) + 1,
              new QTableWidgetItem(it == configs[run].end() ? QString("—") : QString::fromStdString(it->second)));
    }
  }
  resizeColumnsToContents();
}

QStringList ConfigDifferenceTable::keys() const {
  QStringList out;
  for (int row = 0; row < rowCount(); ++row) out << item(row, 0)->text();
  return out;
}

}  // namespace streetgan::studio
