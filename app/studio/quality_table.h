#pragma once
// QualityTable: the figures of one quality evaluation (core/runs/quality_evaluation_file.h,
// docs/evaluation.md) as a table: the metric, its value, the training images' figure beside it
// (MS-SSIM diversity) and what a good value is. SWD's pyramid levels follow its mean, largest
// first; figures the table has no name for follow under their own. describe() gives the line that
// goes under it (the checkpoint, the counts, the feature space, the notes). The table saves itself
// as CSV (the figure's name first, values in full precision) or as a PNG image of what it shows.
#include "core/runs/quality_evaluation_file.h"

#include <QString>
#include <QTableWidget>

namespace streetgan::studio {

class QualityTable : public QTableWidget {
  Q_OBJECT
public:
  explicit QualityTable(QWidget* parent = nullptr);
  ~QualityTable() override;

  void showEvaluation(const QualityEvaluation& evaluation);
  /// No rows.
  void clearFigures();
  /// The line that goes with the table of `evaluation`.
  static QString describe(const QualityEvaluation& evaluation);

  /// "figure,metric,value,training images,good is" and a line per row.
  QString csv() const;
  /// Save as CSV, or as an image; the error, or empty.
  QString saveCsv(const QString& path) const;
  QString saveImage(const QString& path);
};

}  // namespace streetgan::studio
