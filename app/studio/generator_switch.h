#pragma once
// GeneratorSwitch: Explore's choice of which of a checkpoint's generators renders (the studio's
// `--generator ema|raw`): G's moving average when the checkpoint holds one, or G itself.
#include "core/train/generator_choice.h"

#include <QComboBox>

namespace streetgan::studio {

class GeneratorSwitch : public QComboBox {
  Q_OBJECT
public:
  explicit GeneratorSwitch(QWidget* parent = nullptr);
  /// Default for "Moving average" (G itself when the checkpoint holds none), Raw for "Raw G".
  GeneratorChoice choice() const;
  void setChoice(GeneratorChoice choice);
  /// The status line's words for the generator an explorer renders with.
  static QString describe(bool average);
};

}  // namespace streetgan::studio
