#include "core/config/train_config.h"
#include "tests/support/test_suite.h"

#include <QtTest>
#include <nlohmann/json.hpp>

using namespace streetgan;

class TestTrainConfig : public QObject {
  Q_OBJECT
private slots:
  void defaults();
  void parse_data();
  void parse();
  void presets_data();
  void presets();
  void modernPresetsHoldTheRecipe();
  void roundTrip();
  void everyKeyIsWrittenOut();
  void configFileErrors();
  void shippedConfigParses();
  void optionValue_data();
  void optionValue();
  void resumableKeys();
};

void TestTrainConfig::defaults() {
  const TrainConfig c;
  QCOMPARE(c.nc, 3);
  QCOMPARE(c.nz, 100);
  QCOMPARE(c.ngf, 64);
  QCOMPARE(c.ndf, 64);
  QCOMPARE(c.lr, 2e-4);
  QCOMPARE(c.beta1, 0.5);
  QCOMPARE(c.beta2, 0.999);
  QCOMPARE(c.batch_size, 128);
  QCOMPARE(c.img_size, 64);
  QCOMPARE(c.weight_decay, 0.05);
  QCOMPARE(c.augment.shift, 0.2);
  QCOMPARE(c.augment.crop_scale, 4.0);
  QCOMPARE(c.augment.noise_std, 0.05);
  QCOMPARE(c.cuda_graphs, false);
}

// scope: 0 all (config file), 1 training (-t), 2 checkpoint (-c).
// expected: empty = accepted; otherwise a piece of the message that must appear.
void TestTrainConfig::parse_data() {
  QTest::addColumn<QString>("json");
  QTest::addColumn<int>("scope");
  QTest::addColumn<QString>("expected");

  QTest::newRow("empty object") << "{}" << 0 << "";
  QTest::newRow("nc 3") << R"({"nc":3})" << 1 << "";
  QTest::newRow("nc 1") << R"({"nc":1})" << 1 << "";
  QTest::newRow("nc 2") << R"({"nc":2})" << 1 << "config key \"nc\": 2 is not allowed; allowed: 1 or 3";
  QTest::newRow("nz 256") << R"({"nz":256})" << 1 << "";
  // nlohmann throws out_of_range, not parse_error, for this (it aborted: fuzz_train_config).
  QTest::newRow("number past a double") << R"({"nz":1E400})" << 1 << "not valid JSON";
  // Printing such a value in the error message recursed 65,000 deep and overflowed the stack.
  QTest::newRow("arrays 65,000 deep") << QString(65000, '[') + QString(65000, ']') << 1 << "nests more than 32 levels deep";
  QTest::newRow("a key's value 100,000 deep") << R"({"nz":)" + QString(100000, '[') + QString(100000, ']') + "}" << 1
                                               << "nests more than 32 levels deep";
  QTest::newRow("brackets inside a string") << QString(R"({"dataroot":"%1"})").arg(QString(100, '[')) << 0 << "";
  QTest::newRow("nz 0") << R"({"nz":0})" << 1 << "config key \"nz\": 0 is not allowed; allowed: an integer from 1 to 4096";
  QTest::newRow("nz float") << R"({"nz":12.5})" << 1 << "\"nz\": 12.5 is not allowed";
  QTest::newRow("nz integral float") << R"({"nz":128.0})" << 1 << "";
  QTest::newRow("nz string") << R"({"nz":"100"})" << 1 << "\"nz\": \"100\" is not allowed";
  QTest::newRow("ngf 0") << R"({"ngf":0})" << 1 << "\"ngf\": 0 is not allowed";
  QTest::newRow("ndf negative") << R"({"ndf":-4})" << 1 << "\"ndf\": -4 is not allowed";
  QTest::newRow("cuda_graphs true") << R"({"cuda_graphs":true})" << 0 << "";
  QTest::newRow("cuda_graphs 1") << R"({"cuda_graphs":1})" << 0 << "config key \"cuda_graphs\": 1 is not allowed; allowed: true or false";
  QTest::newRow("cuda_graphs \"on\"") << R"({"cuda_graphs":"on"})" << 0 << "\"cuda_graphs\": \"on\" is not allowed; allowed: true or false";
  QTest::newRow("cuda_graphs in -t") << R"({"cuda_graphs":true})" << 1 << "config key \"cuda_graphs\" is not allowed here";
  QTest::newRow("lr ok") << R"({"lr":0.001})" << 1 << "";
  QTest::newRow("lr zero") << R"({"lr":0})" << 1 << "\"lr\": 0 is not allowed; allowed: a positive number";
  QTest::newRow("lr negative") << R"({"lr":-1e-4})" << 1 << "\"lr\": -0.0001 is not allowed";
  QTest::newRow("lr string") << R"({"lr":"fast"})" << 1 << "\"lr\": \"fast\" is not a number";
  QTest::newRow("lr null") << R"({"lr":null})" << 1 << "\"lr\": null is not a number";
  QTest::newRow("loss hinge") << R"({"loss":"hinge"})" << 1 << "";
  QTest::newRow("loss rpgan") << R"({"loss":"rpgan"})" << 0 << "";
  QTest::newRow("loss wgan") << R"({"loss":"wgan"})" << 0 << "config key \"loss\": \"wgan\" is not allowed; allowed: bce, hinge or rpgan";
  QTest::newRow("loss upper case") << R"({"loss":"BCE"})" << 0 << "\"loss\": \"BCE\" is not allowed";
  QTest::newRow("loss in -c") << R"({"loss":"bce"})" << 2 << "config key \"loss\" is not allowed here";
  QTest::newRow("lr_d ok") << R"({"lr_d":0.0004,"lr_g":0.0001})" << 1 << "";
  QTest::newRow("lr_d 0 (= lr)") << R"({"lr_d":0})" << 0 << "";
  QTest::newRow("lr_d negative") << R"({"lr_d":-0.001})" << 0
      << "config key \"lr_d\": -0.001 is not allowed; allowed: 0 (the same as lr) or a positive number below 10";
  QTest::newRow("lr_g 10") << R"({"lr_g":10})" << 0 << "\"lr_g\": 10 is not allowed";
  QTest::newRow("lr_g string") << R"({"lr_g":"fast"})" << 0 << "\"lr_g\": \"fast\" is not a number";
  QTest::newRow("r1 and r2") << R"({"r1_gamma":10,"r2_gamma":10,"reg_every":16})" << 1 << "";
  QTest::newRow("r1 negative") << R"({"r1_gamma":-1})" << 0
      << "config key \"r1_gamma\": -1 is not allowed; allowed: 0 (off) or a positive number below 1000000";
  QTest::newRow("r2 string") << R"({"r2_gamma":"10"})" << 0 << "\"r2_gamma\": \"10\" is not a number";
  QTest::newRow("reg_every 0") << R"({"reg_every":0})" << 0 << "\"reg_every\": 0 is not allowed; allowed: an integer from 1";
  QTest::newRow("lazy penalty with graphs (checkLaunchable's)") << R"({"r1_gamma":1,"reg_every":4,"cuda_graphs":true})" << 0 << "";
  QTest::newRow("penalty every step with graphs") << R"({"r1_gamma":1,"cuda_graphs":true})" << 0 << "";
  QTest::newRow("d_norm spectral") << R"({"d_norm":"spectral"})" << 1 << "";
  QTest::newRow("d_norm none") << R"({"d_norm":"none"})" << 0 << "";
  QTest::newRow("d_norm layer") << R"({"d_norm":"layer"})" << 0
      << "config key \"d_norm\": \"layer\" is not allowed; allowed: batchnorm, none or spectral";
  QTest::newRow("ema") << R"({"ema":{"half_life_images":10000,"rampup":0.05}})" << 1 << "";
  QTest::newRow("ema in a config file") << R"({"ema":{"half_life_images":500}})" << 0 << "";
  QTest::newRow("ema negative") << R"({"ema":{"half_life_images":-1}})" << 0
      << "config key \"ema.half_life_images\": -1 is not allowed; allowed: 0 (off) or a positive number of images below 10^12";
  QTest::newRow("ema not an object") << R"({"ema":10000})" << 0 << "config key \"ema\" must be a JSON object";
  QTest::newRow("ema unknown key") << R"({"ema":{"beta":0.999}})" << 0 << "unknown config key \"ema.beta\"";
  QTest::newRow("ema rampup string") << R"({"ema":{"rampup":"0.05"}})" << 0 << "\"ema.rampup\": \"0.05\" is not a number";
  QTest::newRow("ema in -c") << R"({"ema":{"rampup":0.05}})" << 2 << "config key \"ema.rampup\" is not allowed here";
  QTest::newRow("augment.diff, the paper's") << R"({"augment":{"diff":"color,translation,cutout"}})" << 1 << "";
  QTest::newRow("augment.diff off") << R"({"augment":{"diff":""}})" << 0 << "";
  QTest::newRow("augment.diff unknown policy") << R"({"augment":{"diff":"color,flip"}})" << 0
      << "config key \"augment.diff\": \"color,flip\" is not allowed; allowed: a comma-separated list of color, "
         "translation and cutout, each at most once, or \"\" for none";
  QTest::newRow("augment.diff twice") << R"({"augment":{"diff":"color,color"}})" << 0 << "\"augment.diff\": \"color,color\" is not allowed";
  QTest::newRow("augment.diff spaces") << R"({"augment":{"diff":"color, cutout"}})" << 0 << "\"augment.diff\": \"color, cutout\" is not allowed";
  QTest::newRow("augment.diff trailing comma") << R"({"augment":{"diff":"color,"}})" << 0 << "\"augment.diff\": \"color,\" is not allowed";
  QTest::newRow("augment.diff a list") << R"({"augment":{"diff":["color"]}})" << 0 << "\"augment.diff\": [\"color\"] is not allowed";
  QTest::newRow("ADA, the paper's") << R"({"augment":{"ada_target":0.6,"ada_kimg":500,"ada_ops":"bgc"}})" << 1 << "";
  QTest::newRow("ADA target 1") << R"({"augment":{"ada_target":1}})" << 0
      << "config key \"augment.ada_target\": 1 is not allowed; allowed: 0 (off) or a number in (0, 1)";
  QTest::newRow("ADA target negative") << R"({"augment":{"ada_target":-0.6}})" << 0 << "\"augment.ada_target\": -0.6 is not allowed";
  QTest::newRow("ADA kimg 0") << R"({"augment":{"ada_kimg":0}})" << 0
      << "config key \"augment.ada_kimg\": 0 is not allowed; allowed: a number of thousands of images from 0.001 to below "
         "1000000";
  QTest::newRow("ADA kimg tiny") << R"({"augment":{"ada_kimg":1e-310}})" << 0 << "\"augment.ada_kimg\": 1e-310 is not allowed";
  QTest::newRow("a key in two spellings") << R"({"augment":{"ada_p":0.9},"augment.ada_p":0.1})" << 0
      << "config key \"augment.ada_p\" is given twice";
  QTest::newRow("an unknown key of a group") << R"({"ema":{"halflife":10}})" << 0
      << "unknown config key \"ema.halflife\"; allowed: ema.half_life_images, ema.rampup";
  QTest::newRow("ADA at a fixed p") << R"({"augment":{"ada_p":0.3}})" << 1 << "";
  QTest::newRow("ADA p above 1") << R"({"augment":{"ada_p":1.5}})" << 0
      << "config key \"augment.ada_p\": 1.5 is not allowed; allowed: a number from 0 to 1";
  QTest::newRow("ADA ops unknown") << R"({"augment":{"ada_ops":"bgcfnc"}})" << 0
      << "config key \"augment.ada_ops\": \"bgcfnc\" is not allowed; allowed: blit, geom, color, bg or bgc";
  QTest::newRow("n_critic 5") << R"({"n_critic":5})" << 1 << "";
  QTest::newRow("n_critic 0") << R"({"n_critic":0})" << 0
      << "config key \"n_critic\": 0 is not allowed; allowed: an integer from 1 to 100";
  QTest::newRow("n_critic 101") << R"({"n_critic":101})" << 0 << "\"n_critic\": 101 is not allowed";
  QTest::newRow("beta1 0") << R"({"beta1":0})" << 1 << "";
  QTest::newRow("beta1 1") << R"({"beta1":1})" << 1 << "\"beta1\": 1 is not allowed; allowed: a number in [0, 1)";
  QTest::newRow("beta2 1.5") << R"({"beta2":1.5})" << 1 << "\"beta2\": 1.5 is not allowed";
  QTest::newRow("batch 1") << R"({"batch_size":1})" << 1 << "";
  QTest::newRow("batch 0") << R"({"batch_size":0})" << 1 << "\"batch_size\": 0 is not allowed; allowed: an integer from 1";
  QTest::newRow("batch negative") << R"({"batch_size":-8})" << 1 << "\"batch_size\": -8 is not allowed";
  QTest::newRow("img 64") << R"({"img_size":64})" << 1 << "";
  QTest::newRow("img 128") << R"({"img_size":128})" << 1 << "";
  QTest::newRow("img 96") << R"({"img_size":96})" << 1 << "config key \"img_size\": 96 is not allowed; allowed: 64 or 128";
  QTest::newRow("img 256") << R"({"img_size":256})" << 1 << "allowed: 64 or 128";
  QTest::newRow("weight decay 0") << R"({"weight_decay":0})" << 1 << "";
  QTest::newRow("weight decay 999") << R"({"weight_decay":999})" << 1 << "";
  QTest::newRow("weight decay 1000") << R"({"weight_decay":1000})" << 1
      << "\"weight_decay\": 1000 is not allowed; allowed: 0 or a positive number below 1000";
  QTest::newRow("weight decay negative") << R"({"weight_decay":-0.1})" << 1 << "\"weight_decay\": -0.1 is not allowed";
  QTest::newRow("augment ok") << R"({"augment":{"shift":0.1,"flip":true}})" << 1 << "";
  QTest::newRow("augment shift 1") << R"({"augment":{"shift":1.0}})" << 1 << "\"augment.shift\": 1.0 is not allowed";
  QTest::newRow("augment crop 0") << R"({"augment":{"crop_scale":0}})" << 1 << "\"augment.crop_scale\": 0 is not allowed";
  QTest::newRow("augment crop 64") << R"({"augment":{"crop_scale":64}})" << 1 << "";
  QTest::newRow("augment crop 64.5") << R"({"augment":{"crop_scale":64.5}})" << 1
      << "\"augment.crop_scale\": 64.5 is not allowed; allowed: a positive number up to 64";
  QTest::newRow("augment flip int") << R"({"augment":{"flip":1}})" << 1 << "\"augment.flip\": 1 is not allowed; allowed: true or false";
  QTest::newRow("augment unknown") << R"({"augment":{"blur":2}})" << 1 << "unknown config key \"augment.blur\"";
  QTest::newRow("augment not object") << R"({"augment":3})" << 1 << "config key \"augment\" must be a JSON object";
  QTest::newRow("name ok") << R"({"name":"street run 1"})" << 2 << "";
  QTest::newRow("name empty") << R"({"name":""})" << 2 << "\"name\": \"\" is not allowed";
  QTest::newRow("name slash") << R"({"name":"a/b"})" << 2 << "\"name\": \"a/b\" is not allowed";
  QTest::newRow("name dotdot") << R"({"name":".."})" << 2 << "\"name\": \"..\" is not allowed";
  QTest::newRow("root ok") << R"({"root":"/tmp/runs"})" << 2 << "";
  QTest::newRow("root empty") << R"({"root":""})" << 2 << "\"root\": \"\" is not allowed";
  QTest::newRow("log frequency 0") << R"({"log_frequency":0})" << 2 << "\"log_frequency\": 0 is not allowed";
  QTest::newRow("save frequency 2") << R"({"save_frequency":2})" << 2 << "";
  QTest::newRow("save frequency 0") << R"({"save_frequency":0})" << 2 << "\"save_frequency\": 0 is not allowed";
  QTest::newRow("keep 0") << R"({"keep_checkpoints":0})" << 2 << "\"keep_checkpoints\": 0 is not allowed";
  QTest::newRow("epochs 0") << R"({"epochs":0})" << 0 << "\"epochs\": 0 is not allowed";
  QTest::newRow("seed negative") << R"({"seed":-1})" << 0 << "\"seed\": -1 is not allowed";
  QTest::newRow("device cuda:1") << R"({"device":"cuda:1"})" << 0 << "";
  QTest::newRow("device gpu") << R"({"device":"gpu"})" << 0 << "\"device\": \"gpu\" is not allowed; allowed: auto, cpu, cuda, cuda:N or hpu";
  QTest::newRow("precision fp8") << R"({"precision":"fp8"})" << 0 << "\"precision\": \"fp8\" is not allowed";
  QTest::newRow("threads negative") << R"({"threads":-2})" << 0 << "\"threads\": -2 is not allowed";
  QTest::newRow("unknown key") << R"({"learning_rate":0.1})" << 0 << "unknown config key \"learning_rate\"; allowed: nc, nz";
  QTest::newRow("checkpoint key in -t") << R"({"name":"x"})" << 1 << "config key \"name\" is not allowed here; allowed: nc";
  QTest::newRow("training key in -c") << R"({"lr":0.1})" << 2 << "config key \"lr\" is not allowed here; allowed: name";
  QTest::newRow("grouped form") << R"({"training":{"lr":0.001},"checkpoint":{"name":"g"}})" << 0 << "";
  QTest::newRow("grouped wrong group") << R"({"training":{"name":"g"}})" << 0 << "\"name\" is not allowed here";
  // ConfigScope::Resume (3): only the keys a resumed run may change, bounds as everywhere.
  QTest::newRow("resume: epochs") << R"({"epochs":9})" << 3 << "";
  QTest::newRow("resume: data workers and cache") << R"({"data":{"workers":4,"cache":""}})" << 3 << "";
  QTest::newRow("resume: CUDA graphs") << R"({"cuda_graphs":true})" << 3 << "";
  QTest::newRow("resume: not the width")
      << R"({"ngf":8})" << 3
      << "config key \"ngf\" cannot change when a run resumes: its checkpoints hold what it trained with it (the "
         "networks and their step); to train with another ngf, start a new run (another --run-dir). A resume may change: "
         "lr, lr_d, lr_g, r1_gamma, r2_gamma, augment.diff, augment.ada_target, augment.ada_p, augment.ada_kimg, "
         "augment.ada_ops, dataroot, epochs, device, precision, threads, cuda_graphs, augment.shift, augment.crop_scale, "
         "augment.noise_std, augment.flip, augment.rotate_deg, augment.scale_jitter, data.workers, data.cache";
  QTest::newRow("resume: the learning rates and the augmentation")
      << R"({"lr_d":0.001,"r1_gamma":2,"augment":{"diff":"cutout","flip":true}})" << 3 << "";
  QTest::newRow("resume: not a data filter") << R"({"data":{"cities":["a"]}})" << 3 << "config key \"data.cities\" cannot change when a run resumes";
  QTest::newRow("resume: not the seed") << R"({"seed":1})" << 3 << "config key \"seed\" cannot change when a run resumes";
  QTest::newRow("resume: not D's normalisation") << R"({"d_norm":"spectral"})" << 3
      << "config key \"d_norm\" cannot change when a run resumes: its checkpoints hold what it trained with it (the "
         "networks and their step); to train with another d_norm, start a new run (another --run-dir)";
  QTest::newRow("resume: a structural key at the run's value") << R"({"d_norm":"batchnorm","ngf":64})" << 3 << "";
  QTest::newRow("resume: a key -t never takes, even at the run's value") << R"({"seed":0})" << 3
      << "config key \"seed\" cannot change when a run resumes";
  QTest::newRow("resume, the run unread: a training key at any value") << R"({"d_norm":"spectral","ngf":8})" << 4 << "";
  QTest::newRow("resume, the run unread: its bounds") << R"({"ngf":0})" << 4 << "\"ngf\": 0 is not allowed";
  QTest::newRow("resume, the run unread: not the seed") << R"({"seed":1})" << 4
      << "config key \"seed\" cannot change when a run resumes";
  QTest::newRow("resume: not the moving average") << R"({"ema":{"half_life_images":100}})" << 3
      << "config key \"ema.half_life_images\" cannot change when a run resumes";
  QTest::newRow("resume: the key's own bounds") << R"({"data":{"workers":5000}})" << 3
                                                << "\"data.workers\": 5000 is not allowed; allowed: an integer from 0 to 1024";
  QTest::newRow("array") << "[1,2]" << 0 << "the config must be a JSON object";
  QTest::newRow("not json") << "{nz: 3" << 1 << "not valid JSON";
}

void TestTrainConfig::parse() {
  QFETCH(QString, json);
  QFETCH(int, scope);
  QFETCH(QString, expected);
  const auto result = applyConfigText(TrainConfig{}, json.toStdString(),
                                      static_cast<ConfigScope>(scope), "test");
  if (expected.isEmpty()) {
    QVERIFY2(result.ok(), result.error().c_str());
  } else {
    QVERIFY(!result.ok());
    QVERIFY2(QString::fromStdString(result.error()).contains(expected),
             qPrintable("message was: " + QString::fromStdString(result.error())));
    QVERIFY(QString::fromStdString(result.error()).startsWith("test: "));
  }
}

void TestTrainConfig::presets_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<int>("nz");
  QTest::addColumn<int>("ngf");
  QTest::addColumn<int>("ndf");
  QTest::addColumn<int>("img");
  QTest::newRow("naive-64") << "naive-64" << 100 << 64 << 64 << 64;
  QTest::newRow("safe-64") << "safe-64" << 256 << 256 << 64 << 64;
  QTest::newRow("safe-128") << "safe-128" << 256 << 256 << 128 << 128;
  QTest::newRow("modern-64") << "modern-64" << 100 << 64 << 64 << 64;
  QTest::newRow("modern-128") << "modern-128" << 100 << 64 << 64 << 128;
}

// The modern presets are naive-64's networks with the recipe keys set; naive-64 keeps the 2016 recipe.
void TestTrainConfig::modernPresetsHoldTheRecipe() {
  const auto naive = presetConfig("naive-64");
  QVERIFY(naive.ok());
  const TrainConfig defaults;
  QCOMPARE(configToJson(*naive).dump(), [&] {
    TrainConfig expected = defaults;
    expected.preset = "naive-64";
    return configToJson(expected).dump();
  }());
  for (const char* name : {"modern-64", "modern-128"}) {
    const auto modern = presetConfig(name);
    QVERIFY(modern.ok());
    QCOMPARE(QString::fromStdString(modern->loss), QString("rpgan"));
    QCOMPARE(modern->batch_size, 32);
    QCOMPARE(modern->beta1, 0.0);
    QCOMPARE(modern->beta2, 0.99);
    QCOMPARE(modern->r1_gamma, 1.0);
    QCOMPARE(modern->r2_gamma, 1.0);
    QCOMPARE(modern->reg_every, 4);
    QCOMPARE(QString::fromStdString(modern->d_norm), QString("none"));
    QCOMPARE(modern->augment.ada_target, 0.6);
    QCOMPARE(modern->augment.ada_kimg, 100.0);
    QCOMPARE(modern->ema.half_life_images, 10000.0);
    QCOMPARE(modern->ema.rampup, 0.05);
    QVERIFY(validateConfig(*modern).ok());
  }
}

void TestTrainConfig::presets() {
  QFETCH(QString, name);
  QFETCH(int, nz);
  QFETCH(int, ngf);
  QFETCH(int, ndf);
  QFETCH(int, img);
  const auto config = presetConfig(name.toStdString());
  QVERIFY(config.ok());
  QCOMPARE(config->nz, nz);
  QCOMPARE(config->ngf, ngf);
  QCOMPARE(config->ndf, ndf);
  QCOMPARE(config->img_size, img);
  QCOMPARE(QString::fromStdString(config->preset), name);
  const auto unknown = presetConfig("huge-512");
  QVERIFY(!unknown.ok());
  QCOMPARE(QString::fromStdString(unknown.error()),
           QString("unknown preset \"huge-512\"; allowed: naive-64, safe-64, safe-128, demo, modern-64, modern-128"));
}

void TestTrainConfig::roundTrip() {
  auto config = applyConfigText(TrainConfig{},
                                R"({"nz":7,"lr":0.000123456789,"name":"r t","cuda_graphs":true,"augment":{"flip":true,"shift":0.13}})",
                                ConfigScope::All, "test");
  QVERIFY(config.ok());
  const auto json = configToJson(*config);
  const auto back = applyConfigJson(TrainConfig{}, json, ConfigScope::All, "test");
  QVERIFY2(back.ok(), back.error().c_str());
  QCOMPARE(configToJson(*back).dump(), json.dump());
  QCOMPARE(back->lr, 0.000123456789);
  QCOMPARE(back->augment.shift, 0.13);
  QVERIFY(back->augment.flip);
  QVERIFY(back->cuda_graphs);
}

void TestTrainConfig::everyKeyIsWrittenOut() {
  const auto json = configToJson(TrainConfig{});
  for (const auto& key : configKeyNames()) {
    const auto dot = key.find('.');
    if (dot == std::string::npos)
      QVERIFY2(json.contains(key), key.c_str());
    else
      QVERIFY2(json[key.substr(0, dot)].contains(key.substr(dot + 1)), key.c_str());
  }
}

void TestTrainConfig::configFileErrors() {
  const auto missing = applyConfigFile(TrainConfig{}, "/nonexistent/config.json");
  QVERIFY(!missing.ok());
  QCOMPARE(QString::fromStdString(missing.error()),
           QString("/nonexistent/config.json: cannot open the config file (No such file or directory)"));
  QTemporaryDir dir;
  const QString path = dir.filePath("bad.json");
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(R"({"img_size": 100})");
  file.close();
  const auto bad = applyConfigFile(TrainConfig{}, path.toStdString());
  QVERIFY(!bad.ok());
  QCOMPARE(QString::fromStdString(bad.error()),
           path + ": config key \"img_size\": 100 is not allowed; allowed: 64 or 128");
  // JSON, a NUL byte and anything after it: the junk was accepted unread.
  const QString nul = dir.filePath("nul.json");
  QFile nul_file(nul);
  QVERIFY(nul_file.open(QIODevice::WriteOnly));
  nul_file.write(QByteArray(R"({"nz": 64})") + QByteArray(1, '\0') + "{{{ not json");
  nul_file.close();
  const auto with_nul = applyConfigFile(TrainConfig{}, nul.toStdString());
  QVERIFY(!with_nul.ok());
  QCOMPARE(QString::fromStdString(with_nul.error()),
           nul + ": the config file holds a NUL byte at offset 10; it must be JSON text");
  // A key given twice was taken silently (the last one counted).
  const auto twice = applyConfigText(TrainConfig{}, R"({"nz": 16, "augment": {"flip": true}, "nz": 17})",
                                     ConfigScope::All, "-t");
  QVERIFY(!twice.ok());
  QCOMPARE(QString::fromStdString(twice.error()), QString("-t: the key \"nz\" is given twice in one object"));
  const auto nested = applyConfigText(TrainConfig{}, R"({"augment": {"flip": true, "flip": false}})", ConfigScope::All, "-t");
  QVERIFY(!nested.ok());
  QCOMPARE(QString::fromStdString(nested.error()), QString("-t: the key \"flip\" is given twice in one object"));
  // The same name in two objects is no repetition: the second "flip" is refused as an unknown
  // data key, not as a key given twice.
  const auto apart = applyConfigText(TrainConfig{}, R"({"augment": {"flip": true}, "data": {"flip": true}})", ConfigScope::All, "-t");
  QVERIFY(!apart.ok());
  QVERIFY2(!QString::fromStdString(apart.error()).contains("given twice"), apart.error().c_str());
  QVERIFY2(QString::fromStdString(apart.error()).contains("data.flip"), apart.error().c_str());
  // A folder named as the config file.
  const auto folder = applyConfigFile(TrainConfig{}, dir.path().toStdString());
  QCOMPARE(QString::fromStdString(folder.error()), dir.path() + ": cannot open the config file (a folder, not a regular file)");
}

// A key's value given as an option's text: read as the key's kind, checked against the key's row.
void TestTrainConfig::optionValue_data() {
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("text");
  QTest::addColumn<QString>("expected");  // the JSON value, or the error
  QTest::newRow("an integer") << "epochs" << "12" << "12";
  QTest::newRow("not an integer") << "epochs" << "zero"
                                  << "option '--opt': 'zero' is not allowed; allowed: an integer from 1 to 1000000";
  QTest::newRow("below the bound") << "epochs" << "0"
                                   << "option '--opt': '0' is not allowed; allowed: an integer from 1 to 1000000";
  QTest::newRow("above the bound") << "data.workers" << "1025"
                                   << "option '--opt': '1025' is not allowed; allowed: an integer from 0 to 1024";
  QTest::newRow("past int64") << "seed" << "99999999999999999999"
                              << "option '--opt': '99999999999999999999' is not allowed; allowed: an integer from 0 to "
                                 "9223372036854775807";
  QTest::newRow("a number") << "data.holdout_fraction" << "0.25" << "0.25";
  QTest::newRow("not a number") << "data.holdout_fraction" << "half" << "option '--opt': \"half\" is not a number";
  QTest::newRow("a number, checked with the config") << "data.holdout_fraction" << "1.5" << "1.5";
  QTest::newRow("text, checked with the config") << "device" << "tpu" << "\"tpu\"";
}

void TestTrainConfig::optionValue() {
  QFETCH(QString, key);
  QFETCH(QString, text);
  QFETCH(QString, expected);
  const auto value = configOptionValue(key.toStdString(), "--opt", text.toStdString());
  QCOMPARE(QString::fromStdString(value ? value->dump() : value.error()), expected);
}

void TestTrainConfig::resumableKeys() {
  for (const char* key : {"dataroot", "epochs", "device", "precision", "threads", "cuda_graphs", "data.cache", "data.workers"})
    QVERIFY2(configKeyMayChangeOnResume(key) && !configKeyTunedOnResume(key), key);
  // What it learns with from then on: the learning rates, the penalties, the augmentation (warned).
  for (const char* key : {"lr", "lr_d", "lr_g", "r1_gamma", "r2_gamma", "augment.flip", "augment.diff", "augment.ada_target"})
    QVERIFY2(configKeyMayChangeOnResume(key) && configKeyTunedOnResume(key), key);
  for (const char* key : {"nz", "batch_size", "seed", "loss", "d_norm", "reg_every", "n_critic", "ema.half_life_images",
                          "data.cities", "data.prefetch", "sync_batchnorm"})
    QVERIFY2(!configKeyMayChangeOnResume(key), key);
}

void TestTrainConfig::shippedConfigParses() {
  const auto config = applyConfigFile(TrainConfig{}, STREETGAN_SOURCE_DIR "/resources/configs/msls-safe-64.json");
  QVERIFY2(config.ok(), config.error().c_str());
  QCOMPARE(config->nz, 256);
  QCOMPARE(config->ngf, 256);
  QCOMPARE(QString::fromStdString(config->name), QString("msls-safe-64"));
}

STREETGAN_TEST_APPLESS_MAIN(TestTrainConfig)
#include "tst_train_config.moc"
