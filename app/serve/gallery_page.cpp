#include "app/serve/gallery_page.h"

namespace streetgan::cli {
namespace {

std::string escapeHtml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* kPage = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>StreetGAN gallery</title>
<style>
  body { font-family: sans-serif; margin: 1.5em; background: #f4f4f2; color: #222; }
  h1 { font-size: 1.4em; margin-bottom: 0.2em; }
  .model { color: #555; margin-top: 0; }
  .panels { display: flex; flex-wrap: wrap; gap: 2em; }
  figure { margin: 0; }
  figure img { display: block; background: #ddd; image-rendering: pixelated; min-width: 256px; min-height: 256px; }
  figcaption { margin: 0.5em 0; color: #444; }
  button { font-size: 1em; padding: 0.3em 0.9em; }
</style>
</head>
<body>
<h1>StreetGAN gallery</h1>
<p class="model">@MODEL@</p>
<div class="panels">
  <figure>
    <img id="grid" alt="A grid of 16 generated street scenes" width="512">
    <figcaption><button id="new-grid">New grid</button> <span id="grid-caption">loading …</span></figcaption>
  </figure>
  <figure>
    <img id="walk" alt="A walk through the latent space, as a looping GIF" width="384">
    <figcaption><button id="new-walk">New walk</button> <span id="walk-caption">loading …</span></figcaption>
  </figure>
</div>
<script>
function randomSeed() { return Math.floor(Math.random() * 1000000000); }
function show(id, url, caption) {
  const img = document.getElementById(id);
  const text = document.getElementById(id + '-caption');
  img.removeAttribute('data-loaded');
  text.textContent = 'loading …';
  img.onload = function () { img.setAttribute('data-loaded', 'yes'); text.textContent = caption; };
  img.onerror = function () { img.setAttribute('data-loaded', 'failed'); text.textContent = 'the server could not make it (busy? try again)'; };
  img.src = url;
}
function newGrid() { const s = randomSeed(); show('grid', '/gan_imgs?n=16&seed=' + s, 'seed ' + s); }
function newWalk() { const s = randomSeed(); show('walk', '/gan_gifs?frames=16&size=192&seed=' + s, 'seeds ' + s + ' to ' + (s + 3)); }
document.getElementById('new-grid').onclick = newGrid;
document.getElementById('new-walk').onclick = newWalk;
newGrid();
newWalk();
</script>
</body>
</html>
)HTML";

}  // namespace

std::string galleryPage(const std::string& model_line) {
  std::string page = kPage;
  const std::string marker = "@MODEL@";
  page.replace(page.find(marker), marker.size(), escapeHtml(model_line));
  return page;
}

}  // namespace streetgan::cli
