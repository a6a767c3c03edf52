#pragma once
// RunFiguresTable: Compare's table of runs, a row each: where it trained, preset, batch, device,
// world size, images/s and per hour, time per epoch, best Parzen, the latest SWD ×10³, FID (with
// its feature space) and copy rate, the quality alarms, the dollars per hour of where it trained
// and per million images, peak memory and mean CPU/GPU use. Read-only; also written as CSV.
#include "core/runs/run_history.h"

#include <QColor>
#include <QString>
#include <QTableWidget>

namespace streetgan::studio {

/// One run's row: its name (drawn in its colour), where it trained ("" for this computer), the
/// dollars an hour there costs (0: not known), and its history.
struct RunFiguresRow {
  QString name;
  QColor color;
  QString host;
  double cost_per_hour = 0;
  const RunHistory* history = nullptr;
};

class RunFiguresTable : public QTableWidget {
  Q_OBJECT
public:
  RunFiguresTable(int runs, QWidget* parent = nullptr);

  /// Fills row `row`; only cells whose text changed are touched.
  void setRun(int row, const RunFiguresRow& run);
  /// The table as CSV (a header, one row per run).
  QString csv() const;
};

}  // namespace streetgan::studio
