#include "core/video/internal/libav_handles.h"

extern "C" {
#include <libavutil/error.h>
}

namespace streetgan::libav {

void OutputContextDeleter::operator()(AVFormatContext* context) const {
  if (context == nullptr) return;
  if (context->oformat != nullptr && (context->oformat->flags & AVFMT_NOFILE) == 0 && context->pb != nullptr)
    avio_closep(&context->pb);
  avformat_free_context(context);
}

std::string libavErrorString(int code) {
  char buffer[AV_ERROR_MAX_STRING_SIZE] = {};
  if (av_strerror(code, buffer, sizeof buffer) < 0) return "FFmpeg error " + std::to_string(code);
  return buffer;
}

FramePtr allocateFrame(int width, int height, AVPixelFormat format) {
  FramePtr frame(av_frame_alloc());
  if (!frame) return nullptr;
  frame->width = width;
  frame->height = height;
  frame->format = format;
  if (av_frame_get_buffer(frame.get(), 0) < 0) return nullptr;
  return frame;
}

}  // namespace streetgan::libav
