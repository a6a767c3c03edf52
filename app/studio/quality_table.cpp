#include "app/studio/quality_table.h"

#include <QHeaderView>
#include <QSaveFile>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace streetgan::studio {

namespace {

namespace figure = quality_figure;

// The rows in order: the figure, its name, what a good value is, and the figure shown in the
// training images' column.
struct FigureRow {
  const char* figure;
  const char* name;
  const char* good;
  const char* beside;
};
const FigureRow kRows[] = {
    {figure::kSwd, "SWD ×10³ (mean over the levels)", "low", nullptr},
    {figure::kMsSsimSamples, "MS-SSIM diversity", "near the training images'; above: less diverse", figure::kMsSsimTrain},
    {figure::kNdb, "NDB: bins whose shares differ", "low", nullptr},
    {figure::kNdbFraction, "NDB share of the bins", "low", nullptr},
    {figure::kJsd, "JSD of the bins", "low", nullptr},
    {figure::kFid, "FID", "low", nullptr},
    {figure::kKid, "KID", "near 0", nullptr},
    {figure::kKidStddev, "KID spread over the subsets", "", nullptr},
    {figure::kPrecision, "Precision", "high", nullptr},
    {figure::kRecall, "Recall", "high", nullptr},
    {figure::kDensity, "Density", "near 1", nullptr},
    {figure::kCoverage, "Coverage", "high", nullptr},
    {figure::kCopyRate, "Copy rate", "near 0", nullptr},
    {figure::kNearestRatio, "Nearest-neighbour distance ratio (median)", "near 1", nullptr},
    {figure::kSpreadRatio, "Spread of samples ÷ of training images", "near 1; low: collapse", nullptr}};

QString valueText(double value) { return std::isfinite(value) ? QString::number(value, 'g', 5) : QString("NaN"); }

QString csvField(const QString& text) {
  if (!text.contains(',') && !text.contains('"') && !text.contains('\n')) return text;
  return '"' + QString(text).replace("\"", "\"\"") + '"';
}

QTableWidgetItem* valueItem(double value) {
  auto* item = new QTableWidgetItem(valueText(value));
  item->setData(Qt::UserRole, value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

QualityTable::QualityTable(QWidget* parent) : QTableWidget(0, 4, parent) {
  setHorizontalHeaderLabels({"Metric", "Value", "Training images", "Good is"});
  verticalHeader()->hide();
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setStretchLastSection(true);
}

QualityTable::~QualityTable() = default;

void QualityTable::clearFigures() { setRowCount(0); }

void QualityTable::showEvaluation(const QualityEvaluation& evaluation) {
  setRowCount(0);
  std::set<std::string> shown;
  const auto add = [&](const std::string& key, const QString& name, const QString& good, const char* beside) {
    const int row = rowCount();
    insertRow(row);
    auto* name_item = new QTableWidgetItem(name);
    name_item->setData(Qt::UserRole, QString::fromStdString(key));
    setItem(row, 0, name_item);
    setItem(row, 1, valueItem(evaluation.metrics.at(key)));
    if (beside && evaluation.metrics.count(beside)) {
      setItem(row, 2, valueItem(evaluation.metrics.at(beside)));
      shown.insert(beside);
    }
    setItem(row, 3, new QTableWidgetItem(good));
    shown.insert(key);
  };
  for (const FigureRow& row : kRows) {
    if (!evaluation.metrics.count(row.figure)) continue;
    add(row.figure, row.name, row.good, row.beside);
    if (std::string(row.figure) != figure::kSwd) continue;
    // Each level of the pyramid after the mean, largest first.
    const std::string prefix = figure::kSwdLevelPrefix;
    std::vector<std::pair<int, std::string>> levels;
    for (const auto& entry : evaluation.metrics)
      if (entry.first.rfind(prefix, 0) == 0)
        levels.emplace_back(QString::fromStdString(entry.first.substr(prefix.size())).toInt(), entry.first);
    std::sort(levels.rbegin(), levels.rend());
    for (const auto& level : levels) add(level.second, QString("SWD ×10³ at %1 px").arg(level.first), "low", nullptr);
  }
  for (const auto& entry : evaluation.metrics)
    if (!shown.count(entry.first)) add(entry.first, QString::fromStdString(entry.first), QString(), nullptr);
}

QString QualityTable::describe(const QualityEvaluation& evaluation) {
  const auto& checkpoint = evaluation.checkpoint;
  QString text = checkpoint ? QString("%1: epoch %2, step %3, %4 images seen. ")
                                  .arg(QString::fromStdString(checkpoint->file))
                                  .arg(static_cast<qlonglong>(checkpoint->epoch))
                                  .arg(static_cast<qlonglong>(checkpoint->step))
                                  .arg(static_cast<qlonglong>(checkpoint->images_seen))
                            : QString();
  text += QString("%1 samples against %2 training images of %3 px. ")
              .arg(static_cast<qlonglong>(evaluation.n_samples))
              .arg(static_cast<qlonglong>(evaluation.n_train))
              .arg(evaluation.image_size);
  text += evaluation.feature_space.empty() ? QString("No feature space (no FID, KID or precision/recall).")
                                           : "Feature space: " + QString::fromStdString(evaluation.feature_space) + ".";
  for (const std::string& note : evaluation.notes) text += " Note: " + QString::fromStdString(note) + ".";
  for (const auto& alarm : evaluation.alarms) text += "\nAlarm: " + QString::fromStdString(alarm.message) + ".";
  return text;
}

QString QualityTable::csv() const {
  QStringList lines{"figure,metric,value,training images,good is"};
  for (int row = 0; row < rowCount(); ++row) {
    const QTableWidgetItem* name = item(row, 0);
    QStringList fields{csvField(name ? name->data(Qt::UserRole).toString() : QString())};
    for (int column = 0; column < columnCount(); ++column) {
      const QTableWidgetItem* cell = item(row, column);
      const bool number = column == 1 || column == 2;
      if (!cell) fields << QString();
      else if (number) fields << QString::number(cell->data(Qt::UserRole).toDouble(), 'g', 17);
      else fields << csvField(cell->text());
    }
    lines << fields.join(',');
  }
  return lines.join('\n') + '\n';
}

QString QualityTable::saveCsv(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(csv().toUtf8()) < 0 || !file.commit())
    return "Cannot write " + path + ": " + file.errorString();
  return {};
}

QString QualityTable::saveImage(const QString& path) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || !grab().save(&file, "PNG") || !file.commit())
    return "Cannot write " + path + ": " + file.errorString();
  return {};
}

}  // namespace streetgan::studio
