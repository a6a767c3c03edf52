#pragma once
// A folder inside a run folder that a run writes into (checkpoints/, samples/, evaluations/,
// tensorboard/, directions/): never a symbolic link, whose target would receive the run's files
// (and lose files to its pruning). One rule and one message for every writer.
#include "core/util/result.h"

#include <string>

namespace streetgan {

/// An Error naming `path` when it is a symbolic link ("PATH: a symbolic link; a run writes only
/// into folders of its own"); nothing when it is anything else or absent.
Status refuseLinkedFolder(const std::string& path);
/// `path` made when missing (with its parents), after refuseLinkedFolder(); an Error naming it
/// when it cannot be made or is not a folder.
Status makeOwnFolder(const std::string& path);

}  // namespace streetgan
