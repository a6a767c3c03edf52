#include "app/studio/run_figures_table.h"

#include <QHeaderView>
#include <QStringList>

#include <cmath>
#include <optional>

namespace streetgan::studio {

namespace {

QString numberText(std::optional<double> value, int decimals) {
  return value ? QString::number(*value, 'f', decimals) : QString("—");
}

QString durationText(std::optional<double> seconds) {
  if (!seconds) return "—";
  const qint64 s = std::llround(*seconds);
  if (s >= 3600) return QString("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
  if (s >= 60) return QString("%1 min %2 s").arg(s / 60).arg(s % 60);
  return QString("%1 s").arg(*seconds, 0, 'f', 1);
}

QString gib(std::optional<double> bytes) {
  return bytes ? QString("%1 GiB").arg(*bytes / 1073741824.0, 0, 'f', 2) : QString("—");
}

// The latest FID with the feature space it was computed in (figures of different spaces differ).
QString fidText(const RunFigures& f) {
  if (!f.latest_fid) return "—";
  const QString fid = QString::number(*f.latest_fid, 'f', 2);
  return f.latest_fid_space.empty() ? fid : fid + " (" + QString::fromStdString(f.latest_fid_space) + ")";
}

const QStringList kColumns{"Run", "Trained on", "Preset", "Batch", "Device", "World size", "Images/s", "Images/hour",
                           "Time per epoch", "Best Parzen", "SWD ×10³", "FID", "Copy rate", "Alarms", "$/hour",
                           "$ per million images", "Peak memory", "Mean CPU %", "Mean GPU %", "Peak GPU memory"};

QStringList cellsOf(const RunFiguresRow& run) {
  const RunHistory& h = *run.history;
  const RunFigures f = runFigures(h);
  const std::optional<double> per_hour =
      run.cost_per_hour > 0 ? std::optional<double>(run.cost_per_hour) : std::nullopt;
  return {run.name,
          run.host.isEmpty() ? QString("this computer") : run.host,
          QString::fromStdString(h.preset),
          h.batch_size > 0 ? QString::number(h.batch_size) : QString("—"),
          QString::fromStdString(h.device) + (h.backend.empty() ? QString() : ", " + QString::fromStdString(h.backend)),
          QString::number(h.world_size),
          numberText(f.images_per_s, 1),
          numberText(f.images_per_hour, 0),
          durationText(f.seconds_per_epoch),
          numberText(f.best_parzen, 1),
          numberText(f.latest_swd, 2),
          fidText(f),
          f.latest_copy_rate ? QString("%1%").arg(100 * *f.latest_copy_rate, 0, 'f', 1) : QString("—"),
          QString::number(f.alarms),
          per_hour ? QString::number(*per_hour, 'f', 2) : QString("not set"),
          numberText(dollarsPerMillionImages(per_hour, f.images_per_hour), 2),
          gib(f.peak_rss_bytes),
          numberText(f.mean_cpu_percent, 0),
          numberText(f.mean_gpu_percent, 0),
          gib(f.peak_gpu_memory_bytes)};
}

}  // namespace

RunFiguresTable::RunFiguresTable(int runs, QWidget* parent)
    : QTableWidget(runs, static_cast<int>(kColumns.size()), parent) {
  setHorizontalHeaderLabels(kColumns);
  verticalHeader()->hide();
  setEditTriggers(QAbstractItemView::NoEditTriggers);
}

void RunFiguresTable::setRun(int row, const RunFiguresRow& run) {
  const QStringList cells = cellsOf(run);
  for (int c = 0; c < cells.size(); ++c) {
    auto* cell = item(row, c);
    if (!cell) {
      cell = new QTableWidgetItem();
      setItem(row, c, cell);
    }
    if (cell->text() != cells[c]) cell->setText(cells[c]);
    if (c == 0) cell->setForeground(run.color);
  }
}

QString RunFiguresTable::csv() const {
  auto quote = [](QString cell) {
    if (cell.contains(',') || cell.contains('"')) cell = '"' + cell.replace("\"", "\"\"") + '"';
    return cell;
  };
  QStringList lines{kColumns.join(',')};
  for (int r = 0; r < rowCount(); ++r) {
    QStringList cells;
    for (int c = 0; c < columnCount(); ++c) cells << quote(item(r, c) ? item(r, c)->text() : QString());
    lines << cells.join(',');
  }
  return lines.join('\n') + '\n';
}

}  // namespace streetgan::studio
