#pragma once
// The HTML page `streetgan serve` answers at `/`: one grid and one walk, and buttons that ask the
// server for new ones (each with a new seed, shown so a visitor can share it). Self-contained:
// no scripts or styles from elsewhere.
#include <string>

namespace streetgan::cli {

/// The page, with the model's description (already plain text) in its heading.
std::string galleryPage(const std::string& model_line);

}  // namespace streetgan::cli
