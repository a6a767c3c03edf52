#include "core/video/internal/gif_palette_filter.h"

#include "core/util/run_on_threads.h"

extern "C" {
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
}

#include <algorithm>
#include <string>

namespace streetgan {

namespace {

Error filterError(const char* what, int code) {
  return makeError(std::string("GIF palette: ") + what + ": " + libav::libavErrorString(code));
}

std::string sourceArguments(int width, int height, AVPixelFormat format) {
  return "video_size=" + std::to_string(width) + "x" + std::to_string(height) + ":pix_fmt=" +
         std::to_string(format) + ":time_base=1/100:pixel_aspect=1/1";
}

Status createSource(AVFilterGraph* graph, AVFilterContext** source, const char* name, int width, int height,
                    AVPixelFormat format) {
  const int code = avfilter_graph_create_filter(source, avfilter_get_by_name("buffer"), name,
                                                sourceArguments(width, height, format).c_str(), nullptr, graph);
  if (code < 0) return filterError("buffer source", code);
  return {};
}

Status createSink(AVFilterGraph* graph, AVFilterContext** sink, AVPixelFormat format) {
  int code = avfilter_graph_create_filter(sink, avfilter_get_by_name("buffersink"), "out", nullptr, nullptr, graph);
  if (code < 0) return filterError("buffer sink", code);
  const AVPixelFormat formats[] = {format, AV_PIX_FMT_NONE};
  code = av_opt_set_int_list(*sink, "pix_fmts", formats, AV_PIX_FMT_NONE, AV_OPT_SEARCH_CHILDREN);
  if (code < 0) return filterError("buffer sink format", code);
  return {};
}

/// An open end of a graph description: the label `name` at pad 0 of `filter`.
libav::FilterInOutPtr endpoint(const char* name, AVFilterContext* filter, libav::FilterInOutPtr next) {
  libav::FilterInOutPtr inout(avfilter_inout_alloc());
  if (!inout) return nullptr;
  inout->name = av_strdup(name);
  inout->filter_ctx = filter;
  inout->pad_idx = 0;
  inout->next = next.release();
  return inout;
}

Status parseGraph(AVFilterGraph* graph, const std::string& description, libav::FilterInOutPtr outputs,
                  libav::FilterInOutPtr inputs) {
  if (!outputs || !inputs) return makeError("GIF palette: out of memory");
  AVFilterInOut* inputs_raw = inputs.release();
  AVFilterInOut* outputs_raw = outputs.release();
  int code = avfilter_graph_parse_ptr(graph, description.c_str(), &inputs_raw, &outputs_raw, nullptr);
  inputs.reset(inputs_raw);
  outputs.reset(outputs_raw);
  if (code < 0) return filterError("graph", code);
  code = avfilter_graph_config(graph, nullptr);
  if (code < 0) return filterError("graph", code);
  return {};
}

}  // namespace

/// One thread's "[frame]scale[s]; [s][palette]paletteuse" graph, fed the palette once.
struct GifPaletteFilter::MappingGraph {
  libav::FilterGraphPtr graph;
  AVFilterContext* frame_source = nullptr;
  AVFilterContext* palette_source = nullptr;
  AVFilterContext* sink = nullptr;

  static Result<std::unique_ptr<MappingGraph>> create(const GifPaletteFilter& filter, AVFrame* palette) {
    auto mapping = std::make_unique<MappingGraph>();
    mapping->graph.reset(avfilter_graph_alloc());
    if (!mapping->graph) return makeError("GIF palette: out of memory");
    mapping->graph->nb_threads = 1;  // the threads are ours, one graph each
    AVFilterGraph* graph = mapping->graph.get();
    if (Status s =
            createSource(graph, &mapping->frame_source, "frame", filter.width_, filter.height_, AV_PIX_FMT_RGB24);
        !s)
      return makeError(s.error());
    if (Status s = createSource(graph, &mapping->palette_source, "palette", palette->width, palette->height,
                                static_cast<AVPixelFormat>(palette->format)); !s)
      return makeError(s.error());
    if (Status s = createSink(graph, &mapping->sink, AV_PIX_FMT_PAL8); !s) return makeError(s.error());
    // Ordered dithering keeps gradients smooth and, unlike error diffusion, keeps a pixel's index
    // steady from frame to frame, so the GIF encoder's unchanged-pixel transparency still works.
    const std::string description =
        "[frame]scale=" + std::to_string(filter.out_width_) + ":" + std::to_string(filter.out_height_) +
        ":flags=" + (filter.scale_ == ScaleFilter::Nearest ? "neighbor" : "lanczos+accurate_rnd") +
        "[scaled];[scaled][palette]paletteuse=" + (filter.dither_ ? "dither=bayer:bayer_scale=3" : "dither=none") +
        "[out]";
    auto outputs = endpoint("frame", mapping->frame_source, endpoint("palette", mapping->palette_source, nullptr));
    if (Status s = parseGraph(graph, description, std::move(outputs), endpoint("out", mapping->sink, nullptr)); !s)
      return makeError(s.error());
    // paletteuse repeats the last palette frame for every frame that follows.
    int code = av_buffersrc_add_frame_flags(mapping->palette_source, palette, AV_BUFFERSRC_FLAG_KEEP_REF);
    if (code >= 0) code = av_buffersrc_add_frame(mapping->palette_source, nullptr);
    if (code < 0) return filterError("palette", code);
    return mapping;
  }

  Status map(AVFrame* source, AVFrame* out) {
    int code = av_buffersrc_add_frame_flags(frame_source, source, AV_BUFFERSRC_FLAG_KEEP_REF);
    if (code < 0) return filterError("adding a frame", code);
    code = av_buffersink_get_frame(sink, out);
    if (code < 0) return filterError("mapping a frame", code);
    return {};
  }
};

GifPaletteFilter::~GifPaletteFilter() = default;

Result<std::unique_ptr<GifPaletteFilter>> GifPaletteFilter::create(int width, int height, int out_width,
                                                                  int out_height, ScaleFilter scale, bool dither,
                                                                  int threads, std::int64_t max_kept_bytes) {
  std::unique_ptr<GifPaletteFilter> filter(new GifPaletteFilter());
  filter->max_kept_bytes_ = max_kept_bytes;
  filter->width_ = width;
  filter->height_ = height;
  filter->out_width_ = out_width;
  filter->out_height_ = out_height;
  filter->scale_ = scale;
  filter->dither_ = dither;
  filter->threads_ = std::max(1, threads);
  filter->palette_graph_.reset(avfilter_graph_alloc());
  if (!filter->palette_graph_) return makeError("GIF palette: out of memory");
  AVFilterGraph* graph = filter->palette_graph_.get();
  if (Status s = createSource(graph, &filter->palette_source_, "in", width, height, AV_PIX_FMT_RGB24); !s)
    return makeError(s.error());
  if (Status s = createSink(graph, &filter->palette_sink_, AV_PIX_FMT_RGB32); !s) return makeError(s.error());
  if (Status s = parseGraph(graph, "[in]palettegen=stats_mode=full[out]", endpoint("in", filter->palette_source_, nullptr),
                            endpoint("out", filter->palette_sink_, nullptr));
      !s)
    return makeError(s.error());
  return filter;
}

Status GifPaletteFilter::add(const std::uint8_t* rgb, int stride, std::int64_t pts) {
  // Every frame is kept until finish(): a walk of a million frames must not take all memory first.
  const std::int64_t frame_bytes = static_cast<std::int64_t>(width_) * height_ * 3;
  if ((frameCount() + 1) * frame_bytes > max_kept_bytes_)
    return makeError("a GIF keeps every frame until its palette is made, and " + std::to_string(frameCount() + 1) +
                     " frames of " + std::to_string(width_) + "x" + std::to_string(height_) + " pixels would take more than " +
                     std::to_string(max_kept_bytes_ >> 20) + " MiB; make fewer frames, or export MP4 or WebM");
  libav::FramePtr frame = libav::allocateFrame(width_, height_, AV_PIX_FMT_RGB24);
  if (!frame) return makeError("GIF palette: out of memory");
  av_image_copy_plane(frame->data[0], frame->linesize[0], rgb, stride, width_ * 3, height_);
  frame->pts = pts;
  // PUSH: palettegen counts the colours now, so no frame waits in the graph.
  const int code = av_buffersrc_add_frame_flags(palette_source_, frame.get(),
                                                AV_BUFFERSRC_FLAG_KEEP_REF | AV_BUFFERSRC_FLAG_PUSH);
  if (code < 0) return filterError("counting colours", code);
  frames_.push_back(std::move(frame));
  return {};
}

Result<libav::FramePtr> GifPaletteFilter::buildPalette() {
  int code = av_buffersrc_add_frame(palette_source_, nullptr);
  if (code < 0) return filterError("building the palette", code);
  libav::FramePtr palette(av_frame_alloc());
  if (!palette) return makeError("GIF palette: out of memory");
  code = av_buffersink_get_frame(palette_sink_, palette.get());
  if (code < 0) return filterError("building the palette", code);
  palette_graph_.reset();
  return palette;
}

Status GifPaletteFilter::finish(const std::function<Status(AVFrame*)>& consume,
                                const std::function<bool(std::int64_t, std::int64_t)>& progress) {
  auto palette = buildPalette();
  if (!palette) return makeError(palette.error());
  const int threads = static_cast<int>(std::min<std::int64_t>(threads_, std::max<std::int64_t>(1, frameCount())));
  std::vector<std::unique_ptr<MappingGraph>> graphs;
  for (int t = 0; t < threads; ++t) {
    auto graph = MappingGraph::create(*this, palette->get());
    if (!graph) return makeError(graph.error());
    graphs.push_back(std::move(*graph));
  }
  // Chunks of a few frames per thread: thread t maps frames t, t + threads, ... of the chunk.
  const std::int64_t total = frameCount();
  const std::int64_t chunk = 4 * threads;
  std::vector<libav::FramePtr> mapped(static_cast<std::size_t>(chunk));
  for (auto& frame : mapped) {
    frame.reset(av_frame_alloc());
    if (!frame) return makeError("GIF palette: out of memory");
  }
  std::vector<Status> results(static_cast<std::size_t>(threads));
  for (std::int64_t begin = 0; begin < total; begin += chunk) {
    const std::int64_t count = std::min(chunk, total - begin);
    auto work = [&](int t) {
      for (std::int64_t i = t; i < count; i += threads) {
        Status status = graphs[t]->map(frames_[begin + i].get(), mapped[i].get());
        if (!status) {
          results[t] = status;
          return;
        }
      }
    };
    runOnThreads(threads, work);
    for (const Status& result : results)
      if (!result) return result;
    for (std::int64_t i = 0; i < count; ++i) {
      frames_[begin + i].reset();  // the source is no longer needed
      Status consumed = consume(mapped[i].get());
      av_frame_unref(mapped[i].get());
      if (!consumed) return consumed;
    }
    if (progress && !progress(begin + count, total)) return makeError("export cancelled");
  }
  return {};
}

}  // namespace streetgan
