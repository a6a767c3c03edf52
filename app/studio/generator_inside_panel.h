#pragma once
// GeneratorInsidePanel: "Inside the generator" for one sample of the Explore page
// (docs/explore.md). Each block of G as a grid of its channels for the sample (ChannelGridView,
// sorted by mean activation), that block's BatchNorm running statistics beside the batch's (the
// sample rendered with its page), and the discriminator's score of the sample. Clicking a
// channel switches it off (set to zero in the sample) and renders the sample again, so a user
// sees what a unit draws (GAN Dissection's ablation). Save PNG… writes the block's grid with the
// sample beside it. Renders run on a worker; a request made meanwhile replaces the waiting one.
#include "core/latent/latent_explorer.h"

#include <QFutureWatcher>
#include <QImage>
#include <QSet>
#include <QWidget>

#include <map>
#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace streetgan::studio {

class ChannelGridView;

class GeneratorInsidePanel : public QWidget {
  Q_OBJECT
public:
  explicit GeneratorInsidePanel(QWidget* parent = nullptr);
  ~GeneratorInsidePanel() override;

  void setExplorer(std::shared_ptr<LatentExplorer> explorer);
  /// Looks inside for `latent` (named `label`, e.g. "seed 12"), rendered with `page` after it;
  /// clears the ablations.
  void setSample(const Latent& latent, const std::vector<Latent>& page, const QString& label);
  void setBlock(int block);
  int block() const;
  /// Switches channel `channel` of the shown block off, or on again, and renders again.
  void toggleChannel(int channel);
  void clearAblations();
  bool isRendering() const { return watcher_.isRunning() || pending_; }
  const std::optional<GeneratorInside>& inside() const { return inside_; }
  QImage sampleImage() const { return sample_image_; }
  /// The block's channel grid with the sample beside it, as Save PNG… writes it.
  QImage pngImage() const;
  bool savePng(const QString& path);
  QString statusText() const;
  ChannelGridView& grid() { return *grid_; }
  QTableWidget& statistics() { return *table_; }

private:
  void render();
  void showResult();
  void showBlock();
  void setStatus(const QString& text, bool error = false);

  std::shared_ptr<LatentExplorer> explorer_;
  Latent latent_;
  std::vector<Latent> page_;
  QString label_;
  std::vector<ChannelAblation> ablated_;
  std::map<int, std::vector<int>> orders_;  // per block: channels in display order
  std::optional<GeneratorInside> inside_;
  QImage sample_image_;
  QComboBox* block_ = nullptr;
  ChannelGridView* grid_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel *sample_ = nullptr, *score_ = nullptr, *status_ = nullptr;
  QPushButton *clear_ = nullptr, *save_ = nullptr;
  QFutureWatcher<Result<GeneratorInside>> watcher_;  // inside() run on a worker, or why it failed
  bool pending_ = false;  // a request waits for the running render
};

}  // namespace streetgan::studio
