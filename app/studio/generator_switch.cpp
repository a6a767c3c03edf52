#include "app/studio/generator_switch.h"

namespace streetgan::studio {

GeneratorSwitch::GeneratorSwitch(QWidget* parent) : QComboBox(parent) {
  setObjectName("generator");
  addItems({"Moving average", "Raw G"});
  setToolTip("Which generator renders. Moving average (the default): G's exponential moving average, which "
             "checkpoints hold when the run set ema.half_life_images; a checkpoint without one renders with G "
             "itself. Raw G: the generator as it was trained at that step (streetgan --generator raw).");
}

GeneratorChoice GeneratorSwitch::choice() const {
  return currentIndex() == 1 ? GeneratorChoice::Raw : GeneratorChoice::Default;
}

void GeneratorSwitch::setChoice(GeneratorChoice choice) {
  setCurrentIndex(choice == GeneratorChoice::Raw ? 1 : 0);
}

QString GeneratorSwitch::describe(bool average) {
  return average ? QString("G's moving average (%1)").arg(generatorName(true))
                 : QString("the raw G (%1)").arg(generatorName(false));
}

}  // namespace streetgan::studio
