#include "app/studio/nearest_images_dialog.h"

#include <QDialogButtonBox>
#include <QFontMetrics>
#include <QGridLayout>
#include <QLabel>
#include <QPixmap>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace streetgan::studio {

namespace {

constexpr int kDisplaySide = 160;  // every image of the grid, samples and photographs alike
constexpr int kCaptionWidth = kDisplaySide + 40;

QString columnTitle(int n) {
  if (n == 1) return "Nearest training image";
  const int tens = n % 100, ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th" : ones == 1 ? "st" : ones == 2 ? "nd" : ones == 3 ? "rd" : "th";
  return QString("%1%2 nearest").arg(n).arg(QString(suffix));
}

// One cell: the image at the display size (a small sample enlarged without smoothing, so its
// pixels show as they are), the caption under it.
QWidget* imageCell(const QImage& image, const QString& caption, const QString& tooltip, QWidget* parent) {
  auto* cell = new QWidget(parent);
  auto* layout = new QVBoxLayout(cell);
  layout->setContentsMargins(2, 2, 2, 2);
  auto* view = new QLabel(cell);
  view->setFixedSize(kDisplaySide, kDisplaySide);
  view->setAlignment(Qt::AlignCenter);
  if (image.isNull()) {
    view->setText("Cannot be read.");
  } else {
    const Qt::TransformationMode mode = image.width() < kDisplaySide ? Qt::FastTransformation : Qt::SmoothTransformation;
    view->setPixmap(QPixmap::fromImage(image.scaled(kDisplaySide, kDisplaySide, Qt::KeepAspectRatio, mode)));
  }
  auto* text = new QLabel(caption, cell);
  text->setWordWrap(true);
  text->setFixedWidth(kCaptionWidth);
  text->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
  text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  if (!tooltip.isEmpty()) {
    view->setToolTip(tooltip);
    text->setToolTip(tooltip);
  }
  layout->addWidget(view, 0, Qt::AlignHCenter);
  layout->addWidget(text, 0, Qt::AlignHCenter);
  return cell;
}

QString searchedText(const NearestImagesResult& result) {
  QString text = result.train_searched + result.train_skipped < result.train_total
                     ? QString("Searched a seeded random draw of %1 of the %2 training images.")
                           .arg(static_cast<qlonglong>(result.train_searched + result.train_skipped))
                           .arg(static_cast<qlonglong>(result.train_total))
                     : QString("Searched all %1 training images.").arg(static_cast<qlonglong>(result.train_total));
  if (result.train_skipped > 0)
    text += QString(" %1 of them could not be read and were left out.").arg(static_cast<qlonglong>(result.train_skipped));
  return text;
}

}  // namespace

NearestImagesDialog::NearestImagesDialog(const NearestImagesResult& result, QWidget* parent) : QDialog(parent) {
  setWindowTitle("Nearest training images");
  header_ = new QLabel(this);
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(header_);

  if (!result.status || result.rows.isEmpty()) {
    header_->setText(result.status ? QString("Nothing was found.") : errorText(result.status));
    layout->addStretch(1);
    layout->addWidget(buttons);
    return;
  }
  const NearestImagesRow& first = result.rows.front();
  const NearestImagesRow& last = result.rows.back();
  header_->setText(QString("Seeds %1–%2 of %3, each beside its nearest training photographs: the L2 distance at "
                           "%4×%4 of the images in [-1, 1], as the memorisation check measures it (a copy is near 0). "
                           "%5 Photographs are shown as their center squares; a path is relative to %6.")
                       .arg(static_cast<qulonglong>(first.seed))
                       .arg(static_cast<qulonglong>(last.seed))
                       .arg(result.checkpoint)
                       .arg(result.compare_size)
                       .arg(searchedText(result), result.dataroot));

  auto* grid_widget = new QWidget(this);
  auto* grid = new QGridLayout(grid_widget);
  int columns = 0;
  for (const NearestImagesRow& row : result.rows) columns = std::max(columns, static_cast<int>(row.nearest.size()));
  grid->addWidget(new QLabel("Sample", grid_widget), 0, 0, Qt::AlignHCenter);
  for (int j = 0; j < columns; ++j) grid->addWidget(new QLabel(columnTitle(j + 1), grid_widget), 0, j + 1, Qt::AlignHCenter);
  const QFontMetrics metrics(font());
  for (int r = 0; r < result.rows.size(); ++r) {
    const NearestImagesRow& row = result.rows[r];
    grid->addWidget(imageCell(row.sample, QString("seed %1").arg(static_cast<qulonglong>(row.seed)), QString(), grid_widget),
                    r + 1, 0, Qt::AlignTop);
    QStringList captions;
    for (int j = 0; j < row.nearest.size(); ++j) {
      const NearestTrainingImage& image = row.nearest[j];
      const QString distance = QString("distance %1 · ").arg(image.distance, 0, 'f', 2);
      captions << distance + image.relative_path;
      // On screen a long path is cut in the middle; the tooltip and captions() keep it whole.
      const QString shown = distance + metrics.elidedText(image.relative_path, Qt::ElideMiddle, kCaptionWidth);
      grid->addWidget(imageCell(image.image, shown, image.path, grid_widget), r + 1, j + 1, Qt::AlignTop);
    }
    captions_ << captions;
  }
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(grid_widget);
  scroll->setWidgetResizable(true);
  layout->addWidget(scroll, 1);
  layout->addWidget(buttons);
  resize(std::min(1400, (columns + 1) * (kCaptionWidth + 16) + 60), 900);
}

NearestImagesDialog::~NearestImagesDialog() = default;

QString NearestImagesDialog::headerText() const { return header_->text(); }

}  // namespace streetgan::studio
