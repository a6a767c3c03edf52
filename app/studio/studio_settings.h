#pragma once
// StudioSettings: the studio's preferences (runs root, default device, processes, CPU threads) kept with
// QSettings, and where the `streetgan` program is found.
#include <QString>

namespace streetgan::studio {

struct StudioSettings {
  QString runs_root;            ///< default: ~/StreetGAN/runs
  QString device = "auto";      ///< auto, cpu, cuda, cuda:N or hpu
  int processes = 1;            ///< ranks of local runs (`streetgan train --nproc`); 1 = one process
  int threads = 0;              ///< 0 = every core
  double cost_per_hour = 0;     ///< what an hour of this computer costs, in dollars; 0: not known

  static StudioSettings load();
  void save() const;
};

/// The `streetgan` program: $STREETGAN_CLI, else beside the studio, else ../cli/streetgan (the
/// build tree), else "streetgan" from PATH.
QString findStreetganProgram();

}  // namespace streetgan::studio
