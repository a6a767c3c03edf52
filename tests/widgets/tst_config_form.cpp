// ConfigForm offscreen: a field for every config key, values applied through core's rules with the
// rejection shown beside the field (a table of good and bad entries), presets filling the form;
// a screenshot of the form is saved for a person to look at.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "widgets/config_form.h"

#include <QLabel>
#include <QScrollArea>
#include <QSignalSpy>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace streetgan;
using namespace streetgan::widgets;

class TestConfigForm : public QObject {
  Q_OBJECT
private slots:
  void everyKeyHasAField();
  void everyRowSaysWhatIsAllowed();
  void entries_data();
  void entries();
  void rejectedValueKeepsTheLastGoodOne();
  void presetFillsTheForm();
  void screenshot();
};

void TestConfigForm::everyKeyHasAField() {
  ConfigForm form;
  QStringList expected;
  for (const std::string& key : configKeyNames()) expected << QString::fromStdString(key);
  expected.sort();
  QStringList keys = form.keys();
  keys.sort();
  QCOMPARE(keys, expected);
  QVERIFY(form.isValid());
  QCOMPARE(form.fieldText("img_size"), QString("64"));
  QCOMPARE(form.fieldText("augment.shift"), QString("0.2"));
  QCOMPARE(form.fieldText("augment.flip"), QString("false"));
}

// Each row's tooltip: the key and its allowed values, in the words of its error messages.
void TestConfigForm::everyRowSaysWhatIsAllowed() {
  ConfigForm form;
  for (const std::string& name : configKeyNames()) {
    auto* field = form.findChild<QWidget*>(QString::fromStdString(name));
    QVERIFY2(field && field->parentWidget(), name.c_str());
    const QString tip = field->parentWidget()->toolTip();
    QVERIFY2(tip.startsWith(QString::fromStdString(name) + ": ") && tip.size() > int(name.size()) + 4, qPrintable(tip));
  }
  QCOMPARE(form.findChild<QWidget*>("loss")->parentWidget()->toolTip(), QString("loss: bce, hinge or rpgan"));
  QCOMPARE(form.findChild<QWidget*>("nz")->parentWidget()->toolTip(), QString("nz: an integer from 1 to 4096"));
  QCOMPARE(form.findChild<QWidget*>("lr_d")->parentWidget()->toolTip(),
           QString("lr_d: 0 (the same as lr) or a positive number below 10"));
}

void TestConfigForm::entries_data() {
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("text");
  QTest::addColumn<QString>("error");  // empty: accepted
  QTest::addColumn<QString>("stored");  // the key's value in configToJson afterwards, as JSON
  QTest::newRow("img_size 128") << "img_size" << "128" << "" << "128";
  QTest::newRow("img_size 96") << "img_size" << "96" << "96 is not allowed; allowed: 64 or 128" << "64";
  QTest::newRow("batch 0") << "batch_size" << "0" << "0 is not allowed" << "128";
  QTest::newRow("batch 1.5") << "batch_size" << "1.5" << "1.5 is not allowed" << "128";
  QTest::newRow("batch words") << "batch_size" << "many" << "\"many\" is not allowed" << "128";
  QTest::newRow("lr") << "lr" << "1e-4" << "" << "0.0001";
  QTest::newRow("lr negative") << "lr" << "-1" << "allowed" << "0.0002";
  QTest::newRow("lr text") << "lr" << "fast" << "is not a number" << "0.0002";
  QTest::newRow("nested number") << "augment.shift" << "0.3" << "" << "0.3";
  QTest::newRow("flag") << "augment.flip" << "true" << "" << "true";
  QTest::newRow("device") << "device" << "cpu" << "" << "\"cpu\"";
  QTest::newRow("device bad") << "device" << "tpu" << "\"tpu\" is not allowed" << "\"auto\"";
  QTest::newRow("cities list") << "data.cities" << "boston, melbourne ,," << "" << "[\"boston\",\"melbourne\"]";
  QTest::newRow("sigmas") << "parzen.sigmas" << "0.1, 0.2" << "" << "[0.1,0.2]";
  QTest::newRow("sigmas bad") << "parzen.sigmas" << "0.1, wide" << "\"wide\" is not a number" << "[]";
  QTest::newRow("time of day") << "data.time_of_day" << "dusk" << "\"dusk\" is not allowed" << "\"all\"";
}

void TestConfigForm::entries() {
  QFETCH(QString, key);
  QFETCH(QString, text);
  QFETCH(QString, error);
  QFETCH(QString, stored);
  ConfigForm form;
  QSignalSpy validity(&form, &ConfigForm::validityChanged);
  form.enterText(key, text);
  if (error.isEmpty()) {
    QVERIFY2(form.isValid(), qPrintable(form.fieldError(key)));
    QVERIFY(validity.isEmpty());
  } else {
    QVERIFY(!form.isValid());
    QVERIFY2(form.fieldError(key).contains(error), qPrintable(form.fieldError(key)));
    QCOMPARE(validity.size(), 1);
    QCOMPARE(form.fieldText(key), text);  // the rejected text stays for the user to fix
    auto* label = form.findChild<QWidget*>(key)->parentWidget()->findChild<QLabel*>();
    QVERIFY(label && label->text() == form.fieldError(key));
  }
  const nlohmann::json json = configToJson(form.config());
  const nlohmann::json value = json.at(nlohmann::json::json_pointer(("/" + QString(key).replace('.', '/')).toStdString()));
  QCOMPARE(QString::fromStdString(value.dump()), stored);
}

void TestConfigForm::rejectedValueKeepsTheLastGoodOne() {
  ConfigForm form;
  form.enterText("ngf", "32");
  form.enterText("ngf", "-3");
  QVERIFY(!form.isValid());
  QCOMPARE(form.config().ngf, 32);
  form.enterText("ngf", "48");
  QVERIFY(form.isValid());
  QCOMPARE(form.config().ngf, 48);
  QVERIFY(form.fieldError("ngf").isEmpty());
}

void TestConfigForm::presetFillsTheForm() {
  ConfigForm form;
  form.enterText("img_size", "96");
  auto preset = presetConfig("safe-128");
  QVERIFY(preset.ok());
  QSignalSpy validity(&form, &ConfigForm::validityChanged);
  form.setConfig(*preset);
  QVERIFY(form.isValid());
  QCOMPARE(validity.size(), 1);
  QCOMPARE(form.fieldText("img_size"), QString("128"));
  QCOMPARE(form.fieldText("preset"), QString("safe-128"));
  QCOMPARE(configToJson(form.config()), configToJson(*preset));
}

void TestConfigForm::screenshot() {
  QScrollArea area;
  auto* form = new ConfigForm();
  area.setWidget(form);
  area.setWidgetResizable(true);
  form->enterText("img_size", "96");
  form->enterText("data.cities", "boston");
  area.resize(760, 1400);
  area.show();
  QVERIFY(QTest::qWaitForWindowExposed(&area));
  const QString path = test::testOutputDir() + "/config-form.png";
  QVERIFY(area.grab().save(path));
  qInfo("screenshot: %s", qPrintable(path));
}

STREETGAN_TEST_MAIN(TestConfigForm)
#include "tst_config_form.moc"
