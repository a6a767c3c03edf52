#include "core/video/video_encoder.h"

#include "core/util/atomic_file.h"
#include "core/video/internal/gif_palette_filter.h"
#include "core/video/internal/libav_handles.h"

extern "C" {
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
}

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

namespace streetgan {

namespace fs = std::filesystem;

namespace {

/// Writes one PNG frame; the Error is the system's reason (e.g. "No space left on device").
Status writeWholeFile(const std::string& file, const std::uint8_t* data, int size) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return makeError(std::strerror(errno));
  for (int done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, static_cast<std::size_t>(size - done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = std::strerror(n < 0 ? errno : ENOSPC);
      ::close(fd);
      return makeError(reason);
    }
    done += static_cast<int>(n);
  }
  if (::close(fd) != 0) return makeError(std::strerror(errno));
  return {};
}

const char* defaultEncoder(ExportFormat format) {
  switch (format) {
    case ExportFormat::Gif: return "gif";
    case ExportFormat::Mp4: return "libx264";
    case ExportFormat::WebM: return "libvpx-vp9";
    case ExportFormat::PngSequence: return "png";
  }
  return "";
}

const char* muxerName(ExportFormat format) {
  switch (format) {
    case ExportFormat::Gif: return "gif";
    case ExportFormat::Mp4: return "mp4";
    case ExportFormat::WebM: return "webm";
    case ExportFormat::PngSequence: return nullptr;
  }
  return nullptr;
}

AVPixelFormat codecPixelFormat(ExportFormat format) {
  switch (format) {
    case ExportFormat::Gif: return AV_PIX_FMT_PAL8;
    case ExportFormat::Mp4:
    case ExportFormat::WebM: return AV_PIX_FMT_YUV420P;
    case ExportFormat::PngSequence: return AV_PIX_FMT_RGB24;
  }
  return AV_PIX_FMT_NONE;
}

/// Checks where the output goes before anything is written, so the message names the real problem.
Status checkDestination(const std::string& path, ExportFormat format) {
  if (path.empty()) return makeError("no output path given");
  const fs::path target(path);
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code error;
  if (!fs::is_directory(parent, error))
    return makeError(path + ": the folder " + parent.string() + " does not exist");
  const fs::file_status status = fs::status(target, error);
  if (format == ExportFormat::PngSequence) {
    if (fs::exists(status) && !fs::is_directory(status))
      return makeError(path + ": exists and is not a folder");
    if (fs::is_directory(status) && !fs::is_empty(target, error))
      return makeError(path + ": the folder is not empty (PNG frames go to a new or empty folder)");
  } else if (fs::is_directory(status)) {
    return makeError(path + ": is a folder; give a file name ending in ." + exportFormatName(format));
  }
  return {};
}

}  // namespace

struct VideoEncoder::State {
  std::string path;
  std::string temporary;  // the file, or for PNG frames the folder, being written
  VideoExportOptions options;
  int width = 0, height = 0;
  int out_width = 0, out_height = 0;
  libav::ScaleContextPtr scaler;  // none for GIF: its filter graphs scale
  libav::FramePtr scaled;         // codec input (not for GIF)
  libav::CodecContextPtr codec;
  libav::OutputContextPtr muxer;  // none for PNG frames
  AVStream* stream = nullptr;     // owned by muxer
  libav::PacketPtr packet;
  std::unique_ptr<GifPaletteFilter> palette;
  std::int64_t frames = 0;
  std::int64_t encoded = 0;
  std::int64_t packets = 0;
  bool finished = false;

  ~State() {
    if (finished) return;
    // Unfinished (cancelled or failed): close the handles, then remove all that was written.
    palette.reset();
    muxer.reset();
    codec.reset();
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
  }

  Error fail(const std::string& what) const { return makeError(path + ": " + what); }
  Error fail(const std::string& what, int code) const {
    return makeError(path + ": " + what + ": " + libav::libavErrorString(code));
  }

  /// GIF timestamps are in hundredths of a second: frame i shows at round(i·100/fps).
  std::int64_t gifPts(std::int64_t index) const { return std::llround(index * 100.0 / options.fps); }

  Status writePacket() {
    if (options.format == ExportFormat::PngSequence) {
      char name[32];
      std::snprintf(name, sizeof name, "frame_%06lld.png", static_cast<long long>(packets));
      const std::string file = (fs::path(temporary) / name).string();
      const Status written = writeWholeFile(file, packet->data, packet->size);
      av_packet_unref(packet.get());
      if (!written) return fail("cannot write frame " + std::to_string(packets) + ": " + written.error());
      ++packets;
      return {};
    }
    if (options.format == ExportFormat::Gif) {
      // The muxer turns each packet's duration into the frame's delay.
      packet->duration = gifPts(packets + 1) - gifPts(packets);
    }
    av_packet_rescale_ts(packet.get(), codec->time_base, stream->time_base);
    packet->stream_index = stream->index;
    ++packets;
    const int code = av_interleaved_write_frame(muxer.get(), packet.get());
    if (code < 0) return fail("cannot write", code);
    return {};
  }

  // open()'s steps, in order.
  Status openCodec(const AVCodec* encoder, const std::string& encoder_name, AVPixelFormat pixel_format,
                   AVRational frame_rate);
  Status openStream(AVRational frame_rate);
  Status openConverter(AVPixelFormat pixel_format);

  /// Sends one frame (nullptr drains) and writes every packet that comes out.
  Status encode(const AVFrame* frame) {
    int code = avcodec_send_frame(codec.get(), frame);
    if (code < 0) return fail("encoding a frame failed", code);
    for (;;) {
      code = avcodec_receive_packet(codec.get(), packet.get());
      if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return {};
      if (code < 0) return fail("encoding a frame failed", code);
      if (Status written = writePacket(); !written) return written;
    }
  }
};

VideoEncoder::VideoEncoder(std::unique_ptr<State> state) : state_(std::move(state)) {}
VideoEncoder::~VideoEncoder() = default;

Result<std::unique_ptr<VideoEncoder>> VideoEncoder::open(const std::string& path, int width, int height,
                                                         const VideoExportOptions& options) {
  if (Status valid = validateExportOptions(options); !valid) return makeError(path + ": " + valid.error());
  // libav logs to stderr at "info" by default; every failure reaches the user through our Error,
  // so quieten it unless the program chose a level of its own.
  if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_QUIET);
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384)
    return makeError(path + ": frames of " + std::to_string(width) + "x" + std::to_string(height) +
                     " pixels cannot be exported");
  if (Status destination = checkDestination(path, options.format); !destination) return makeError(destination.error());

  auto state = std::make_unique<State>();
  State& s = *state;
  s.path = path;
  s.temporary = temporaryPathFor(path);
  s.options = options;
  s.width = width;
  s.height = height;
  std::tie(s.out_width, s.out_height) = outputSizeFor(width, height, options);

  const std::string encoder_name = options.encoder.empty() ? defaultEncoder(options.format) : options.encoder;
  const AVCodec* encoder = avcodec_find_encoder_by_name(encoder_name.c_str());
  if (encoder == nullptr)
    return s.fail("this FFmpeg has no \"" + encoder_name + "\" encoder (see `ffmpeg -encoders`)");
  if (encoder->type != AVMEDIA_TYPE_VIDEO) return s.fail("\"" + encoder_name + "\" is not a video encoder");

  const AVPixelFormat pixel_format = codecPixelFormat(options.format);
  const AVRational frame_rate = av_d2q(options.fps, 1000000);
  if (Status opened = s.openCodec(encoder, encoder_name, pixel_format, frame_rate); !opened)
    return makeError(opened.error());
  if (Status opened = s.openStream(frame_rate); !opened) return makeError(opened.error());
  if (Status opened = s.openConverter(pixel_format); !opened) return makeError(opened.error());
  return std::unique_ptr<VideoEncoder>(new VideoEncoder(std::move(state)));
}

// The encoder's context and options, and where it writes: the muxer, or the PNG folder.
Status VideoEncoder::State::openCodec(const AVCodec* encoder, const std::string& encoder_name,
                                      AVPixelFormat pixel_format, AVRational frame_rate) {
  codec.reset(avcodec_alloc_context3(encoder));
  packet.reset(av_packet_alloc());
  if (!codec || !packet) return fail("out of memory");
  AVCodecContext* c = codec.get();
  c->width = out_width;
  c->height = out_height;
  c->pix_fmt = pixel_format;
  c->sample_aspect_ratio = AVRational{1, 1};
  c->framerate = frame_rate;
  c->time_base = options.format == ExportFormat::Gif ? AVRational{1, 100} : av_inv_q(frame_rate);
  c->thread_count = 0;  // one per core
  if (options.format == ExportFormat::Mp4 || options.format == ExportFormat::WebM) {
    // swscale converts with the BT.601 matrix into limited range; say so in the stream.
    c->colorspace = AVCOL_SPC_SMPTE170M;
    c->color_range = AVCOL_RANGE_MPEG;
    c->color_primaries = AVCOL_PRI_BT709;
    c->color_trc = AVCOL_TRC_IEC61966_2_1;
  }

  AVDictionary* codec_options_raw = nullptr;
  if (options.format == ExportFormat::Mp4 && encoder_name == "libx264") {
    av_dict_set(&codec_options_raw, "preset", options.preset.c_str(), 0);
    av_dict_set_int(&codec_options_raw, "crf", options.crf < 0 ? 20 : options.crf, 0);
  }
  if (options.format == ExportFormat::WebM && encoder_name == "libvpx-vp9") {
    // Constant quality needs a zero bitrate; cpu-used 4 and row threading keep VP9 practical.
    av_dict_set_int(&codec_options_raw, "crf", options.crf < 0 ? 32 : options.crf, 0);
    av_dict_set(&codec_options_raw, "b", "0", 0);
    av_dict_set(&codec_options_raw, "deadline", "good", 0);
    av_dict_set(&codec_options_raw, "cpu-used", "4", 0);
    av_dict_set(&codec_options_raw, "row-mt", "1", 0);
  }
  std::unique_ptr<AVDictionary, libav::DictionaryDeleter> codec_options(codec_options_raw);

  std::error_code error;
  if (options.format == ExportFormat::PngSequence) {
    fs::remove_all(temporary, error);
    if (!fs::create_directory(temporary, error))
      return fail("cannot create the folder " + temporary + ": " + error.message());
  } else {
    AVFormatContext* opened = nullptr;
    int code = avformat_alloc_output_context2(&opened, nullptr, muxerName(options.format), temporary.c_str());
    if (code < 0) return fail("cannot set up the " + exportFormatName(options.format) + " writer", code);
    muxer.reset(opened);
    if (muxer->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  }

  codec_options_raw = codec_options.release();
  const int code = avcodec_open2(c, encoder, &codec_options_raw);
  codec_options.reset(codec_options_raw);
  if (code < 0) return fail("cannot open the " + encoder_name + " encoder", code);
  return {};
}

// The muxer's one video stream, its file and header (none for a PNG sequence).
Status VideoEncoder::State::openStream(AVRational frame_rate) {
  if (!muxer) return {};
  stream = avformat_new_stream(muxer.get(), nullptr);
  if (stream == nullptr) return fail("out of memory");
  stream->time_base = codec->time_base;
  stream->avg_frame_rate = frame_rate;
  stream->r_frame_rate = frame_rate;
  int code = avcodec_parameters_from_context(stream->codecpar, codec.get());
  if (code < 0) return fail("cannot set up the stream", code);
  code = avio_open(&muxer->pb, temporary.c_str(), AVIO_FLAG_WRITE);
  if (code < 0) return fail("cannot create the file", code);
  AVDictionary* muxer_options_raw = nullptr;
  if (options.format == ExportFormat::Mp4) av_dict_set(&muxer_options_raw, "movflags", "+faststart", 0);
  if (options.format == ExportFormat::Gif) av_dict_set(&muxer_options_raw, "loop", "0", 0);  // forever
  code = avformat_write_header(muxer.get(), &muxer_options_raw);
  av_dict_free(&muxer_options_raw);
  if (code < 0) return fail("cannot write the header", code);
  return {};
}

// How frames reach the encoder: GIF's palette filter, or swscale to the codec's size and format.
Status VideoEncoder::State::openConverter(AVPixelFormat pixel_format) {
  if (options.format == ExportFormat::Gif) {
    const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    auto made = GifPaletteFilter::create(width, height, out_width, out_height, options.scale_filter, options.gif_dither,
                                         threads, options.gif_max_kept_bytes);
    if (!made) return fail(made.error());
    palette = std::move(*made);
    return {};
  }
  const int scale_flags =
      (options.scale_filter == ScaleFilter::Nearest ? SWS_POINT : SWS_LANCZOS) | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT;
  scaler.reset(sws_getContext(width, height, AV_PIX_FMT_RGB24, out_width, out_height, pixel_format, scale_flags,
                              nullptr, nullptr, nullptr));
  scaled = libav::allocateFrame(out_width, out_height, pixel_format);
  if (!scaler || !scaled)
    return fail("cannot set up scaling to " + std::to_string(out_width) + "x" + std::to_string(out_height));
  return {};
}

Status VideoEncoder::addFrame(const std::uint8_t* rgb, int stride) {
  State& s = *state_;
  if (s.finished) return s.fail("the export is already finished");
  const std::int64_t index = s.frames++;
  if (s.palette) {
    if (Status added = s.palette->add(rgb, stride, s.gifPts(index)); !added) return s.fail(added.error());
    return {};
  }
  const int code = av_frame_make_writable(s.scaled.get());
  if (code < 0) return s.fail("out of memory", code);
  const std::uint8_t* const source[] = {rgb};
  const int source_stride[] = {stride};
  sws_scale(s.scaler.get(), source, source_stride, 0, s.height, s.scaled->data, s.scaled->linesize);
  s.scaled->pts = index;
  ++s.encoded;
  return s.encode(s.scaled.get());
}

Status VideoEncoder::finish(const std::function<bool(std::int64_t, std::int64_t)>& progress) {
  State& s = *state_;
  if (s.finished) return {};
  if (s.frames == 0) return s.fail("no frames to export");
  if (s.palette) {
    const auto encode = [&s](AVFrame* frame) {
      ++s.encoded;
      return s.encode(frame);
    };
    Status mapped = s.palette->finish(encode, progress);
    if (!mapped) {
      if (mapped.error().rfind(s.path + ": ", 0) == 0) return mapped;
      return s.fail(mapped.error());
    }
  }
  if (Status drained = s.encode(nullptr); !drained) return drained;

  if (s.muxer) {
    int code = av_write_trailer(s.muxer.get());
    if (code < 0) return s.fail("cannot finish the file", code);
    if (s.muxer->pb->error < 0) return s.fail("cannot write", s.muxer->pb->error);
    code = avio_closep(&s.muxer->pb);
    if (code < 0) return s.fail("cannot write", code);
    s.muxer.reset();
    if (Status committed = commitTemporaryFile(s.temporary, s.path); !committed) return makeError(committed.error());
  } else {
    std::error_code error;
    if (fs::is_directory(s.path, error)) fs::remove(s.path, error);  // checked empty at open
    fs::rename(s.temporary, s.path, error);
    if (error) return s.fail("cannot move the frames into place: " + error.message());
  }
  s.finished = true;
  return {};
}

int VideoEncoder::outputWidth() const { return state_->out_width; }
int VideoEncoder::outputHeight() const { return state_->out_height; }
std::int64_t VideoEncoder::framesAdded() const { return state_->frames; }
std::int64_t VideoEncoder::framesEncoded() const { return state_->encoded; }
std::string VideoEncoder::encoderName() const { return state_->codec->codec->name; }

}  // namespace streetgan
