#pragma once
// Owners for FFmpeg's C handles (internal to core's export code): every libav object the encoder
// creates lives in one of these unique_ptrs, so an early return on any error frees it, and
// libavErrorString() turns an AVERROR code into the sentence FFmpeg has for it (av_err2str is a C
// compound literal and cannot be used from C++).
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavformat/avformat.h>
#include <libavutil/frame.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

namespace streetgan::libav {

struct CodecContextDeleter {
  void operator()(AVCodecContext* context) const { avcodec_free_context(&context); }
};
struct FrameDeleter {
  void operator()(AVFrame* frame) const { av_frame_free(&frame); }
};
struct PacketDeleter {
  void operator()(AVPacket* packet) const { av_packet_free(&packet); }
};
struct FilterGraphDeleter {
  void operator()(AVFilterGraph* graph) const { avfilter_graph_free(&graph); }
};
struct FilterInOutDeleter {
  void operator()(AVFilterInOut* inout) const { avfilter_inout_free(&inout); }
};
struct ScaleContextDeleter {
  void operator()(SwsContext* context) const { sws_freeContext(context); }
};
/// Closes the output file (when the muxer opened one) and frees the muxer.
struct OutputContextDeleter {
  void operator()(AVFormatContext* context) const;
};
/// For demuxers opened with avformat_open_input (tests and probes).
struct InputContextDeleter {
  void operator()(AVFormatContext* context) const { avformat_close_input(&context); }
};
struct DictionaryDeleter {
  void operator()(AVDictionary* dictionary) const { av_dict_free(&dictionary); }
};

using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;
using FilterGraphPtr = std::unique_ptr<AVFilterGraph, FilterGraphDeleter>;
using FilterInOutPtr = std::unique_ptr<AVFilterInOut, FilterInOutDeleter>;
using ScaleContextPtr = std::unique_ptr<SwsContext, ScaleContextDeleter>;
using OutputContextPtr = std::unique_ptr<AVFormatContext, OutputContextDeleter>;
using InputContextPtr = std::unique_ptr<AVFormatContext, InputContextDeleter>;

/// FFmpeg's message for an AVERROR code, e.g. "No space left on device".
std::string libavErrorString(int code);

/// A frame with buffers of the given size and pixel format (nullptr when out of memory).
FramePtr allocateFrame(int width, int height, AVPixelFormat format);

}  // namespace streetgan::libav
