// streetgan-studio: the desktop app. Everything lives in the studio library; this only starts it.
#include "main_window.h"
#include "studio_settings.h"
#include "train_tab.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("StreetGAN");
  QApplication::setApplicationName("StreetGAN Studio");
  QApplication::setApplicationVersion(STREETGAN_VERSION);
  QCommandLineParser parser;
  parser.setApplicationDescription("Train a DCGAN on street-level photographs and watch it learn.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOption({"dataroot", "Train on the images in <folder>.", "folder"});
  parser.addOption({"demo", "Train on the demo street scenes (rendered on first use)."});
  parser.process(app);

  streetgan::studio::MainWindow window(streetgan::studio::findStreetganProgram());
  window.show();
  if (parser.isSet("dataroot")) {
    window.trainTab().setDataroot(QDir(parser.value("dataroot")).absolutePath());
  } else if (parser.isSet("demo")) {
    window.trainTab().useDemoData(window.demoDataFolder());
  }
  return app.exec();
}
