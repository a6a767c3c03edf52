#pragma once
// ConfigDifferenceTable: Compare's table of the config keys whose values differ between the
// compared runs, a row per key (in the key table's order where it knows the key) and a column per
// run, as each run's latest run_started gave its config; "—" where a run has no such key.
#include <QStringList>
#include <QTableWidget>

#include <map>
#include <string>
#include <vector>

namespace streetgan::studio {

class ConfigDifferenceTable : public QTableWidget {
  Q_OBJECT
public:
  explicit ConfigDifferenceTable(QWidget* parent = nullptr);
  /// Shows the keys that differ among `configs` (flattened: "augment.shift" → "0.2"), one column
  /// per run named in `runs`.
  void setRuns(const QStringList& runs, const std::vector<std::map<std::string, std::string>>& configs);
  /// The keys shown, in row order.
  QStringList keys() const;
};

}  // namespace streetgan::studio
