//! [`SystemCodecs`]: the codec traits on the system's libopus and libvpx through the
//! `rustox-codec` crate, which configures them as c-toxcore 0.2.18's `toxav/audio.c` and
//! `toxav/video.c` do.

use super::codec::{
    AudioDecoder, AudioEncoder, CodecError, CodecFactory, DecodedPicture, EncodedVideo,
    SystemCodecs, VideoDecoder, VideoEncoder, YuvFrame,
};
use rustox_codec as sys;

fn err(e: sys::Error) -> CodecError {
    CodecError(e.to_string())
}

struct OpusEncoder(sys::AudioEncoder);

impl AudioEncoder for OpusEncoder {
    fn encode(&mut self, pcm: &[i16], out: &mut [u8]) -> Result<usize, CodecError> {
        self.0.encode(pcm, out).map_err(err)
    }

    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError> {
        self.0.set_bit_rate(bit_rate).map_err(err)
    }
}

struct OpusDecoder(sys::AudioDecoder);

impl AudioDecoder for OpusDecoder {
    fn decode(
        &mut self,
        packet: Option<&[u8]>,
        fec: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, CodecError> {
        match (packet, fec) {
            (None, _) => self.0.conceal(frame_samples, out),
            (Some(next), true) => self.0.decode_fec(next, frame_samples, out),
            (Some(packet), false) => self.0.decode(packet, out),
        }
        .map_err(err)
    }
}

struct Vp8Encoder(sys::Vp8Encoder);

impl VideoEncoder for Vp8Encoder {
    fn encode(
        &mut self,
        picture: &YuvFrame<'_>,
        keyframe: bool,
        out: &mut Vec<EncodedVideo>,
    ) -> Result<(), CodecError> {
        let planes = sys::Planes {
            width: picture.width,
            height: picture.height,
            y: picture.y,
            u: picture.u,
            v: picture.v,
        };
        let mut frames = Vec::new();
        self.0.encode(&planes, keyframe, &mut frames).map_err(err)?;
        out.extend(frames.into_iter().map(|f| EncodedVideo {
            data: f.data,
            keyframe: f.keyframe,
        }));
        Ok(())
    }

    fn set_bit_rate(&mut self, bit_rate: u32) -> Result<(), CodecError> {
        self.0.set_bit_rate(bit_rate).map_err(err)
    }
}

struct Vp8Decoder(sys::Vp8Decoder);

impl VideoDecoder for Vp8Decoder {
    fn decode(&mut self, data: &[u8], out: &mut Vec<DecodedPicture>) -> Result<(), CodecError> {
        let mut pictures = Vec::new();
        self.0.decode(data, &mut pictures).map_err(err)?;
        out.extend(pictures.into_iter().map(|p| DecodedPicture {
            width: p.width,
            height: p.height,
            y: p.y,
            u: p.u,
            v: p.v,
        }));
        Ok(())
    }
}

impl CodecFactory for SystemCodecs {
    fn audio_encoder(
        &self,
        bit_rate: u32,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioEncoder>, CodecError> {
        let encoder = sys::AudioEncoder::new(bit_rate, sampling_rate, channels).map_err(err)?;
        Ok(Box::new(OpusEncoder(encoder)))
    }

    fn audio_decoder(
        &self,
        sampling_rate: u32,
        channels: u8,
    ) -> Result<Box<dyn AudioDecoder>, CodecError> {
        let decoder = sys::AudioDecoder::new(sampling_rate, channels).map_err(err)?;
        Ok(Box::new(OpusDecoder(decoder)))
    }

    fn video_encoder(
        &self,
        bit_rate: u32,
        width: u16,
        height: u16,
    ) -> Result<Box<dyn VideoEncoder>, CodecError> {
        let encoder = sys::Vp8Encoder::new(bit_rate, width, height).map_err(err)?;
        Ok(Box::new(Vp8Encoder(encoder)))
    }

    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError> {
        Ok(Box::new(Vp8Decoder(sys::Vp8Decoder::new().map_err(err)?)))
    }
}
