#include "app/studio/export_walk_dialog.h"
#include "widgets/worker_pool.h"

#include <QComboBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::studio {

ExportWalkDialog::ExportWalkDialog(std::shared_ptr<LatentExplorer> explorer, WalkPlan plan, double fps, QWidget* parent)
    : QDialog(parent), explorer_(std::move(explorer)), plan_(std::move(plan)) {
  setWindowTitle("Export Walk");
  path_ = new QLineEdit(this);
  auto* browse = new QPushButton("Browse…", this);
  format_ = new QComboBox(this);
  format_->addItem("GIF", "gif");
  format_->addItem("MP4 (H.264)", "mp4");
  format_->addItem("WebM (VP9)", "webm");
  format_->addItem("PNG frames (a folder)", "png");
  format_->setCurrentIndex(1);
  long_side_ = new QSpinBox(this);
  long_side_->setRange(0, 8192);
  long_side_->setValue(512);
  long_side_->setSuffix(" px");
  long_side_->setSpecialValueText("the model's size");
  quality_ = new QSpinBox(this);
  quality_->setRange(-1, 63);
  quality_->setValue(-1);
  quality_->setSpecialValueText("the format's default");
  quality_->setToolTip("CRF, lower is better: H.264 0–51 (default 20), VP9 0–63 (default 32); GIF and PNG ignore it");
  filter_ = new QComboBox(this);
  filter_->addItem("Lanczos (smooth)", "lanczos");
  filter_->addItem("Nearest (sharp pixels)", "nearest");
  fps_ = new QDoubleSpinBox(this);
  fps_->setRange(0.1, 1000);
  fps_->setDecimals(3);
  fps_->setValue(fps);
  error_ = new QLabel(this);
  error_->setStyleSheet("color: #c0392b;");
  error_->setWordWrap(true);
  auto* path_row = new QHBoxLayout();
  path_row->addWidget(path_, 1);
  path_row->addWidget(browse);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  QPushButton* export_button = buttons->addButton("Export", QDialogButtonBox::AcceptRole);
  auto* form = new QFormLayout(this);
  form->addRow("Save to", path_row);
  form->addRow("Format", format_);
  form->addRow("Long side", long_side_);
  form->addRow("Upscaling", filter_);
  form->addRow("Quality", quality_);
  form->addRow("Frames per second", fps_);
  form->addRow(error_);
  form->addRow(buttons);

  connect(browse, &QPushButton::clicked, this, [this] {
    const QString format = format_->currentData().toString();
    const QString path = format == "png" ? QFileDialog::getExistingDirectory(this, "Folder for the PNG frames (empty)")
                                         : QFileDialog::getSaveFileName(this, "Export Walk", path_->text(),
                                                                        QString("%1 (*.%2)").arg(format_->currentText(), format));
    if (!path.isEmpty()) path_->setText(path);
  });
  connect(format_, &QComboBox::currentIndexChanged, this, [this] {
    // Keep the name, change the extension.
    const QString format = format_->currentData().toString();
    QFileInfo info(path_->text());
    if (path_->text().isEmpty() || format == "png") return;
    path_->setText(info.dir().filePath(info.completeBaseName() + "." + format));
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(export_button, &QPushButton::clicked, this, [this] {
    if (runExport()) accept();
  });
}

ExportWalkDialog::~ExportWalkDialog() = default;

void ExportWalkDialog::setPath(const QString& path) { path_->setText(path); }

void ExportWalkDialog::setFormat(const QString& format) {
  const int index = format_->findData(format);
  if (index >= 0) format_->setCurrentIndex(index);
}

void ExportWalkDialog::setLongSide(int pixels) { long_side_->setValue(pixels); }

VideoExportOptions ExportWalkDialog::options() const {
  VideoExportOptions options;
  options.format = *parseExportFormat(format_->currentData().toString().toStdString());
  options.fps = fps_->value();
  options.long_side = long_side_->value();
  options.scale_filter = *parseScaleFilter(filter_->currentData().toString().toStdString());
  options.crf = quality_->value();
  return options;
}

bool ExportWalkDialog::runExport() {
  error_->clear();
  const QString path = path_->text().trimmed();
  if (path.isEmpty()) {
    error_->setText("Choose where to save the walk.");
    return false;
  }
  const VideoExportOptions video = options();
  if (Status valid = validateExportOptions(video); !valid) {
    error_->setText(QString::fromStdString(valid.error()));
    return false;
  }
  cancelled_ = false;
  rendered_ = encoded_ = 0;
  total_ = explorer_->frameCount(plan_).ok() ? *explorer_->frameCount(plan_) : 0;
  progress_ = new QProgressDialog("Rendering and encoding the walk …", "Cancel", 0, 1000, this);
  progress_->setWindowModality(Qt::WindowModal);
  progress_->setMinimumDuration(0);
  progress_->setValue(0);
  connect(progress_, &QProgressDialog::canceled, this, [this] { cancelled_ = true; });
  QTimer poll;
  poll.setInterval(100);
  connect(&poll, &QTimer::timeout, this, [this] {
    if (progress_->wasCanceled()) cancelled_ = true;
    const double total = std::max<qint64>(1, total_);
    progress_->setValue(static_cast<int>(500 * (rendered_ + encoded_) / total));
    progress_->setLabelText(QString("Rendered %1 of %3 frames, encoded %2 …").arg(rendered_).arg(encoded_).arg(total_));
  });
  poll.start();
  QFutureWatcher<QString> watcher;
  QEventLoop loop;
  connect(&watcher, &QFutureWatcher<QString>::finished, &loop, &QEventLoop::quit);
  const auto explorer = explorer_;
  const WalkPlan plan = plan_;
  const std::string target = path.toStdString();
  watcher.setFuture(QtConcurrent::run(widgets::studioWorkers(), [this, explorer, plan, target, video] {
    Status done = explorer->exportWalk(plan, target, video, [this](const ExplorerExportProgress& p) {
      rendered_ = p.rendered;
      encoded_ = p.encoded;
      total_ = p.total;
      return !cancelled_.load();
    });
    return done ? QString() : QString::fromStdString(done.error());
  }));
  loop.exec();
  poll.stop();
  progress_->deleteLater();
  progress_ = nullptr;
  const QString error = watcher.result();
  if (!error.isEmpty()) {
    message_ = cancelled_ ? "Export cancelled; nothing was written to " + path + "." : error;
    error_->setText(message_);
    return false;
  }
  message_ = QString("Exported %1 frames to %2.").arg(total_).arg(path);
  if (offer_reveal_) {
    QMessageBox box(QMessageBox::Information, "Export Walk", message_, QMessageBox::Close, this);
    QPushButton* reveal = box.addButton("Reveal in Folder", QMessageBox::ActionRole);
    box.exec();
    if (box.clickedButton() == reveal)
      QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).isDir() ? path : QFileInfo(path).absolutePath()));
  }
  return true;
}

}  // namespace streetgan::studio
