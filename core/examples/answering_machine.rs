//! An answering machine on rustox's Rust API: calls from a program.
//!
//! It prints its Tox ID, accepts every friend request, answers every call with audio only,
//! plays a tone to the caller for as long as the call lasts, and records what it hears to a
//! WAV file (16-bit PCM, the caller's rate and channels; a second call is appended to the
//! same recording).
//!
//! ```text
//! cargo run --release -p rustox-core --example answering_machine -- \
//!     --out message.wav --tone-hz 440 [--bootstrap HOST:PORT:DHTKEY ...]
//! ```
//!
//! To try it against another node: start a DHT node to meet on (`rustox bootstrap`, or use a
//! public one from nodes.tox.chat) and pass it with `--bootstrap`; add the Tox ID the
//! machine prints from any Tox client that places calls (qTox, toxic: `/add ID`, then
//! `/call` once it is online; or a program on this API: `Tox::call(friend, 48, 0)`). Speak,
//! hang up, and play `message.wav`. On one machine, `--bootstrap` takes the other node's
//! `127.0.0.1:PORT:DHTKEY` as it prints it.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use rustox_core::api::{Tox, ToxOptions};
use rustox_core::av::codec::SystemCodecs;
use rustox_core::av::signal::Tone;
use rustox_core::av::{AvEvent, FriendCallState};
use rustox_core::node::{FriendNumber, NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::PublicKey;

/// The machine's audio: 20 ms frames at 48 kHz, mono (toxav's usual frame).
const RATE: u32 = 48_000;
const FRAME: usize = 960;
/// The audio bit rate it answers with, kbit/s (toxav.h's unit).
const AUDIO_KBPS: u32 = 48;

#[derive(Parser)]
#[command(about = "Answers every Tox call, plays a tone, records what it hears")]
struct Args {
    /// Where the recording goes (a WAV file).
    #[arg(long, default_value = "answering_machine.wav")]
    out: PathBuf,
    /// The tone's frequency, Hz.
    #[arg(long, default_value_t = 440.0)]
    tone_hz: f64,
    /// A DHT node to start from, HOST:PORT:DHTKEY (repeatable).
    #[arg(long)]
    bootstrap: Vec<String>,
}

/// `HOST:PORT:KEY` → the node's address and DHT key.
fn parse_node(text: &str) -> Option<(SocketAddr, PublicKey)> {
    let (addr, key) = text.rsplit_once(':')?;
    Some((addr.parse().ok()?, PublicKey::from_hex(key)?))
}

/// A WAV file being written: the 44-byte RIFF header (PCM, 16 bits) with its sizes patched
/// in as samples are added.
struct Wav {
    file: File,
    data_bytes: u32,
    shape: Option<(u8, u32)>,
}

impl Wav {
    fn create(path: &PathBuf) -> std::io::Result<Self> {
        Ok(Wav {
            file: File::create(path)?,
            data_bytes: 0,
            shape: None,
        })
    }

    /// The header for `channels` at `rate` holding `data_bytes` of samples.
    fn header(channels: u8, rate: u32, data_bytes: u32) -> [u8; 44] {
        let mut h = [0u8; 44];
        let block = u16::from(channels) * 2;
        h[0..4].copy_from_slice(b"RIFF");
        h[4..8].copy_from_slice(&(36 + data_bytes).to_le_bytes());
        h[8..12].copy_from_slice(b"WAVE");
        h[12..16].copy_from_slice(b"fmt ");
        h[16..20].copy_from_slice(&16u32.to_le_bytes()); // the fmt chunk's size
        h[20..22].copy_from_slice(&1u16.to_le_bytes()); // PCM
        h[22..24].copy_from_slice(&u16::from(channels).to_le_bytes());
        h[24..28].copy_from_slice(&rate.to_le_bytes());
        h[28..32].copy_from_slice(&(rate * u32::from(block)).to_le_bytes());
        h[32..34].copy_from_slice(&block.to_le_bytes());
        h[34..36].copy_from_slice(&16u16.to_le_bytes()); // bits per sample
        h[36..40].copy_from_slice(b"data");
        h[40..44].copy_from_slice(&data_bytes.to_le_bytes());
        h
    }

    /// Appends samples; the first frame fixes the file's rate and channels (later frames of
    /// another shape are skipped: one WAV file has one).
    fn append(&mut self, pcm: &[i16], channels: u8, rate: u32) -> std::io::Result<()> {
        match self.shape {
            None => {
                self.shape = Some((channels, rate));
                self.file.write_all(&Self::header(channels, rate, 0))?;
            }
            Some(shape) if shape != (channels, rate) => return Ok(()),
            Some(_) => {}
        }
        let bytes: Vec<u8> = pcm.iter().flat_map(|s| s.to_le_bytes()).collect();
        self.file.write_all(&bytes)?;
        self.data_bytes = self.data_bytes.saturating_add(bytes.len() as u32);
        Ok(())
    }

    /// Writes the sizes into the header, so the file plays even if the machine is killed.
    fn finish(&mut self) -> std::io::Result<()> {
        let Some((channels, rate)) = self.shape else {
            return Ok(());
        };
        self.file.seek(SeekFrom::Start(0))?;
        self.file
            .write_all(&Self::header(channels, rate, self.data_bytes))?;
        self.file.seek(SeekFrom::End(0))?;
        self.file.flush()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let mut bootstrap = Vec::new();
    for arg in &args.bootstrap {
        bootstrap.push(parse_node(arg).ok_or_else(|| format!("{arg:?} is not HOST:PORT:KEY"))?);
    }
    let mut tox = Tox::start(ToxOptions {
        bootstrap,
        node: NodeOptions {
            unix_time: rustox_core::driver::clock::unix_now(),
            ..NodeOptions::default()
        },
        ..ToxOptions::default()
    })
    .await?;
    tox.set_name(b"rustox answering machine").await?;
    tox.enable_calls(Box::new(SystemCodecs)).await?;
    println!(
        "answering machine {} listening on {} (DHT key {}), recording to {}",
        tox.tox_id(),
        tox.local_addr(),
        tox.dht_public_key(),
        args.out.display()
    );
    let mut wav = Wav::create(&args.out)?;
    let mut tone = Tone::new(args.tone_hz, RATE, 1, 8_000);
    let mut in_call: HashSet<FriendNumber> = HashSet::new();
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if in_call.is_empty() {
                    continue;
                }
                let frame = tone.frame(FRAME);
                for friend in in_call.clone() {
                    // A call that is ringing, paused or muted refuses frames: nothing to do.
                    let _ = tox.send_audio(friend, &frame, FRAME, 1, RATE).await;
                }
            }
            event = tox.next_event() => {
                let Some(event) = event else { break };
                match event {
                    NodeEvent::FriendRequest { pk, .. } => {
                        println!("friend request from {pk}: accepted");
                        tox.add_friend_norequest(pk).await?;
                    }
                    NodeEvent::Av(AvEvent::Call { friend, audio, video }) => {
                        println!("friend {friend} calls (audio {audio}, video {video}): answering");
                        let friend = FriendNumber(friend);
                        match tox.answer(friend, AUDIO_KBPS, 0).await {
                            Ok(()) => {
                                in_call.insert(friend);
                            }
                            Err(e) => println!("could not answer: {e}"),
                        }
                    }
                    NodeEvent::Av(AvEvent::State { friend, state }) => {
                        let ended = FriendCallState::FINISHED | FriendCallState::ERROR;
                        if state.0 & ended != 0 {
                            println!("call with friend {friend} ended");
                            in_call.remove(&FriendNumber(friend));
                            wav.finish()?;
                        }
                    }
                    NodeEvent::Av(AvEvent::AudioFrame { pcm, channels, sampling_rate, .. }) => {
                        wav.append(&pcm, channels, sampling_rate)?;
                    }
                    _ => {}
                }
            }
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    wav.finish()?;
    println!("recorded {} bytes of audio", wav.data_bytes);
    Ok(())
}
