//! Calls and group audio through the Rust API on loopback: two `Tox` handles (Alice, Bob)
//! that are friends, and a bootstrap node. With calls off a call is refused with its typed
//! error; Alice makes an AV conference, invites Bob, Bob joins it with its audio on, and
//! the audio Alice sends reaches Bob as `ConferenceAudio` from Alice's peer number.

#![cfg(feature = "tokio")]

use std::net::SocketAddr;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_core::api::{Tox, ToxError, ToxOptions};
use rustox_core::av::codec::{
    AudioDecoder, AudioEncoder, CodecError, CodecFactory, VideoDecoder, VideoEncoder,
};
use rustox_core::conference::PeerList;
use rustox_core::dht::DhtConfig;
use rustox_core::driver::workers::{NodeRunner, RunnerConfig};
use rustox_core::node::{AvAccessError, FriendNumber, GroupAudioError, NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::KeyPair;

fn options(boot: &NodeRunner) -> ToxOptions {
    ToxOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        bootstrap: vec![(boot.local_addr(), boot.public_key())],
        node: NodeOptions {
            dht: DhtConfig {
                lan_discovery: false,
                ..DhtConfig::default()
            },
            unix_time: rustox_core::driver::clock::unix_now(),
            ..NodeOptions::default()
        },
        ..ToxOptions::default()
    }
}

/// A packet is a "SILK 20 ms" Opus table-of-contents byte and the frame's first two
/// samples; decoded, they come back followed by silence. Enough to see frames cross.
struct MarkCodecs;
struct Marks;

impl AudioEncoder for Marks {
    fn encode(&mut self, pcm: &[i16], out: &mut [u8]) -> Result<usize, CodecError> {
        out[0] = 0x08;
        out[1..3].copy_from_slice(&pcm[0].to_be_bytes());
        out[3..5].copy_from_slice(&pcm[1].to_be_bytes());
        Ok(5)
    }
    fn set_bit_rate(&mut self, _: u32) -> Result<(), CodecError> {
        Ok(())
    }
}

impl AudioDecoder for Marks {
    fn decode(
        &mut self,
        packet: Option<&[u8]>,
        _: bool,
        frame_samples: usize,
        out: &mut Vec<i16>,
    ) -> Result<usize, CodecError> {
        let start = out.len();
        if let Some(p) = packet.filter(|p| p.len() == 5) {
            out.push(i16::from_be_bytes([p[1], p[2]]));
            out.push(i16::from_be_bytes([p[3], p[4]]));
        }
        out.resize(start + frame_samples, 0);
        Ok(frame_samples)
    }
}

impl CodecFactory for MarkCodecs {
    fn audio_encoder(&self, _: u32, _: u32, _: u8) -> Result<Box<dyn AudioEncoder>, CodecError> {
        Ok(Box::new(Marks))
    }
    fn audio_decoder(&self, _: u32, _: u8) -> Result<Box<dyn AudioDecoder>, CodecError> {
        Ok(Box::new(Marks))
    }
    fn video_encoder(&self, _: u32, _: u16, _: u16) -> Result<Box<dyn VideoEncoder>, CodecError> {
        Err(CodecError("audio only".into()))
    }
    fn video_decoder(&self) -> Result<Box<dyn VideoDecoder>, CodecError> {
        Err(CodecError("audio only".into()))
    }
}

/// Waits for the first event of `tox` that `pick` maps to something.
async fn wait_for<T>(tox: &mut Tox, mut pick: impl FnMut(&NodeEvent) -> Option<T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let e = tox.next_event().await.expect("the node runs");
            if let Some(t) = pick(&e) {
                return t;
            }
        }
    })
    .await
    .expect("the event came in time")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_off_and_group_audio_through_the_api() {
    let boot = NodeRunner::start(
        KeyPair::generate(&mut StdRng::from_entropy()),
        RunnerConfig::loopback(0),
    )
    .expect("bootstrap node");
    let mut alice = Tox::start(options(&boot)).await.unwrap();
    let mut bob = Tox::start(options(&boot)).await.unwrap();
    let to_bob = alice.add_friend_norequest(bob.tox_id().pk).await.unwrap();
    let to_alice = bob.add_friend_norequest(alice.tox_id().pk).await.unwrap();

    // Calls off: every call command says so.
    assert!(matches!(
        alice.call(to_bob, 48, 0).await,
        Err(ToxError::Av(AvAccessError::Disabled))
    ));
    let online = |f: FriendNumber| {
        move |e: &NodeEvent| {
            matches!(e, NodeEvent::FriendConnection { friend, online: true, .. } if *friend == f)
                .then_some(())
        }
    };
    wait_for(&mut alice, online(to_bob)).await;
    wait_for(&mut bob, online(to_alice)).await;

    for tox in [&alice, &bob] {
        tox.with_node(|n, _| n.set_group_audio_codecs(Box::new(MarkCodecs)))
            .await
            .unwrap();
    }
    let conference = alice.conference_new_av().await.unwrap();
    assert!(matches!(
        alice.conference_set_audio(conference, true).await,
        Err(ToxError::GroupAudio(GroupAudioError::NotAv))
    ));
    alice.conference_invite(to_bob, conference).await.unwrap();
    let (from, cookie) = wait_for(&mut bob, |e| match e {
        NodeEvent::ConferenceInvite { friend, cookie, .. } => Some((*friend, cookie.clone())),
        _ => None,
    })
    .await;
    let joined = bob.conference_join_av(from, &cookie).await.unwrap();

    // Alice speaks every 20 ms until Bob has heard a frame of hers.
    let mut frame = vec![0i16; 960];
    frame[0] = 4242;
    let speaker = async {
        for n in 0..500i16 {
            frame[1] = n;
            let _ = alice
                .conference_send_audio(conference, &frame, 960, 1, 48_000)
                .await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let listener = wait_for(&mut bob, |e| match e {
        NodeEvent::ConferenceAudio {
            conference,
            peer,
            pcm,
            channels: 1,
            sampling_rate: 48_000,
        } if *conference == joined && pcm.first() == Some(&4242) => Some(*peer),
        _ => None,
    });
    let peer = tokio::select! {
        peer = listener => peer,
        _ = speaker => panic!("Bob heard nothing in 10 s"),
    };
    let alice_pk = alice.tox_id().pk;
    let named = bob
        .with_node(move |n, _| {
            n.conferences()
                .peer_public_key(joined, PeerList::Online, peer)
                .ok()
        })
        .await
        .unwrap();
    assert_eq!(named, Some(alice_pk), "Bob names Alice by her peer number");
}

/// Alice calls Bob (audio only, libopus), Bob answers, Alice's tone reaches Bob at its
/// frequency, Alice hangs up and Bob's call finishes.
#[cfg(feature = "codecs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_through_the_api_carries_a_tone_and_hangs_up() {
    use rustox_core::av::codec::SystemCodecs;
    use rustox_core::av::signal::{estimate_frequency, Tone};
    use rustox_core::av::{AvEvent, CallControl, FriendCallState};

    let boot = NodeRunner::start(
        KeyPair::generate(&mut StdRng::from_entropy()),
        RunnerConfig::loopback(0),
    )
    .expect("bootstrap node");
    let mut alice = Tox::start(options(&boot)).await.unwrap();
    let mut bob = Tox::start(options(&boot)).await.unwrap();
    let to_bob = alice.add_friend_norequest(bob.tox_id().pk).await.unwrap();
    let to_alice = bob.add_friend_norequest(alice.tox_id().pk).await.unwrap();
    assert!(alice.enable_calls(Box::new(SystemCodecs)).await.unwrap());
    assert!(!alice.enable_calls(Box::new(SystemCodecs)).await.unwrap());
    assert!(bob.enable_calls(Box::new(SystemCodecs)).await.unwrap());
    assert!(matches!(
        alice.call(FriendNumber(42), 48, 0).await,
        Err(ToxError::Av(AvAccessError::FriendNotFound))
    ));
    let online = |f: FriendNumber| {
        move |e: &NodeEvent| {
            matches!(e, NodeEvent::FriendConnection { friend, online: true, .. } if *friend == f)
                .then_some(())
        }
    };
    wait_for(&mut alice, online(to_bob)).await;
    wait_for(&mut bob, online(to_alice)).await;

    alice.call(to_bob, 48, 0).await.unwrap();
    wait_for(&mut bob, |e| {
        matches!(e, NodeEvent::Av(AvEvent::Call { friend, audio: true, .. }) if *friend == to_alice.0)
            .then_some(())
    })
    .await;
    bob.answer(to_alice, 48, 0).await.unwrap();
    wait_for(&mut alice, |e| {
        matches!(e, NodeEvent::Av(AvEvent::State { friend, state })
            if *friend == to_bob.0 && state.0 & FriendCallState::SENDING_A != 0)
        .then_some(())
    })
    .await;

    // Alice plays 440 Hz in 20 ms frames until Bob has a second of it.
    let mut tone = Tone::new(440.0, 48_000, 1, 8_000);
    let speaker = async {
        for _ in 0..500 {
            let _ = alice
                .send_audio(to_bob, &tone.frame(960), 960, 1, 48_000)
                .await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let mut heard = Vec::new();
    let listener = wait_for(&mut bob, |e| {
        if let NodeEvent::Av(AvEvent::AudioFrame { friend, pcm, .. }) = e {
            if *friend == to_alice.0 {
                heard.extend_from_slice(pcm);
            }
        }
        (heard.len() >= 60_000).then(|| heard.clone())
    });
    let pcm = tokio::select! {
        pcm = listener => pcm,
        _ = speaker => panic!("Bob heard too little in 10 s"),
    };
    let got = estimate_frequency(&pcm[12_000..], 1, 48_000).expect("a tone");
    assert!((got - 440.0).abs() < 10.0, "Bob heard {got} Hz");

    alice
        .call_control(to_bob, CallControl::Cancel)
        .await
        .unwrap();
    wait_for(&mut bob, |e| {
        matches!(e, NodeEvent::Av(AvEvent::State { friend, state })
            if *friend == to_alice.0 && state.0 & FriendCallState::FINISHED != 0)
        .then_some(())
    })
    .await;
    let stats = alice.call_stats().await.unwrap().unwrap();
    assert!(stats.audio_frames_sent >= 50, "{stats:?}");
}
