#include "gif_palette_filter.h"

extern "C" {
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/opt.h>
}

#include <string>

namespace streetgan {

namespace {

Error filterError(const char* what, int code) {
  return makeError(std::string("GIF palette filter: ") + what + ": " + libav::libavErrorString(code));
}

}  // namespace

Result<std::unique_ptr<GifPaletteFilter>> GifPaletteFilter::create(int width, int height, int out_width,
                                                                  int out_height, ScaleFilter scale,
                                                                  GifPalette palette, bool dither) {
  std::unique_ptr<GifPaletteFilter> filter(new GifPaletteFilter());
  filter->graph_.reset(avfilter_graph_alloc());
  filter->output_.reset(av_frame_alloc());
  if (!filter->graph_ || !filter->output_) return makeError("GIF palette filter: out of memory");

  const std::string source_args = "video_size=" + std::to_string(width) + "x" + std::to_string(height) +
                                  ":pix_fmt=" + std::to_string(AV_PIX_FMT_RGB24) + ":time_base=1/100:pixel_aspect=1/1";
  int code = avfilter_graph_create_filter(&filter->source_, avfilter_get_by_name("buffer"), "in",
                                          source_args.c_str(), nullptr, filter->graph_.get());
  if (code < 0) return filterError("buffer source", code);
  code = avfilter_graph_create_filter(&filter->sink_, avfilter_get_by_name("buffersink"), "out", nullptr, nullptr,
                                      filter->graph_.get());
  if (code < 0) return filterError("buffer sink", code);
  const AVPixelFormat formats[] = {AV_PIX_FMT_PAL8, AV_PIX_FMT_NONE};
  code = av_opt_set_int_list(filter->sink_, "pix_fmts", formats, AV_PIX_FMT_NONE, AV_OPT_SEARCH_CHILDREN);
  if (code < 0) return filterError("buffer sink format", code);

  // Ordered dithering keeps gradients smooth and, unlike error diffusion, keeps a pixel's index
  // steady from frame to frame, so the GIF encoder's unchanged-pixel transparency still works.
  const std::string use_dither = dither ? "dither=bayer:bayer_scale=3" : "dither=none";
  const std::string upscale = "scale=" + std::to_string(out_width) + ":" + std::to_string(out_height) +
                              ":flags=" + (scale == ScaleFilter::Nearest ? "neighbor" : "lanczos+accurate_rnd");
  const std::string description =
      palette == GifPalette::Global
          ? "split[a][b];[a]palettegen=stats_mode=full[p];[b]" + upscale + "[s];[s][p]paletteuse=" + use_dither
          : "split[a][b];[a]palettegen=stats_mode=single[p];[b]" + upscale + "[s];[s][p]paletteuse=new=1:" + use_dither;

  libav::FilterInOutPtr outputs(avfilter_inout_alloc());
  libav::FilterInOutPtr inputs(avfilter_inout_alloc());
  if (!outputs || !inputs) return makeError("GIF palette filter: out of memory");
  outputs->name = av_strdup("in");
  outputs->filter_ctx = filter->source_;
  outputs->pad_idx = 0;
  inputs->name = av_strdup("out");
  inputs->filter_ctx = filter->sink_;
  inputs->pad_idx = 0;
  AVFilterInOut* inputs_raw = inputs.release();
  AVFilterInOut* outputs_raw = outputs.release();
  code = avfilter_graph_parse_ptr(filter->graph_.get(), description.c_str(), &inputs_raw, &outputs_raw, nullptr);
  inputs.reset(inputs_raw);
  outputs.reset(outputs_raw);
  if (code < 0) return filterError("graph", code);
  code = avfilter_graph_config(filter->graph_.get(), nullptr);
  if (code < 0) return filterError("graph", code);
  return filter;
}

Status GifPaletteFilter::push(AVFrame* frame) {
  const int code = av_buffersrc_add_frame_flags(source_, frame, AV_BUFFERSRC_FLAG_KEEP_REF);
  if (code < 0) return filterError("adding a frame", code);
  return {};
}

Status GifPaletteFilter::pull(const std::function<Status(AVFrame*)>& consume) {
  for (;;) {
    const int code = av_buffersink_get_frame(sink_, output_.get());
    if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return {};
    if (code < 0) return filterError("reading a frame", code);
    Status consumed = consume(output_.get());
    av_frame_unref(output_.get());
    if (!consumed) return consumed;
  }
}

}  // namespace streetgan
