// The quality alarms: which figures raise which alarm, at the documented thresholds, and that the
// message says what happened with the figures and what to try.
#include "core/eval/quality_alarms.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <cmath>

using namespace streetgan;
namespace figure = streetgan::quality_figure;

class TestQualityAlarms : public QObject {
  Q_OBJECT
private slots:
  void fromEvaluation_data();
  void fromEvaluation();
  void fromRt_data();
  void fromRt();
  void fromRtSaysWhatAdaDoes();
};

void TestQualityAlarms::fromEvaluation_data() {
  QTest::addColumn<QString>("figures");  // name=value;...
  QTest::addColumn<QStringList>("kinds");
  QTest::addColumn<QString>("says");
  QTest::newRow("healthy") << "msssim_samples=0.30;msssim_train=0.28;ndb=10;ndb_fraction=0.1;copy_rate=0.01"
                           << QStringList{} << "";
  QTest::newRow("samples alike") << "msssim_samples=0.55;msssim_train=0.30" << QStringList{"collapse"}
                                 << "MS-SSIM 0.550 between samples, 0.300 between training images";
  QTest::newRow("within the margin") << "msssim_samples=0.39;msssim_train=0.30" << QStringList{} << "";
  QTest::newRow("NDB bins") << "ndb=62;ndb_fraction=0.62" << QStringList{"collapse"}
                            << "62 of the 100 k-means bins of the training images (62%)";
  QTest::newRow("samples crowd") << "spread_ratio=0.2" << QStringList{"collapse"}
                                 << "a sample lies 0.20 times as far from its nearest other sample";
  QTest::newRow("spread as varied") << "spread_ratio=0.8" << QStringList{} << "";
  QTest::newRow("copies") << "copy_rate=0.2" << QStringList{"memorisation"} << "20.0% of the samples";
  QTest::newRow("both") << "msssim_samples=0.9;msssim_train=0.3;copy_rate=1" << QStringList{"collapse", "memorisation"}
                        << "try";
  QTest::newRow("NaN figures raise nothing") << "msssim_samples=nan;msssim_train=0.3;copy_rate=nan" << QStringList{} << "";
}

void TestQualityAlarms::fromEvaluation() {
  QFETCH(QString, figures);
  QFETCH(QStringList, kinds);
  QFETCH(QString, says);
  QualityEvaluation evaluation;
  for (const QString& item : figures.split(';', Qt::SkipEmptyParts)) {
    const QStringList pair = item.split('=');
    evaluation.metrics[pair[0].toStdString()] = pair[1] == "nan" ? std::nan("") : pair[1].toDouble();
  }
  const auto alarms = QualityAlarms::fromEvaluation(evaluation, QualityAlarmThresholds{});
  QStringList got;
  for (const auto& alarm : alarms) got << QString::fromStdString(alarm.kind);
  QCOMPARE(got, kinds);
  for (const auto& alarm : alarms) {
    QVERIFY2(QString::fromStdString(alarm.message).contains(says), alarm.message.c_str());
    QVERIFY(QString::fromStdString(alarm.message).contains("try", Qt::CaseInsensitive));
    QVERIFY(!QString::fromStdString(alarm.message).contains('\n'));
  }
}

void TestQualityAlarms::fromRt_data() {
  QTest::addColumn<double>("mean");
  QTest::addColumn<bool>("raised");
  QTest::newRow("low") << 0.2 << false;
  QTest::newRow("at the level") << 0.6 << false;
  QTest::newRow("above") << 0.75 << true;
  QTest::newRow("NaN") << std::nan("") << false;
}

void TestQualityAlarms::fromRt() {
  QFETCH(double, mean);
  QFETCH(bool, raised);
  const auto alarm = QualityAlarms::fromRt(mean, 200, QualityAlarmThresholds{});
  QCOMPARE(alarm.has_value(), raised);
  if (alarm) {
    QCOMPARE(alarm->kind, std::string("overfitting"));
    QVERIFY2(QString::fromStdString(alarm->message).contains("r_t (the mean sign of D's output on training images) is 0.75 "
                                                             "over the last 200 steps, above 0.60"),
             alarm->message.c_str());
    QVERIFY2(QString::fromStdString(alarm->message).contains("Set augment.ada_target 0.6"), alarm->message.c_str());
  }
}

// With ADA the alarm says what it does; at a fixed p, which key lets it adapt.
void TestQualityAlarms::fromRtSaysWhatAdaDoes() {
  OverfittingRemedy ada;
  ada.ada = true;
  ada.target = 0.6;
  ada.p = 0.31;
  auto alarm = QualityAlarms::fromRt(0.8, 200, QualityAlarmThresholds{}, ada);
  QVERIFY(alarm);
  QCOMPARE(QString::fromStdString(alarm->message),
           QString("D is overfitting: r_t (the mean sign of D's output on training images) is 0.80 over the last 200 "
                   "steps, above 0.60; ADA raised p to 0.31 and raises it every 4 steps while r_t is above "
                   "augment.ada_target 0.60; if this persists, also set r1_gamma (an R1 penalty, 1 to 10) or d_norm "
                   "spectral"));
  OverfittingRemedy fixed_p;
  fixed_p.ada = true;
  fixed_p.p = fixed_p.start_p = 0.3;
  alarm = QualityAlarms::fromRt(0.8, 200, QualityAlarmThresholds{}, fixed_p);
  QVERIFY(alarm);
  QVERIFY2(QString::fromStdString(alarm->message).endsWith("above 0.60; augmentation runs at a fixed p 0.30 "
                                                           "(augment.ada_p); set augment.ada_target 0.6 to let ADA "
                                                           "raise it, or r1_gamma (an R1 penalty, 1 to 10)"),
           alarm->message.c_str());
}

STREETGAN_TEST_GUILESS_MAIN(TestQualityAlarms)
#include "tst_quality_alarms.moc"
