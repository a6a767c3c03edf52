#include "app/studio/dataset_tab.h"

#include "widgets/augmentation_panel.h"
#include "widgets/config_form.h"
#include "widgets/dataset_picker.h"
#include "widgets/thumbnail_model.h"
#include "widgets/worker_pool.h"

#include <QAction>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QListView>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTreeWidget>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::studio {

namespace {

DatasetListing listDataset(const QString& root, const DatasetFilter& filter) {
  DatasetListing listing;
  listing.root = root;
  auto dataset = ImageDataset::open(root.toStdString(), filter, DatasetPart::Train);
  if (!dataset) {
    listing.status = makeError(dataset.error(), dataset.errorKind());
    return listing;
  }
  listing.msls = dataset->layout() == DatasetLayout::Msls;
  listing.paths.reserve(static_cast<qsizetype>(dataset->size()));
  for (const DatasetEntry& entry : dataset->entries()) {
    listing.paths.push_back(QString::fromStdString(entry.path));
    listing.groups.push_back(QString::fromStdString(entry.group));
    listing.sequences.push_back(QString::fromStdString(entry.sequence));
  }
  listing.counts = dataset->groupCounts();
  return listing;
}

}  // namespace

DatasetTab::DatasetTab(QWidget* parent) : QWidget(parent) {
  QWidget* left = buildFolderPane();
  buildGrid();
  QWidget* side = buildSidePane();
  auto* splitter = new QSplitter(this);
  splitter->addWidget(left);
  splitter->addWidget(grid_);
  splitter->addWidget(side);
  splitter->setStretchFactor(1, 2);
  splitter->setStretchFactor(2, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);
  connectViews();
}

// The folder picker, the Data keys of the config form and the tree of cities and sequences.
QWidget* DatasetTab::buildFolderPane() {
  picker_ = new widgets::DatasetPicker(this);
  filters_ = new widgets::ConfigForm();
  filters_->showOnlyGroups({"Data"});
  auto* filter_area = new QScrollArea(this);
  filter_area->setWidget(filters_);
  filter_area->setWidgetResizable(true);
  tree_ = new QTreeWidget(this);
  tree_->setHeaderLabels({"City / sequence", "Images"});
  tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(picker_);
  left_layout->addWidget(filter_area, 1);
  left_layout->addWidget(tree_, 2);
  return left;
}

// The thumbnails, laid out in batches.
void DatasetTab::buildGrid() {
  thumbnails_ = new widgets::ThumbnailModel(this);
  grid_ = new QListView(this);
  thumbnails_->showIn(*grid_);
  grid_->setSpacing(4);
}

// The selected image's variants, and the counts per city as a table and a chart.
QWidget* DatasetTab::buildSidePane() {
  counts_ = new QTableWidget(0, 3, this);
  counts_->setHorizontalHeaderLabels({"City / folder", "Images", "Sequences"});
  counts_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  counts_->verticalHeader()->hide();
  counts_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  counts_->setSortingEnabled(true);
  chart_ = new QChartView(new QChart(), this);
  chart_->chart()->setTitle("Images per city / folder");
  chart_->chart()->legend()->hide();
  augmentation_ = new widgets::AugmentationPanel(this);
  auto* side = new QTabWidget(this);
  side->addTab(augmentation_, "Selected Image");
  auto* counts_page = new QWidget(this);
  auto* counts_layout = new QVBoxLayout(counts_page);
  counts_layout->addWidget(counts_, 1);
  counts_layout->addWidget(chart_, 1);
  side->addTab(counts_page, "Counts");
  return side;
}

void DatasetTab::connectViews() {
  connect(picker_, &widgets::DatasetPicker::pathChosen, this, &DatasetTab::setRoot);
  connect(picker_, &widgets::DatasetPicker::counted, this, [this] { relist(); });
  connect(filters_, &widgets::ConfigForm::configChanged, this, [this] { picker_->setFilter(filters_->config().data.filter); });
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    if (!item) return;
    showGroup(item->data(0, Qt::UserRole).toString(), item->data(0, Qt::UserRole + 1).toString());
  });
  connect(grid_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
    if (current.isValid()) augmentation_->setImage(current.data(widgets::ThumbnailModel::PathRole).toString());
    find_in_latent_space_->setEnabled(current.isValid());
  });
  // Right-click on an image: find it in the latent space of the model open in Explore.
  find_in_latent_space_ = new QAction("Find in Latent Space…", grid_);
  find_in_latent_space_->setToolTip("Find the latent of the model open in Explore whose image is nearest this photograph");
  find_in_latent_space_->setEnabled(false);
  grid_->addAction(find_in_latent_space_);
  grid_->setContextMenuPolicy(Qt::ActionsContextMenu);
  connect(find_in_latent_space_, &QAction::triggered, this, [this] {
    const QModelIndex current = grid_->currentIndex();
    if (current.isValid()) emit findInLatentSpaceRequested(current.data(widgets::ThumbnailModel::PathRole).toString());
  });
  connect(augmentation_, &widgets::AugmentationPanel::settingsChosen, this, [this](const AugmentConfig& augment, int img_size) {
    QMap<QString, QString> keys;
    for (const QString& key : filters_->keys())
      if (key.startsWith("data.")) keys[key] = filters_->fieldText(key);
    keys["augment.shift"] = QString::number(augment.shift);
    keys["augment.crop_scale"] = QString::number(augment.crop_scale);
    keys["augment.noise_std"] = QString::number(augment.noise_std);
    keys["augment.rotate_deg"] = QString::number(augment.rotate_deg);
    keys["augment.scale_jitter"] = QString::number(augment.scale_jitter);
    keys["augment.flip"] = augment.flip ? "true" : "false";
    keys["img_size"] = QString::number(img_size);
    emit settingsForTraining(root(), keys);
  });
  connect(&lister_, &QFutureWatcher<DatasetListing>::finished, this, [this] {
    if (std::exchange(pending_, false)) {
      relist();
      return;
    }
    listing_ = lister_.result();
    showListing();
  });
}

DatasetTab::~DatasetTab() { lister_.waitForFinished(); }

QString DatasetTab::root() const { return picker_->path(); }

void DatasetTab::setRoot(const QString& root) {
  if (picker_->path() != root) picker_->setPath(root);
  filters_->enterText("dataroot", root);
}

void DatasetTab::relist() {
  // Listed after the picker has counted (so a bad folder is said once, beside the field).
  if (!picker_->lastCount().ok) {
    thumbnails_->setPaths({});
    tree_->clear();
    counts_->setRowCount(0);
    emit listed(picker_->lastCount().text);
    return;
  }
  if (lister_.isRunning()) {
    pending_ = true;
    return;
  }
  lister_.setFuture(QtConcurrent::run(widgets::studioWorkers(), &listDataset, picker_->path().trimmed(), filters_->config().data.filter));
}

void DatasetTab::showListing() {
  tree_->clear();
  counts_->setSortingEnabled(false);
  counts_->setRowCount(0);
  chart_->chart()->removeAllSeries();
  for (QAbstractAxis* axis : chart_->chart()->axes()) chart_->chart()->removeAxis(axis);
  if (!listing_.status) {
    thumbnails_->setPaths({});
    emit listed(errorText(listing_.status));
    return;
  }
  thumbnails_->setPaths(listing_.paths);
  // The tree: every image at the top, then cities (folders) and, for MSLS, their sequences.
  auto* all = new QTreeWidgetItem(tree_, {"Every image", QString::number(listing_.paths.size())});
  QMap<QString, QTreeWidgetItem*> groups;
  QMap<QPair<QString, QString>, int> sequences;
  for (qsizetype i = 0; i < listing_.paths.size(); ++i) {
    if (listing_.msls && !listing_.sequences[i].isEmpty()) ++sequences[{listing_.groups[i], listing_.sequences[i]}];
  }
  for (const GroupCount& count : listing_.counts) {
    const QString name = QString::fromStdString(count.group);
    auto* item = new QTreeWidgetItem(tree_, {name, QString::number(count.images)});
    item->setData(0, Qt::UserRole, name);
    groups[name] = item;
  }
  for (auto it = sequences.begin(); it != sequences.end(); ++it) {
    auto* item = new QTreeWidgetItem(groups.value(it.key().first), {it.key().second, QString::number(it.value())});
    item->setData(0, Qt::UserRole, it.key().first);
    item->setData(0, Qt::UserRole + 1, it.key().second);
  }
  tree_->setCurrentItem(all);
  if (thumbnails_->rowCount() > 0 && augmentation_->imagePath().isEmpty()) grid_->setCurrentIndex(thumbnails_->index(0));
  // Counts: a table and a bar chart.
  auto* bars = new QBarSet("images");
  QStringList names;
  counts_->setRowCount(static_cast<int>(listing_.counts.size()));
  for (std::size_t row = 0; row < listing_.counts.size(); ++row) {
    const GroupCount& count = listing_.counts[row];
    const QString name = QString::fromStdString(count.group);
    counts_->setItem(static_cast<int>(row), 0, new QTableWidgetItem(name));
    auto* images = new QTableWidgetItem();
    images->setData(Qt::DisplayRole, qlonglong(count.images));
    counts_->setItem(static_cast<int>(row), 1, images);
    auto* seqs = new QTableWidgetItem();
    seqs->setData(Qt::DisplayRole, qlonglong(count.sequences));
    counts_->setItem(static_cast<int>(row), 2, seqs);
    *bars << static_cast<double>(count.images);
    names << name;
  }
  counts_->setSortingEnabled(true);
  auto* series = new QHorizontalBarSeries();
  series->append(bars);
  chart_->chart()->addSeries(series);
  auto* categories = new QBarCategoryAxis();
  categories->append(names);
  auto* values = new QValueAxis();
  values->setLabelFormat("%d");
  chart_->chart()->addAxis(categories, Qt::AlignLeft);
  chart_->chart()->addAxis(values, Qt::AlignBottom);
  series->attachAxis(categories);
  series->attachAxis(values);
  emit listed(QString());
}

void DatasetTab::showGroup(const QString& group, const QString& sequence) {
  if (group.isEmpty()) {
    thumbnails_->setPaths(listing_.paths);
    return;
  }
  QStringList paths;
  for (qsizetype i = 0; i < listing_.paths.size(); ++i)
    if (listing_.groups[i] == group && (sequence.isEmpty() || listing_.sequences[i] == sequence)) paths << listing_.paths[i];
  thumbnails_->setPaths(paths);
}

}  // namespace streetgan::studio
