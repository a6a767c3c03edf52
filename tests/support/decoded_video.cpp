#include "tests/support/decoded_video.h"

#include "core/video/internal/libav_handles.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include <QByteArray>
#include <QFile>

#include <cmath>

namespace streetgan::test {

namespace {

int gifLoopCount(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return -1;
  const QByteArray bytes = file.readAll();
  const int at = bytes.indexOf("NETSCAPE2.0");
  // NETSCAPE2.0, then a 3-byte sub-block: 0x03, 0x01, loop count (little-endian 16 bits).
  if (at < 0 || at + 15 > bytes.size()) return -1;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.constData()) + at + 11;
  if (p[0] != 3 || p[1] != 1) return -1;
  return p[2] | (p[3] << 8);
}

}  // namespace

DecodedVideo decodeVideo(const QString& path) {
  DecodedVideo video;
  AVFormatContext* raw = nullptr;
  int code = avformat_open_input(&raw, path.toUtf8().constData(), nullptr, nullptr);
  if (code < 0) {
    video.error = "open: " + QString::fromStdString(libav::libavErrorString(code));
    return video;
  }
  libav::InputContextPtr input(raw);
  if ((code = avformat_find_stream_info(input.get(), nullptr)) < 0) {
    video.error = "stream info: " + QString::fromStdString(libav::libavErrorString(code));
    return video;
  }
  const int index = av_find_best_stream(input.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (index < 0) {
    video.error = "no video stream";
    return video;
  }
  AVStream* stream = input->streams[index];
  const AVCodec* decoder = avcodec_find_decoder(stream->codecpar->codec_id);
  libav::CodecContextPtr codec(avcodec_alloc_context3(decoder));
  avcodec_parameters_to_context(codec.get(), stream->codecpar);
  if ((code = avcodec_open2(codec.get(), decoder, nullptr)) < 0) {
    video.error = "decoder: " + QString::fromStdString(libav::libavErrorString(code));
    return video;
  }
  video.codec = avcodec_get_name(stream->codecpar->codec_id);
  const char* format_name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(stream->codecpar->format));
  video.pixel_format = format_name ? format_name : "";
  video.width = stream->codecpar->width;
  video.height = stream->codecpar->height;
  video.frame_rate = stream->avg_frame_rate.den ? av_q2d(stream->avg_frame_rate) : 0;
  video.gif_loop_count = gifLoopCount(path);

  libav::PacketPtr packet(av_packet_alloc());
  libav::FramePtr frame(av_frame_alloc());
  libav::ScaleContextPtr scaler;
  auto receive = [&]() {
    while (avcodec_receive_frame(codec.get(), frame.get()) == 0) {
      scaler.reset(sws_getCachedContext(scaler.release(), frame->width, frame->height,
                                        static_cast<AVPixelFormat>(frame->format), frame->width, frame->height,
                                        AV_PIX_FMT_RGB24, SWS_POINT | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                                        nullptr, nullptr, nullptr));
      std::vector<std::uint8_t> rgb(static_cast<std::size_t>(frame->width) * frame->height * 3);
      std::uint8_t* out[] = {rgb.data()};
      const int out_stride[] = {frame->width * 3};
      sws_scale(scaler.get(), frame->data, frame->linesize, 0, frame->height, out, out_stride);
      video.frames.push_back(std::move(rgb));
      av_frame_unref(frame.get());
    }
  };
  while (av_read_frame(input.get(), packet.get()) >= 0) {
    if (packet->stream_index == index) {
      // Read from the packets: AVFrame's copy of it is pkt_duration in FFmpeg 5 and duration
      // from 6 on (7 has only the second), AVPacket::duration is in all of them.
      video.durations.push_back(packet->duration * av_q2d(stream->time_base));
      avcodec_send_packet(codec.get(), packet.get());
    }
    av_packet_unref(packet.get());
    receive();
  }
  avcodec_send_packet(codec.get(), nullptr);
  receive();
  return video;
}

double psnr(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  if (a.size() != b.size() || a.empty()) return -1;
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = double(a[i]) - double(b[i]);
    sum += d * d;
  }
  const double mse = sum / a.size();
  return mse == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

}  // namespace streetgan::test
