#pragma once
// CheckpointFileDialog: the studio's Open File… for a checkpoint. It takes what `--checkpoint`
// takes (core/runs/checkpoint_reference.h): a .pt file, a run folder (chosen as a whole: Open on a
// run folder opens it instead of entering it), or a typed RUN@STEP / RUN@latest. The text chosen
// is returned as it is; ExploreTab::openCheckpoint resolves it and says which file it opened.
#include <QFileDialog>

namespace streetgan::studio {

class CheckpointFileDialog : public QFileDialog {
  Q_OBJECT
public:
  CheckpointFileDialog(QWidget* parent, const QString& folder);

  /// The path or reference chosen; empty before the dialog is accepted.
  QString chosen() const { return chosen_; }

public slots:
  void accept() override;

private:
  QString chosen_;
};

}  // namespace streetgan::studio
