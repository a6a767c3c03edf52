// streetgan-studio: the desktop app. Everything lives in the studio library; this only starts it
// (and, for documentation, can save a screenshot of what it shows and quit).
#include "app/studio/dataset_tab.h"
#include "app/studio/explore_tab.h"
#include "app/studio/main_window.h"
#include "app/studio/studio_settings.h"
#include "app/studio/train_tab.h"

#include <QApplication>
#include <QIcon>
#include <QCommandLineParser>
#include <QDir>
#include <QSaveFile>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>

namespace {

int fail(const QString& message) {
  std::fprintf(stderr, "streetgan-studio: %s\n", qPrintable(message));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("StreetGAN");
  QApplication::setApplicationName("StreetGAN Studio");
  QApplication::setApplicationVersion(STREETGAN_VERSION);
  QApplication::setDesktopFileName("org.streetgan.Studio");
  QApplication::setWindowIcon(streetgan::studio::MainWindow::applicationIcon());
  QCommandLineParser parser;
  parser.setApplicationDescription("Train a DCGAN on street-level photographs and watch it learn.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOption({"dataroot", "Train on the images in <folder>.", "folder"});
  parser.addOption({"demo", "Start a demo run at once: the demo preset on the demo street scenes (rendered on "
                            "first use); a demo run still going is shown instead."});
  parser.addOption({"tab", "Open on <tab>: train, explore, dataset, evaluate or runs.", "tab"});
  parser.addOption({"checkpoint", "Explore <file> (opens the Explore tab).", "file"});
  parser.addOption({"walk", "With --checkpoint: load the walk <file> into the keyframes.", "file"});
  const QCommandLineOption dataset_option("dataset", "Browse <folder> in the Dataset tab.", "folder");
  parser.addOption(dataset_option);
  parser.addOption({"screenshot", "Save the window as a PNG <file> after --after seconds, then quit.", "file"});
  parser.addOption({"after", "Seconds before --screenshot (default 3).", "seconds", "3"});
  parser.addOption({"size", "Window size, as <width>x<height>.", "size"});
  parser.process(app);

  const QStringList tabs{"train", "explore", "dataset", "evaluate", "runs"};
  QString tab = parser.value("tab").toLower();
  if (!tab.isEmpty() && !tabs.contains(tab)) return fail("--tab: \"" + tab + "\" is not one of " + tabs.join(", "));
  bool seconds_ok = false;
  const double after = parser.value("after").toDouble(&seconds_ok);
  if (!seconds_ok || after < 0) return fail("--after: \"" + parser.value("after") + "\" is not a number of seconds");

  streetgan::studio::MainWindow window(streetgan::studio::findStreetganProgram());
  if (parser.isSet("size")) {
    const QStringList parts = parser.value("size").split('x');
    if (parts.size() != 2 || parts[0].toInt() <= 0 || parts[1].toInt() <= 0)
      return fail("--size: \"" + parser.value("size") + "\" is not <width>x<height>");
    window.resize(parts[0].toInt(), parts[1].toInt());
  }
  window.show();
  if (parser.isSet("dataroot")) {
    window.trainTab().setDataroot(QDir(parser.value("dataroot")).absolutePath());
  } else if (parser.isSet("demo")) {
    window.startDemo();
  }
  if (parser.isSet("checkpoint")) {
    auto& explore = window.exploreTab();
    if (parser.isSet("walk")) {
      const QString walk = parser.value("walk");
      QObject::connect(&explore, &streetgan::studio::ExploreTab::checkpointOpened, &explore,
                       [&explore, walk](bool ok) { if (ok) explore.loadWalk(walk); }, Qt::SingleShotConnection);
    }
    explore.openCheckpoint(QDir(parser.value("checkpoint")).absolutePath());
    if (tab.isEmpty()) tab = "explore";
  }
  if (parser.isSet(dataset_option)) {
    window.datasetTab().setRoot(QDir(parser.value(dataset_option)).absolutePath());
    if (tab.isEmpty()) tab = "dataset";
  }
  if (!tab.isEmpty()) window.tabs().setCurrentIndex(static_cast<int>(tabs.indexOf(tab)));
  if (parser.isSet("screenshot")) {
    const QString path = parser.value("screenshot");
    QTimer::singleShot(static_cast<int>(after * 1000), &window, [&window, path] {
      QSaveFile file(path);
      const bool saved = file.open(QIODevice::WriteOnly) && window.grab().save(&file, "PNG") && file.commit();
      if (!saved) std::fprintf(stderr, "streetgan-studio: cannot write %s: %s\n", qPrintable(path), qPrintable(file.errorString()));
      QApplication::exit(saved ? 0 : 1);
    });
  }
  return app.exec();
}
