#include "app/cli/model_command_lines.h"

#include "app/serve/site_publisher.h"
#include "core/eval/features_worker_options.h"

#include <string>
#include <vector>

namespace streetgan::cli {

// Every core, and the CPU unless --device says otherwise: sample takes no --threads.
ModelOptionsUse sampleModelUse() {
  ModelOptionsUse use;
  use.threads = false;
  return use;
}

CommandLine sampleCommandLine() {
  const ModelOptionsUse use = sampleModelUse();
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      generatorOptionSpec(),
      {"--out", "FILE", "PNG file to write (a grid); FILE.npy: the images as float32 (N, C, H, W) in [-1, 1]"},
      {"--n", "N", "number of images (default 64, at most " + std::to_string(kSampleMaxImages) + ")"},
      {"--latents", "FILE.npy",
       "one image per latent of a float32 (N, nz) NumPy file, at most " + std::to_string(kSampleMaxImages) +
           " (instead of --n and --seed)"},
      {"--seed", "N", "latent seed (default 0)"},
      {"--seeds", "A,B,..",
       "one image per seed, in this order, at most " + std::to_string(kSampleMaxImages) + " (instead of --n and --seed)"},
      {"--fixed", "", "use the run's fixed sample noise instead of --seed"},
      {"--columns", "N", "images per row (default: square grid)"},
      {"--train-mode", "", "use batch statistics in BatchNorm as the original tool did"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  return CommandLine("sample", "--checkpoint FILE --out FILE.png|FILE.npy [options]",
                     "Writes a PNG grid of images generated from a checkpoint, or with an --out\n"
                     "ending in .npy the images themselves as float32 numbers. The latents are\n"
                     "drawn from --seed (the same seed gives the same images), one per seed with\n"
                     "--seeds (each seed's latent, as the explorer and walks use it), read from\n"
                     "--latents (as an exported ONNX model takes them), or with --fixed are the\n"
                     "run's fixed sample noise.",
                     specs);
}

// nearest words the model options as sample does: eval-mode images, the CPU by default.
ModelOptionsUse nearestModelUse() {
  ModelOptionsUse use;
  use.checkpoint_help = "checkpoint (.pt) whose samples are compared with its run's training images";
  return use;
}

// nearest's options: the model options, the samples, the search and its output.
CommandLine nearestCommandLine() {
  const ModelOptionsUse use = nearestModelUse();
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      generatorOptionSpec(),
      {"--seed", "N", "the first sample's seed (default 0); the samples are seeds N, N+1, ..."},
      {"--n", "N", "number of samples (default 8, at most " + std::to_string(kNearestMaxSamples) + ")"},
      {"--seeds", "A,B,..", "one sample per seed, in this order (instead of --seed and --n)"},
      {"--neighbours", "K", "nearest training images per sample (default 3, at most 64)"},
      {"--max-train", "N", "training images searched at most, a seeded draw when there are more (default 20000)"},
      {"--draw-seed", "N", "the seed of that draw (default 0)"},
      {"--dataroot", "DIR", "the training images, when they moved (default: the checkpoint's data folder)"},
      {"--json", "", "print the result as one JSON object"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  return CommandLine("nearest", "--checkpoint FILE [options]",
                     "Does the generator copy its training photographs? Prints each sample's\n"
                     "nearest training images: exact L2 distance at 32x32, images in [-1, 1], as the\n"
                     "memorisation check measures it (docs/evaluation.md). The samples are the\n"
                     "seeds' images as Explore shows them; the training images are the run's\n"
                     "(its data folder, filter and the training side of its held-out split).",
                     specs);
}

// walk words the model options as most commands do (the CPU by default).
ModelOptionsUse walkModelUse() { return ModelOptionsUse{}; }

// walk's options: the model options (the CPU by default), the walk, the output and its encoding.
CommandLine walkCommandLine() {
  const ModelOptionsUse use = walkModelUse();
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      generatorOptionSpec(),
      {"--seeds", "A,B,..", "keyframes: one latent per seed, in this order (at most " + std::to_string(kMaxKeyframeSeeds) + ")"},
      {"--walk", "FILE", "keyframes and settings from a walk file (JSON)"},
      {"--grid", "RxC", "R×C tiles, each its own walk (e.g. 3x3)"},
      {"--direction", "FILE", "walk along a saved direction (<run>/directions/NAME.json) from --seed's latent"},
      {"--range", "A,B", "with --direction: from A to B times the direction, each within ±1000 (default -3,3)"},
      {"--keys", "N", "with --grid: keyframes per tile (default 3)"},
      {"--seed", "N", "with --grid: first seed; with --direction: the latent walked from (default 0)"},
      {"--frames-per-key", "N", "frames from one keyframe to the next (default 30)"},
      {"--mode", "M", "slerp or lerp (default slerp; lerp with --direction)"},
      {"--easing", "E", "linear, ease-in-out, ease-in or ease-out (default ease-in-out)"},
      {"--loop", "", "return to the first keyframe, so the video repeats seamlessly"},
      {"--out", "FILE", "video file; .gif, .mp4 or .webm chooses the format"},
      {"--out-dir", "DIR", "write PNG frames (frame_000000.png, ...) to this new or empty folder"},
      {"--format", "F", "gif, mp4, webm or png (default: from the --out extension)"},
      {"--fps", "X", "frames per second, any positive number (default 30; GIF at most 50)"},
      {"--size", "N", "long side of the output in pixels (default 512; 0 keeps the model's size)"},
      {"--filter", "F", "upscaling: nearest or lanczos (default lanczos)"},
      {"--crf", "N", "quality, lower is better: H.264 0-51 (default 20), VP9 0-63 (default 32)"},
      {"--preset", "P", "libx264 speed preset, ultrafast to veryslow (default medium)"},
      {"--encoder", "NAME", "FFmpeg encoder to use instead of the format's default"},
      {"--no-dither", "", "GIF: map colours to the palette without dithering"},
      {"--save-walk", "FILE", "also save the walk (keyframes and settings) as JSON"},
      {"--batch", "N", "frames per generator call (default 64)"},
      {"--train-mode", "", "use batch statistics in BatchNorm as the original tool did"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  return CommandLine(
      "walk",
      "--checkpoint FILE (--seeds A,B,.. | --walk FILE | --grid RxC | --direction FILE) (--out FILE | --out-dir DIR) [options]",
      "Renders a walk through the latent space of a checkpoint's generator and writes it\n"
      "as a GIF, an MP4 (H.264), a WebM (VP9) or a folder of PNG frames, encoded in-process\n"
      "with FFmpeg's libraries. The walk goes through the latents of --seeds (or of a walk\n"
      "file saved by the studio or --save-walk), with --frames-per-key frames from one\n"
      "keyframe to the next; --loop returns to the first keyframe. --grid renders R×C tiles,\n"
      "each walking through --keys seeds of its own, starting at --seed. --direction walks\n"
      "from --seed's latent plus A times a saved direction to plus B times it (--range A,B;\n"
      "lerp unless --mode says otherwise). SIGINT or SIGTERM cancels the export and leaves\n"
      "nothing at the output path.",
      specs);
}

ModelOptionsUse directionsModelUse() {
  ModelOptionsUse use;
  use.threads = true;
  return use;
}

CommandLine directionsCommandLine() {
  const ModelOptionsUse use = directionsModelUse();
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      generatorOptionSpec(),
      {"--method", "M", "sefa (closed form, instant) or pca (principal components of sampled latents); default sefa"},
      {"--top", "K", "how many directions, strongest first (default 10)"},
      {"--n", "N", "pca: latents sampled (default 10000)"},
      {"--seed", "N", "pca: the draw of those latents (default 0)"},
      {"--save", "NAME", "save them in the run as NAME.json (K = 1) or NAME-1.json ... NAME-K.json"},
      {"--format", "F", "with --save: json (default) or npy (a NumPy file beside each JSON file)"},
      {"--run", "DIR", "the run folder (default: the one the checkpoint is in)"},
      {"--json", "", "print the directions, vectors included, as one JSON object"},
      {"--list", "", "list the run's saved directions (with --run)"},
      {"--rename", "OLD", "rename a saved direction to --to NEW (with --run)"},
      {"--to", "NEW", "with --rename: the new name"},
      {"--delete", "NAME", "delete a saved direction (with --run)"},
      {"--export", "NAME", "write a saved direction as a NumPy .npy file (with --run and --out)"},
      {"--out", "FILE", "with --export: the .npy file to write"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  return CommandLine("directions",
                     "--checkpoint FILE [--method sefa|pca] [--top K] [--save NAME]\n"
                     "       streetgan directions --run DIR (--list | --rename OLD --to NEW | --delete NAME | --export NAME --out F.npy)",
                     "Finds directions in the latent space of a checkpoint's generator along which\n"
                     "the images change in one way. sefa: the eigenvectors of the first layer's\n"
                     "weight (Shen and Zhou 2021), instant. pca: the principal components of the\n"
                     "first block's outputs over --n sampled latents, mapped back to latent\n"
                     "directions (Härkönen et al. 2020). Prints each direction's strength; --save\n"
                     "keeps them in <run>/directions/ for the studio and 'streetgan walk --direction'.",
                     specs);
}

ModelOptionsUse projectModelUse() {
  ModelOptionsUse use;
  use.checkpoint_help = "checkpoint (.pt) of the generator to project into";
  return use;
}

CommandLine projectCommandLine() {
  const ModelOptionsUse use = projectModelUse();
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      generatorOptionSpec(),
      {"--out", "FILE", "JSON file to write: the latents, as a walk file (see below)"},
      {"--steps", "N", "Adam steps per photograph (default 500)"},
      {"--restarts", "N", "random starts, the best kept (default 8)"},
      {"--seed", "N", "start r is the latent of seed N + r (default 0)"},
      {"--lr", "X", "Adam's peak learning rate (default 0.05)"},
      {"--ms-ssim-weight", "X", "weight of (1 - MS-SSIM) beside the pixel error (default 1)"},
      {"--prior", "X", "weight of the latent-norm prior (default 0.01)"},
      {"--preview", "FILE", "also write a PNG: each photograph beside its reconstruction"},
      {"--train-mode", "", "use batch statistics in BatchNorm, each start a batch of one (render the latents with "
                           "walk --train-mode --batch 1 to see them as projected)"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  return CommandLine("project", "PHOTO... --checkpoint FILE --out FILE.json [options]",
                     "Finds, for each photograph, the latent whose generated image is nearest to it: the\n"
                     "photograph is cut as the model's training images were (the centre crop, at the\n"
                     "model's size), then the latent is optimised with Adam on the pixel error plus\n"
                     "(1 - MS-SSIM), from several random starts, with a prior that keeps it a latent the\n"
                     "model knows. The output is a walk file whose keyframes are the latents in the order\n"
                     "given: `streetgan walk --checkpoint FILE --walk FILE.json --out photos.mp4` walks from\n"
                     "one photograph to the next. Each keyframe also records its photograph and errors.",
                     specs);
}

// serve's generators run on the CPU, its cores shared among --workers (GalleryRenderer): of the
// model options it takes --checkpoint alone.
ModelOptionsUse serveModelUse() {
  ModelOptionsUse use;
  use.checkpoint_help = "checkpoint (.pt) to serve";
  return use;
}

CommandLine serveCommandLine() {
  return CommandLine("serve", "--checkpoint FILE | --run DIR [options]",
                     "Serves generated images over HTTP with the original tool's routes: GET /health\n"
                     "(JSON), /gan_imgs (PNG grid: n, seed, size), /gan_gifs (a slerp walk: frames,\n"
                     "seed, size, format=gif|mp4|webm) and a gallery page at /. With --run it follows\n"
                     "the run's newest checkpoint. Listens on loopback unless --bind says otherwise\n"
                     "(docs/serve.md).",
                     {checkpointOptionSpec(serveModelUse()),
                      generatorOptionSpec(),
                      {"--run", "DIR", "run directory: serve its newest checkpoint, and follow it"},
                      {"--bind", "ADDR", "address to listen on (default 127.0.0.1)"},
                      {"--port", "N", "port (default 8080; 0 picks a free one)"},
                      {"--workers", "N", "render threads, each with its own generator (default 2)"},
                      {"--queue", "N", "renders that may wait; more get 503 (default 8)"},
                      {"--connections", "N", "connection threads, 4 to 1024 (default 64)"},
                      {"--max-n", "N", "most images in one grid (default 256)"},
                      {"--max-frames", "N", "most frames in one walk (default 600)"},
                      {"--max-size", "N", "largest image side in pixels (default 1024)"},
                      {"--max-pixels", "N", "most pixels in one request, images x side x side (default 40000000)"},
                      {"--read-timeout-ms", "N", "longest pause inside a request before it is cut off (default 500)"},
                      {"--request-timeout-ms", "N", "longest time a whole request may take to arrive (default 5000)"}});
}

CommandLine publishCommandLine() {
  ModelOptionsUse use;
  use.checkpoint_help = "checkpoint (.pt) whose generator the page runs";
  const PublishOptions defaults;
  return CommandLine(
      "publish", "(--run DIR | --checkpoint FILE) --out SITE [options]\n       streetgan publish --out SITE --preview [--port N]",
      "Writes a static web page that generates street scenes in the visitor's browser:\n"
      "index.html, the generator as model.onnx, ONNX Runtime Web (WebAssembly, WebGPU\n"
      "where the browser has it) and scenes.json (the first scenes, the run's directions\n"
      "as sliders, a saved walk). Any static host serves the folder (GitHub Pages, a\n"
      "university home page); it needs no server code. SITE must be new or an earlier\n"
      "publish, which is replaced whole. --preview then serves it on 127.0.0.1; without\n"
      "--run or --checkpoint it serves an earlier publish as it is (docs/publish.md).",
      {checkpointOptionSpec(use),
       generatorOptionSpec(),
       {"--run", "DIR", "run directory: publish its newest checkpoint (and its directions)"},
       {"--out", "SITE", "folder to write"},
       {"--title", "TEXT", "the page's title (default \"" + defaults.title + "\")"},
       {"--directions", "A,B,..",
        "the run's saved directions to offer as sliders (default: every one, at most " +
            std::to_string(PublishOptions::kMaxDirections) + "; \"\" for none)"},
       {"--walk", "FILE", "a walk file (streetgan walk --save-walk) the page offers to play"},
       {"--scenes", "N", "scenes in the first grid, 1 to " + std::to_string(PublishOptions::kMaxScenes) + " (default " +
                            std::to_string(defaults.scenes) + ")"},
       {"--seed", "N", "the first scene's seed; scene i is seed N+i, as `sample --seeds` (default 0)"},
       {"--fps", "N", "the walks' frame rate (default " + std::to_string(defaults.fps) + ")"},
       {"--frames-per-key", "N", "frames from one clicked scene to the next (default " +
                                     std::to_string(defaults.frames_per_key) + ")"},
       {"--preview", "", "then serve the folder on 127.0.0.1 until Ctrl+C"},
       {"--port", "N", "--preview's port (default 8000; 0 picks a free one)"}});
}

// parzen and metrics score a checkpoint's samples: they say so, take the fastest device, and word
// --threads as train's config option does.
ModelOptionsUse scoringModelUse() {
  ModelOptionsUse use;
  use.checkpoint_help = "score samples of this checkpoint's generator";
  use.device_default = "auto";
  use.threads_help = "CPU threads (0 = all cores)";
  return use;
}

namespace {

// parzen's options: what to score, the held-out images, the estimator, the model options and the
// output; then the data filters of the held-out split.
std::vector<OptionSpec> parzenOptionSpecs(const ModelOptionsUse& use) {
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      generatorOptionSpec(),
      {"--run", "DIR", "score every checkpoint of a run at one σ (the curve over epochs)"},
      {"--sigma", "S", "with --run: this σ instead of the one chosen on the latest checkpoint"},
      {"--samples", "DIR", "score the images in DIR as the samples instead"},
      {"--dataroot", "DIR", "held-out split of this data set (default: the checkpoint's own data set)"},
      {"--valid", "DIR", "every image in DIR is the validation split"},
      {"--test", "DIR", "every image in DIR is the test split"},
      {"--n-samples", "N", "generated samples (default 10000)"},
      {"--n-valid", "N", "validation images from the held-out split (default 1000)"},
      {"--n-test", "N", "test images from the held-out split (default 1000)"},
      {"--sigmas", "A,B,..", "the σ grid (default logspace(-1, 0, 10))"},
      {"--img-size", "S", "image size without a checkpoint (default 64)"},
      {"--seed", "N", "seed of the sample noise and of the split draw (default 0)"},
      {"--batch", "B", "generator batch size (default 256)"},
      {"--train-mode", "", "sample with BatchNorm batch statistics, as the original tool did"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  specs.push_back({"--json", "", "print one JSON object"});
  specs.push_back({"--save", "", "also write the result into the run folder (evaluations/parzen-*.json)"});
  specs.push_back({"--progress", "", "machine-readable progress lines on stderr (docs/events.md)"});
  for (const auto& spec : dataFilterOptionSpecs()) specs.push_back(spec);
  return specs;
}

}  // namespace

CommandLine parzenCommandLine() {
  const ModelOptionsUse use = scoringModelUse();
  return CommandLine("parzen", "(--checkpoint FILE | --samples DIR | --run DIR) [--dataroot DIR | --valid DIR --test DIR]",
                     "Parzen-window log-likelihood of held-out images under generated samples\n"
                     "(Goodfellow et al.): σ is chosen on the validation split, the mean and its\n"
                     "standard error are reported on the test split.",
                     parzenOptionSpecs(use));
}

namespace {

std::vector<OptionSpec> metricsOptionSpecs(const ModelOptionsUse& use) {
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      generatorOptionSpec(),
      {"--run", "DIR", "score the newest checkpoint of a run (every one with --every-checkpoint)"},
      {"--every-checkpoint", "", "with --run: every checkpoint, oldest first"},
      {"--samples", "DIR", "score the images in DIR as the samples instead"},
      {"--dataroot", "DIR", "training images to compare with (default: the checkpoint's data set)"},
      {"--cache", "FILE", "or the training images of an image cache (streetgan cache build)"},
      {"--n", "N", "generated samples (default 10000); with --samples, a seeded draw of N of its images"},
      {"--n-train", "N", "training images, a seeded draw from the data set (default 10000)"},
      {"--only", "A,B,..", "just these metrics: swd, msssim, ndb, fid, kid, prdc, memorisation (default all)"},
      {"--bins", "K", "NDB/JSD: k-means bins of the training images (default 100)"},
      {"--features", "FILE.pt",
       "compute FID, KID and precision/recall in this TorchScript network's features (a TorchScript file is code that "
       "runs with your rights, in a process of its own: use only networks you trust)"},
      {"--features-size", "S", "the image size the features network takes (default 299)"},
      {"--features-memory", "GIB",
       "the most memory the features network's process may allocate (default " +
           std::to_string(FeaturesWorkerOptions{}.memory_bytes >> 30) + ")"},
      {"--features-timeout", "SECONDS",
       "the longest the features network may take to load or on one batch before it is stopped (default " +
           std::to_string(FeaturesWorkerOptions{}.batch_timeout.count()) + ")"},
      {"--img-size", "S", "image size without a checkpoint (default 64)"},
      {"--seed", "N", "seed of the sample noise, the draws and the projections (default 0)"},
      {"--batch", "B", "generator batch size (default 256)"},
      {"--train-mode", "", "sample with BatchNorm batch statistics, as the original tool did"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  specs.push_back({"--json", "", "print one JSON object (a list with --every-checkpoint)"});
  specs.push_back({"--save", "", "also write each result into the run folder (evaluations/metrics-*.json)"});
  specs.push_back({"--progress", "", "machine-readable progress lines on stderr (docs/events.md)"});
  return specs;
}

}  // namespace

CommandLine metricsCommandLine() {
  const ModelOptionsUse use = scoringModelUse();
  return CommandLine("metrics", "(--checkpoint FILE | --run DIR | --samples DIR) [--dataroot DIR | --cache FILE]",
                     "Quality metrics of generated images against training images, computed\n"
                     "offline: sliced Wasserstein distance, MS-SSIM diversity, NDB/JSD, FID, KID,\n"
                     "precision/recall/density/coverage and a memorisation check (docs/evaluation.md).\n"
                     "Without --features, FID, KID and precision/recall use a feature space of our\n"
                     "own (32x32 pixels on the training images' first 256 principal components):\n"
                     "comparable between our runs on the same data, not with papers' figures.",
                     metricsOptionSpecs(use));
}

}  // namespace streetgan::cli
