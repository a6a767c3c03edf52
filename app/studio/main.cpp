// streetgan-studio: the desktop app. Everything lives in the studio library; this only starts it.
#include "main_window.h"
#include "studio_settings.h"

#include <QApplication>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("StreetGAN");
  QApplication::setApplicationName("StreetGAN Studio");
  QApplication::setApplicationVersion(STREETGAN_VERSION);
  streetgan::studio::MainWindow window(streetgan::studio::findStreetganProgram());
  window.show();
  return app.exec();
}
