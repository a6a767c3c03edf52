#pragma once
// DatasetTab: browse a data set before training on it. Choose a root (DatasetPicker: layout and
// live counts) and the data-pipeline filters (the config form's Data keys); the images left are
// listed on a worker: a tree by city and sequence (MSLS) or by folder, a thumbnail grid decoded
// lazily on workers (ThumbnailModel), and the images per city as a table and a bar chart.
// Selecting an image shows it as training sees it (AugmentationPanel), whose settings can go to
// the Train tab together with the folder and filters.
#include "app/studio/control/status_text.h"
#include "core/data/image_dataset.h"

#include <QFutureWatcher>
#include <QMap>
#include <QStringList>
#include <QWidget>

class QAction;
class QListView;
class QTableWidget;
class QTreeWidget;
class QChartView;

namespace streetgan::widgets {
class AugmentationPanel;
class ConfigForm;
class DatasetPicker;
class ThumbnailModel;
}  // namespace streetgan::widgets

namespace streetgan::studio {

/// A data set listed on a worker: its images after the filters, or why it could not be.
struct DatasetListing {
  QString root;
  Status status;  // why the folder could not be listed
  bool msls = false;
  QStringList paths, groups, sequences;  // per image
  std::vector<GroupCount> counts;
};

class DatasetTab : public QWidget {
  Q_OBJECT
public:
  explicit DatasetTab(QWidget* parent = nullptr);
  ~DatasetTab() override;

  void setRoot(const QString& root);
  QString root() const;
  bool isListing() const { return lister_.isRunning() || pending_; }
  widgets::DatasetPicker& picker() { return *picker_; }
  widgets::ConfigForm& filters() { return *filters_; }
  widgets::ThumbnailModel& thumbnails() { return *thumbnails_; }
  QListView& grid() { return *grid_; }
  QTreeWidget& tree() { return *tree_; }
  QTableWidget& counts() { return *counts_; }
  widgets::AugmentationPanel& augmentation() { return *augmentation_; }
  /// Shows only the images of tree item (group, sequence); empty strings: every image.
  void showGroup(const QString& group, const QString& sequence = {});
  int listedImages() const { return static_cast<int>(listing_.paths.size()); }

signals:
  /// A listing finished (error empty when it worked).
  void listed(const QString& error);
  /// "Use These Settings": the folder, and config keys with their text (the filters, the
  /// augmentation, img_size), for the Train tab's form.
  void settingsForTraining(const QString& root, const QMap<QString, QString>& keys);
  /// "Find in Latent Space…" on an image: its path, for the Explore tab.
  void findInLatentSpaceRequested(const QString& path);

private:
  // The constructor's steps.
  QWidget* buildFolderPane();
  void buildGrid();
  QWidget* buildSidePane();
  void connectViews();

  void relist();
  void showListing();

  widgets::DatasetPicker* picker_ = nullptr;
  widgets::ConfigForm* filters_ = nullptr;
  QTreeWidget* tree_ = nullptr;
  QListView* grid_ = nullptr;
  widgets::ThumbnailModel* thumbnails_ = nullptr;
  QTableWidget* counts_ = nullptr;
  QChartView* chart_ = nullptr;
  widgets::AugmentationPanel* augmentation_ = nullptr;
  QAction* find_in_latent_space_ = nullptr;
  DatasetListing listing_;
  QFutureWatcher<DatasetListing> lister_;
  bool pending_ = false;
};

}  // namespace streetgan::studio
