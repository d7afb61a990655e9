//! VP8 on the system's libvpx, configured as c-toxcore 0.2.18's `toxav/video.c` does:
//! the encoder of `vc_init_encoder_cfg` (one pass, VBR, no lag, error resilient with
//! independent partitions, automatic key frames at most [`KF_MAX_DIST`] apart, 4 threads,
//! spatial resizing allowed, `VP8E_SET_CPUUSED` 16) and the decoder of `vc_new` (4 threads,
//! post-processing off).
//!
//! libvpx has no maintained safe wrapper; this module is one. Each context lives in a `Box`
//! so its address never changes while libvpx holds it, and is destroyed exactly once in `Drop`.

use crate::Error;
use std::ffi::CStr;
use std::os::raw::{c_int, c_long, c_uint, c_ulong};
use vpx_sys as vpx;

/// video.c's `VIDEO_BITRATE_INITIAL_VALUE` (kbit/s).
pub const INITIAL_BIT_RATE_KBPS: u32 = 5000;
/// video.c's `VPX_MAX_DIST_START`: a key frame at least every 40 frames.
pub const KF_MAX_DIST: u32 = 40;
/// video.c's `VPX_MAX_ENCODER_THREADS` and `VPX_MAX_DECODER_THREADS`.
pub const THREADS: u32 = 4;
/// video.c's `VP8E_SET_CPUUSED_VALUE`: the fastest speed setting.
pub const CPU_USED: c_int = 16;
/// toxav.c's `MAX_ENCODE_TIME_US` (1 s / `WANTED_MAX_ENCODER_FPS` 40): a soft deadline
/// shorter than a frame's duration, which puts libvpx in real-time mode.
pub const ENCODE_DEADLINE_US: c_ulong = 1_000_000 / 40;
/// video.c's `MAX_DECODE_TIME_US` (1 s / `WANTED_MAX_DECODER_FPS` 40).
pub const DECODE_DEADLINE_US: c_long = 1_000_000 / 40;
/// toxav.c's `VIDEO_SEND_X_KEYFRAMES_FIRST`: the first 7 frames of a call are key frames, so a
/// receiver that lost the first can start from a later one.
pub const KEYFRAMES_FIRST: u64 = 7;
/// VP8's largest dimension (14 bits in the key frame header, RFC 6386 §9.1).
pub const MAX_DIMENSION: u32 = 16383;
/// The largest picture the decoder accepts: 4096 × 2304 (above 4K UHD). A key frame's header
/// makes libvpx allocate several frame buffers of its declared size; without this bound a
/// 20-byte packet declaring 16383 × 16383 would cost over a gigabyte.
pub const MAX_PICTURE_PIXELS: u64 = 4096 * 2304;
/// The largest encoded frame the decoder accepts (RTP's 32-bit length allows more; no VP8
/// frame of an accepted picture size comes near this).
pub const MAX_FRAME_LEN: usize = 16 * 1024 * 1024;

/// Borrowed I420 planes: Y `width × height`, U and V `ceil(width / 2) × ceil(height / 2)`,
/// each tightly packed.
#[derive(Debug, Clone, Copy)]
pub struct Planes<'a> {
    /// Pixels.
    pub width: u16,
    /// Pixels.
    pub height: u16,
    /// Luma.
    pub y: &'a [u8],
    /// Chroma U.
    pub u: &'a [u8],
    /// Chroma V.
    pub v: &'a [u8],
}

/// A decoded I420 picture, planes tightly packed (no stride padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// Pixels.
    pub width: u16,
    /// Pixels.
    pub height: u16,
    /// Luma, `width × height`.
    pub y: Vec<u8>,
    /// Chroma U, `chroma_width × chroma_height`.
    pub u: Vec<u8>,
    /// Chroma V.
    pub v: Vec<u8>,
}

/// One encoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vp8Frame {
    /// The VP8 bitstream of the frame.
    pub data: Vec<u8>,
    /// `VPX_FRAME_IS_KEY`.
    pub keyframe: bool,
}

/// The chroma plane size of a `width × height` I420 picture (odd sizes rounded up).
pub fn chroma_size(width: u16, height: u16) -> (usize, usize) {
    (
        usize::from(width).div_ceil(2),
        usize::from(height).div_ceil(2),
    )
}

fn check_size(width: u32, height: u32) -> Result<(), Error> {
    let pixels = u64::from(width) * u64::from(height);
    if width == 0
        || height == 0
        || width > MAX_DIMENSION
        || height > MAX_DIMENSION
        || pixels > MAX_PICTURE_PIXELS
    {
        return Err(Error::PictureSize { width, height });
    }
    Ok(())
}

fn vpx_error(
    call: &'static str,
    code: vpx::vpx_codec_err_t,
    ctx: *mut vpx::vpx_codec_ctx_t,
) -> Error {
    // SAFETY: `vpx_codec_err_to_string` returns a static NUL-terminated string for any code.
    let mut detail = unsafe { CStr::from_ptr(vpx::vpx_codec_err_to_string(code)) }
        .to_string_lossy()
        .into_owned();
    if !ctx.is_null() {
        // SAFETY: `ctx` is an initialised context owned by the caller; the detail is null or a
        // NUL-terminated string owned by the context, copied out before the context is used
        // again.
        let extra = unsafe { vpx::vpx_codec_error_detail(ctx) };
        if !extra.is_null() {
            // SAFETY: non-null and NUL-terminated, see above.
            let extra = unsafe { CStr::from_ptr(extra) }.to_string_lossy();
            detail.push_str(": ");
            detail.push_str(&extra);
        }
    }
    Error::Vpx { call, detail }
}

fn check(
    call: &'static str,
    code: vpx::vpx_codec_err_t,
    ctx: *mut vpx::vpx_codec_ctx_t,
) -> Result<(), Error> {
    if code == vpx::vpx_codec_err_t::VPX_CODEC_OK {
        Ok(())
    } else {
        Err(vpx_error(call, code, ctx))
    }
}

/// A zeroed context: libvpx's `*_init_ver` functions expect a caller-allocated context and fill
/// every field.
fn new_context() -> Box<vpx::vpx_codec_ctx_t> {
    // SAFETY: `vpx_codec_ctx_t` is a C struct of integers, raw pointers and a union of raw
    // pointers; all-zero bytes are a valid value of each (null pointers, zero flags).
    Box::new(unsafe { std::mem::zeroed() })
}

/// video.c's `vc_init_encoder_cfg`: libvpx's defaults for VP8 with c-toxcore's changes.
fn encoder_config(
    bit_rate_kbps: u32,
    width: u32,
    height: u32,
) -> Result<vpx::vpx_codec_enc_cfg_t, Error> {
    let mut cfg = std::mem::MaybeUninit::<vpx::vpx_codec_enc_cfg_t>::uninit();
    // SAFETY: `vpx_codec_vp8_cx` returns the static VP8 encoder interface; `cfg` is writable
    // storage for one configuration, which the call fills completely on success; usage 0 is
    // the only usage VP8 defines.
    let code =
        unsafe { vpx::vpx_codec_enc_config_default(vpx::vpx_codec_vp8_cx(), cfg.as_mut_ptr(), 0) };
    check("vpx_codec_enc_config_default", code, std::ptr::null_mut())?;
    // SAFETY: `vpx_codec_enc_config_default` succeeded, so every field is written.
    let mut cfg = unsafe { cfg.assume_init() };
    cfg.rc_target_bitrate = bit_rate_kbps;
    cfg.g_w = width;
    cfg.g_h = height;
    cfg.g_pass = vpx::vpx_enc_pass::VPX_RC_ONE_PASS;
    cfg.g_error_resilient = vpx::VPX_ERROR_RESILIENT_DEFAULT | vpx::VPX_ERROR_RESILIENT_PARTITIONS;
    cfg.g_lag_in_frames = 0;
    cfg.kf_min_dist = 0;
    cfg.kf_mode = vpx::vpx_kf_mode::VPX_KF_AUTO;
    cfg.rc_end_usage = vpx::vpx_rc_mode::VPX_VBR;
    cfg.kf_max_dist = KF_MAX_DIST;
    cfg.g_threads = THREADS;
    cfg.rc_resize_allowed = 1;
    cfg.rc_resize_up_thresh = 40;
    cfg.rc_resize_down_thresh = 5;
    Ok(cfg)
}

/// libvpx takes kbit/s. c-toxcore passes its bit/s value unconverted (toxav.c multiplies the
/// API's kbit/s by 1000 into `rc_target_bitrate`), which leaves its encoder unconstrained; we
/// convert, so the bit rate the controller picks is the one the encoder aims for.
fn kbps(bit_rate: u32) -> u32 {
    (bit_rate / 1000).max(1)
}

/// A VP8 encoder (video.c's encoder half of `VCSession`).
pub struct Vp8Encoder {
    ctx: Box<vpx::vpx_codec_ctx_t>,
    cfg: vpx::vpx_codec_enc_cfg_t,
    bit_rate: u32,
    width: u16,
    height: u16,
    /// Frames encoded by this encoder (and the ones it replaced on resize): the pts, and the
    /// count behind [`KEYFRAMES_FIRST`].
    frames: u64,
}

// SAFETY: a libvpx context is not tied to the thread that created it; it is only used through
// `&mut self`, so never from two threads at once. The raw pointers inside are owned by it.
unsafe impl Send for Vp8Encoder {}

impl std::fmt::Debug for Vp8Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vp8Encoder")
            .field("bit_rate", &self.bit_rate)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("frames", &self.frames)
            .finish()
    }
}

fn init_encoder(cfg: &vpx::vpx_codec_enc_cfg_t) -> Result<Box<vpx::vpx_codec_ctx_t>, Error> {
    let mut ctx = new_context();
    // SAFETY: `ctx` is a zeroed, boxed context that outlives the call; `cfg` is a complete
    // configuration (libvpx copies it); the ABI version is the one the bindings were generated
    // for, matching the system's libvpx 1.12 that the build script found.
    let code = unsafe {
        vpx::vpx_codec_enc_init_ver(
            &mut *ctx,
            vpx::vpx_codec_vp8_cx(),
            cfg,
            vpx::VPX_CODEC_USE_FRAME_THREADING as vpx::vpx_codec_flags_t,
            vpx::VPX_ENCODER_ABI_VERSION as c_int,
        )
    };
    // On failure libvpx has already destroyed what it allocated, and the context's detail may
    // point into that: the error is reported without it.
    check("vpx_codec_enc_init", code, std::ptr::null_mut())?;
    let encoder = EncoderContext(ctx);
    let mut ctx = encoder;
    // SAFETY: `ctx` is an initialised encoder; VP8E_SET_CPUUSED takes one int argument.
    let code = unsafe {
        vpx::vpx_codec_control_(
            &mut *ctx.0,
            vpx::vp8e_enc_control_id::VP8E_SET_CPUUSED as c_int,
            CPU_USED,
        )
    };
    check("vpx_codec_control(VP8E_SET_CPUUSED)", code, &mut *ctx.0)?;
    Ok(ctx.take())
}

/// An initialised context destroyed on drop unless taken: the error paths of creation.
struct EncoderContext(Box<vpx::vpx_codec_ctx_t>);

impl EncoderContext {
    fn take(mut self) -> Box<vpx::vpx_codec_ctx_t> {
        let ctx = std::mem::replace(&mut self.0, new_context());
        std::mem::forget(self);
        ctx
    }
}

impl Drop for EncoderContext {
    fn drop(&mut self) {
        // SAFETY: the context was initialised by `vpx_codec_*_init_ver` and not destroyed yet.
        unsafe { vpx::vpx_codec_destroy(&mut *self.0) };
    }
}

impl Vp8Encoder {
    /// An encoder for `width × height` pictures at `bit_rate` bits/s (video.c's `vc_new`,
    /// then `vc_reconfigure_encoder` for the call's first picture).
    pub fn new(bit_rate: u32, width: u16, height: u16) -> Result<Self, Error> {
        check_size(u32::from(width), u32::from(height))?;
        let cfg = encoder_config(kbps(bit_rate), u32::from(width), u32::from(height))?;
        let ctx = init_encoder(&cfg)?;
        Ok(Vp8Encoder {
            ctx,
            cfg,
            bit_rate,
            width,
            height,
            frames: 0,
        })
    }

    /// Bits per second.
    pub fn bit_rate(&self) -> u32 {
        self.bit_rate
    }

    /// The picture size the encoder is configured for.
    pub fn size(&self) -> (u16, u16) {
        (self.width, self.height)
    }

    /// video.c's `vc_reconfigure_encoder`: the bit rate changed in place
    /// (`vpx_codec_enc_config_set`); a new encoder when the picture size changes. On error the
    /// encoder is unchanged.
    pub fn reconfigure(&mut self, bit_rate: u32, width: u16, height: u16) -> Result<(), Error> {
        if width == self.width && height == self.height {
            return self.set_bit_rate(bit_rate);
        }
        check_size(u32::from(width), u32::from(height))?;
        let cfg = encoder_config(kbps(bit_rate), u32::from(width), u32::from(height))?;
        let ctx = init_encoder(&cfg)?;
        // The old context is destroyed by dropping the replaced box's owner below.
        let old = std::mem::replace(&mut self.ctx, ctx);
        drop(EncoderContext(old));
        self.cfg = cfg;
        self.bit_rate = bit_rate;
        self.width = width;
        self.height = height;
        Ok(())
    }

    /// Changes the target bit rate without recreating the encoder.
    pub fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), Error> {
        if bit_rate == self.bit_rate {
            return Ok(());
        }
        let mut cfg = self.cfg;
        cfg.rc_target_bitrate = kbps(bit_rate);
        // SAFETY: `self.ctx` is an initialised encoder; `cfg` is a complete configuration for
        // the same size, which libvpx copies.
        let code = unsafe { vpx::vpx_codec_enc_config_set(&mut *self.ctx, &cfg) };
        check("vpx_codec_enc_config_set", code, &mut *self.ctx)?;
        self.cfg = cfg;
        self.bit_rate = bit_rate;
        Ok(())
    }

    /// Encodes `planes` (recreating the encoder first if their size differs, as toxav.c does
    /// per frame), as a key frame when `keyframe` or when it is among the first
    /// [`KEYFRAMES_FIRST`], appending what libvpx yields to `out`.
    pub fn encode(
        &mut self,
        planes: &Planes<'_>,
        keyframe: bool,
        out: &mut Vec<Vp8Frame>,
    ) -> Result<(), Error> {
        let (width, height) = (planes.width, planes.height);
        check_size(u32::from(width), u32::from(height))?;
        let luma = usize::from(width) * usize::from(height);
        let (cw, ch) = chroma_size(width, height);
        for (name, plane, needed) in [
            ("y", planes.y, luma),
            ("u", planes.u, cw * ch),
            ("v", planes.v, cw * ch),
        ] {
            if plane.len() < needed {
                return Err(Error::PlaneTooShort {
                    plane: name,
                    len: plane.len(),
                    needed,
                });
            }
        }
        if (width, height) != (self.width, self.height) {
            self.reconfigure(self.bit_rate, width, height)?;
        }
        let image = Image::copy_of(planes)?;
        let flags = if keyframe || self.frames < KEYFRAMES_FIRST {
            vpx::VPX_EFLAG_FORCE_KF
        } else {
            0
        };
        let pts = i64::try_from(self.frames).unwrap_or(i64::MAX);
        // SAFETY: `self.ctx` is an initialised encoder; `image.0` is a live I420 image of the
        // configured size, read during the call only; duration 1 in the default time base.
        let code = unsafe {
            vpx::vpx_codec_encode(
                &mut *self.ctx,
                image.0,
                pts,
                1,
                flags as vpx::vpx_enc_frame_flags_t,
                ENCODE_DEADLINE_US,
            )
        };
        drop(image);
        check("vpx_codec_encode", code, &mut *self.ctx)?;
        self.frames += 1;
        let mut iter: vpx::vpx_codec_iter_t = std::ptr::null();
        loop {
            // SAFETY: `self.ctx` is an initialised encoder and `iter` the iterator libvpx
            // started from null; the packet stays valid until the next call on the context.
            let packet = unsafe { vpx::vpx_codec_get_cx_data(&mut *self.ctx, &mut iter) };
            if packet.is_null() {
                break;
            }
            // SAFETY: non-null packets point into the context, valid until the next call.
            let packet = unsafe { &*packet };
            if packet.kind != vpx::vpx_codec_cx_pkt_kind::VPX_CODEC_CX_FRAME_PKT {
                continue;
            }
            // SAFETY: for `VPX_CODEC_CX_FRAME_PKT` the union holds `frame`.
            let frame = unsafe { packet.data.frame };
            let len = usize::try_from(frame.sz).map_err(|_| Error::BadPicture("frame size"))?;
            let data = if len == 0 || frame.buf.is_null() {
                Vec::new()
            } else {
                // SAFETY: libvpx's frame packet describes `sz` readable bytes at `buf`, owned by
                // the context until the next call; they are copied out here.
                unsafe { std::slice::from_raw_parts(frame.buf as *const u8, len) }.to_vec()
            };
            out.push(Vp8Frame {
                data,
                keyframe: frame.flags & vpx::VPX_FRAME_IS_KEY != 0,
            });
        }
        Ok(())
    }
}

impl Drop for Vp8Encoder {
    fn drop(&mut self) {
        // SAFETY: `self.ctx` is an initialised encoder, destroyed only here.
        unsafe { vpx::vpx_codec_destroy(&mut *self.ctx) };
    }
}

/// An I420 image libvpx allocated (`vpx_img_alloc`, as toxav.c does per frame), freed on drop.
struct Image(*mut vpx::vpx_image_t);

impl Image {
    /// A copy of `planes` (already checked long enough for their size).
    fn copy_of(planes: &Planes<'_>) -> Result<Self, Error> {
        let (width, height) = (u32::from(planes.width), u32::from(planes.height));
        // SAFETY: a null image asks libvpx to allocate the descriptor and the pixels; the
        // alignment 1 is valid; the result is null or an image owned by the caller.
        let img = unsafe {
            vpx::vpx_img_alloc(
                std::ptr::null_mut(),
                vpx::vpx_img_fmt::VPX_IMG_FMT_I420,
                width,
                height,
                1,
            )
        };
        if img.is_null() {
            return Err(Error::Vpx {
                call: "vpx_img_alloc",
                detail: "out of memory".into(),
            });
        }
        let image = Image(img);
        // SAFETY: `img` is a live image libvpx allocated.
        let desc = unsafe { &*img };
        let (cw, ch) = chroma_size(planes.width, planes.height);
        let layout = [
            (
                planes.y,
                usize::from(planes.width),
                usize::from(planes.height),
            ),
            (planes.u, cw, ch),
            (planes.v, cw, ch),
        ];
        for (index, (source, row_len, rows)) in layout.into_iter().enumerate() {
            let stride =
                usize::try_from(desc.stride[index]).map_err(|_| Error::BadPicture("stride"))?;
            let base = desc.planes[index];
            if base.is_null() || stride < row_len {
                return Err(Error::BadPicture("allocated plane"));
            }
            for row in 0..rows {
                // SAFETY: libvpx allocated each plane of an I420 image with `stride` bytes per
                // row for `ceil(h / 2)` chroma rows and `h` luma rows (its size rounded up to
                // even), so row `row` has `row_len <= stride` writable bytes; the source row
                // is inside `source`, checked long enough by the caller.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        source.as_ptr().add(row * row_len),
                        base.add(row * stride),
                        row_len,
                    );
                }
            }
        }
        Ok(image)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: the image was allocated by `vpx_img_alloc` and is freed only here.
        unsafe { vpx::vpx_img_free(self.0) };
    }
}

/// A VP8 decoder (video.c's decoder half of `VCSession`).
pub struct Vp8Decoder {
    ctx: Box<vpx::vpx_codec_ctx_t>,
}

// SAFETY: as for `Vp8Encoder`: the context is only used through `&mut self`.
unsafe impl Send for Vp8Decoder {}

impl std::fmt::Debug for Vp8Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vp8Decoder").finish_non_exhaustive()
    }
}

impl Vp8Decoder {
    /// video.c's `vc_new`: [`THREADS`] threads, frame threading, post-processing switched off.
    pub fn new() -> Result<Self, Error> {
        // video.c's `VIDEO_CODEC_DECODER_MAX_WIDTH/HEIGHT`: placeholders, the stream sets the size.
        let cfg = vpx::vpx_codec_dec_cfg_t {
            threads: THREADS,
            w: 800,
            h: 600,
        };
        let init = |flags: u32| {
            let mut ctx = new_context();
            // SAFETY: `ctx` is a zeroed, boxed context; `cfg` is complete and copied by libvpx;
            // the ABI version matches the bindings (libvpx 1.12).
            let code = unsafe {
                vpx::vpx_codec_dec_init_ver(
                    &mut *ctx,
                    vpx::vpx_codec_vp8_dx(),
                    &cfg,
                    flags as vpx::vpx_codec_flags_t,
                    vpx::VPX_DECODER_ABI_VERSION as c_int,
                )
            };
            (ctx, code)
        };
        let (mut ctx, mut code) =
            init(vpx::VPX_CODEC_USE_FRAME_THREADING | vpx::VPX_CODEC_USE_POSTPROC);
        if code == vpx::vpx_codec_err_t::VPX_CODEC_INCAPABLE {
            (ctx, code) = init(vpx::VPX_CODEC_USE_FRAME_THREADING);
        }
        // As for the encoder: a failed init is already cleaned up, its detail not trusted.
        check("vpx_codec_dec_init", code, std::ptr::null_mut())?;
        let mut off = vpx::vp8_postproc_cfg_t {
            post_proc_flag: 0,
            deblocking_level: 0,
            noise_level: 0,
        };
        // SAFETY: `ctx` is an initialised decoder; VP8_SET_POSTPROC takes a pointer to a
        // `vp8_postproc_cfg_t`, read during the call. video.c ignores a failure (a decoder
        // built without post-processing), and so do we.
        let _ = unsafe {
            vpx::vpx_codec_control_(
                &mut *ctx,
                vpx::vp8_com_control_id::VP8_SET_POSTPROC as c_int,
                &mut off as *mut vpx::vp8_postproc_cfg_t,
            )
        };
        Ok(Vp8Decoder { ctx })
    }

    /// Decodes one frame, appending every picture libvpx yields (`vpx_codec_get_frame`) to
    /// `out`, planes copied out tightly packed. A corrupt or unsupported frame is an error;
    /// the decoder stays usable for the next key frame.
    pub fn decode(&mut self, data: &[u8], out: &mut Vec<Picture>) -> Result<(), Error> {
        if data.is_empty() {
            return Err(Error::EmptyPacket);
        }
        if data.len() > MAX_FRAME_LEN {
            return Err(Error::PacketTooLarge(data.len()));
        }
        let len = c_uint::try_from(data.len()).map_err(|_| Error::PacketTooLarge(data.len()))?;
        let mut info = vpx::vpx_codec_stream_info_t {
            sz: std::mem::size_of::<vpx::vpx_codec_stream_info_t>() as c_uint,
            w: 0,
            h: 0,
            is_kf: 0,
        };
        // SAFETY: the VP8 interface is static; `data` is `len` readable bytes; `info` is a
        // stream-info struct whose `sz` says its size, written by the call.
        let code = unsafe {
            vpx::vpx_codec_peek_stream_info(vpx::vpx_codec_vp8_dx(), data.as_ptr(), len, &mut info)
        };
        // libvpx's peek reads key frame headers only and reports anything else as
        // unsupported; only a key frame it parsed is checked here, the decoder judges the rest.
        if code == vpx::vpx_codec_err_t::VPX_CODEC_OK && info.is_kf != 0 {
            check_size(info.w, info.h)?;
        }
        // SAFETY: `self.ctx` is an initialised decoder; `data` is `len` readable bytes that
        // libvpx reads during the call only; no user data.
        let code = unsafe {
            vpx::vpx_codec_decode(
                &mut *self.ctx,
                data.as_ptr(),
                len,
                std::ptr::null_mut(),
                DECODE_DEADLINE_US,
            )
        };
        check("vpx_codec_decode", code, &mut *self.ctx)?;
        let mut iter: vpx::vpx_codec_iter_t = std::ptr::null();
        loop {
            // SAFETY: `self.ctx` is an initialised decoder and `iter` started from null; the
            // image stays owned by the decoder and valid until the next decode.
            let img = unsafe { vpx::vpx_codec_get_frame(&mut *self.ctx, &mut iter) };
            if img.is_null() {
                break;
            }
            // SAFETY: non-null images returned by `vpx_codec_get_frame` are valid until the next
            // call that decodes.
            out.push(copy_picture(unsafe { &*img })?);
        }
        Ok(())
    }
}

impl Drop for Vp8Decoder {
    fn drop(&mut self) {
        // SAFETY: `self.ctx` is an initialised decoder, destroyed only here.
        unsafe { vpx::vpx_codec_destroy(&mut *self.ctx) };
    }
}

/// Copies a decoded image's visible area out, tightly packed.
fn copy_picture(img: &vpx::vpx_image_t) -> Result<Picture, Error> {
    if img.fmt != vpx::vpx_img_fmt::VPX_IMG_FMT_I420 {
        return Err(Error::BadPicture("not I420"));
    }
    let width = u16::try_from(img.d_w).map_err(|_| Error::BadPicture("width"))?;
    let height = u16::try_from(img.d_h).map_err(|_| Error::BadPicture("height"))?;
    let (cw, ch) = chroma_size(width, height);
    let layout = [
        (usize::from(width), usize::from(height)),
        (cw, ch),
        (cw, ch),
    ];
    let mut planes: [Vec<u8>; 3] = Default::default();
    for (index, (row_len, rows)) in layout.into_iter().enumerate() {
        let stride =
            usize::try_from(img.stride[index]).map_err(|_| Error::BadPicture("negative stride"))?;
        let base = img.planes[index];
        if base.is_null() || stride < row_len {
            return Err(Error::BadPicture("plane"));
        }
        let plane = &mut planes[index];
        plane.reserve_exact(row_len * rows);
        for row in 0..rows {
            // SAFETY: a decoded I420 image has `ceil(d_h / 2)` chroma rows and `d_h` luma rows
            // of `stride >= row_len` bytes each, readable until the next decode.
            let line = unsafe { std::slice::from_raw_parts(base.add(row * stride), row_len) };
            plane.extend_from_slice(line);
        }
    }
    let [y, u, v] = planes;
    Ok(Picture {
        width,
        height,
        y,
        u,
        v,
    })
}
