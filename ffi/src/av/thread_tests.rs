//! qTox's threading: `toxav_iterate` on a thread of its own while another runs
//! `tox_iterate` and sends frames, and a callback calling back into the library.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::*;
use crate::handle::Tox;

static ANSWERED: AtomicBool = AtomicBool::new(false);
static CALLER_STATE: AtomicU32 = AtomicU32::new(u32::MAX);
static FRAMES: AtomicU32 = AtomicU32::new(0);
/// A hash of the thread the audio callback last ran on.
static FRAME_THREAD: AtomicU64 = AtomicU64::new(0);

fn thread_hash() -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::thread::current().id().hash(&mut h);
    h.finish()
}

/// The callee answers from inside its call callback, which `tox_iterate` runs with no lock
/// held.
unsafe extern "C" fn on_call(av: *mut ToxAV, friend: u32, _: bool, _: bool, _: *mut c_void) {
    // SAFETY: the session the callback was given.
    let ok = unsafe { toxav_answer(av, friend, 48, 0, null_mut()) };
    ANSWERED.store(ok, Ordering::SeqCst);
}

unsafe extern "C" fn on_state(_: *mut ToxAV, _: u32, state: u32, _: *mut c_void) {
    CALLER_STATE.store(state, Ordering::SeqCst);
}

unsafe extern "C" fn on_audio(
    _: *mut ToxAV,
    _: u32,
    _: *const i16,
    samples: usize,
    channels: u8,
    rate: u32,
    _: *mut c_void,
) {
    if samples > 0 && channels == 1 && rate == 48000 {
        FRAMES.fetch_add(1, Ordering::SeqCst);
        FRAME_THREAD.store(thread_hash(), Ordering::SeqCst);
    }
}

fn instance(start_port: u16) -> *mut Tox {
    let options = crate::options::Tox_Options {
        ipv6_enabled: false,
        local_discovery_enabled: false,
        start_port,
        end_port: start_port + 50,
        ..crate::options::Tox_Options::default()
    };
    // SAFETY: valid options.
    let tox = unsafe { crate::lifecycle::tox_new(&options, null_mut()) };
    assert!(!tox.is_null());
    tox
}

/// Pointers handed to the AV thread (the library is thread-safe; the test keeps them alive
/// until the thread is joined).
struct Sessions(*mut ToxAV, *mut ToxAV);
// SAFETY: every toxav_* entry locks what it touches; the sessions outlive the thread.
unsafe impl Send for Sessions {}

#[test]
fn av_iterates_on_its_own_thread_during_a_call() {
    let (a, b) = (instance(41600), instance(41660));
    // SAFETY (every call): live instances and sessions, valid buffers.
    unsafe {
        let mut pk = [[0u8; 32]; 2];
        let mut dht = [[0u8; 32]; 2];
        let mut port = [0u16; 2];
        for (i, &tox) in [a, b].iter().enumerate() {
            crate::self_info::tox_self_get_public_key(tox, pk[i].as_mut_ptr());
            crate::self_info::tox_self_get_dht_id(tox, dht[i].as_mut_ptr());
            port[i] = crate::self_info::tox_self_get_udp_port(tox, null_mut());
        }
        assert_eq!(
            crate::friends::tox_friend_add_norequest(a, pk[1].as_ptr(), null_mut()),
            0
        );
        assert_eq!(
            crate::friends::tox_friend_add_norequest(b, pk[0].as_ptr(), null_mut()),
            0
        );
        let host = c"127.0.0.1".as_ptr();
        assert!(crate::lifecycle::tox_bootstrap(
            a,
            host,
            port[1],
            dht[1].as_ptr(),
            null_mut()
        ));
        assert!(crate::lifecycle::tox_bootstrap(
            b,
            host,
            port[0],
            dht[0].as_ptr(),
            null_mut()
        ));
        let av_a = toxav_new(a, null_mut());
        let av_b = toxav_new(b, null_mut());
        assert!(!av_a.is_null() && !av_b.is_null());
        toxav_callback_call_state(av_a, Some(on_state), null_mut());
        toxav_callback_call(av_b, Some(on_call), null_mut());
        toxav_callback_audio_receive_frame(av_b, Some(on_audio), null_mut());

        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let sessions = Sessions(av_a, av_b);
        let stop2 = stop.clone();
        let av_thread = std::thread::spawn(move || {
            let s = sessions;
            while !stop2.load(Ordering::SeqCst) {
                // The sessions live until this thread is joined (the enclosing unsafe block).
                toxav_iterate(s.0);
                toxav_audio_iterate(s.1);
                toxav_video_iterate(s.1);
                std::thread::sleep(Duration::from_millis(5));
            }
            thread_hash()
        });

        let online = |tox| {
            crate::friends::tox_friend_get_connection_status(tox, 0, null_mut())
                != crate::types::Tox_Connection::NONE
        };
        let start = Instant::now();
        let mut called = false;
        let mut next_frame = Instant::now();
        let pcm: Vec<i16> = (0..960)
            .map(|i| {
                ((i as f64 * 2.0 * std::f64::consts::PI * 440.0 / 48000.0).sin() * 8000.0) as i16
            })
            .collect();
        while start.elapsed() < Duration::from_secs(60) && FRAMES.load(Ordering::SeqCst) < 50 {
            crate::lifecycle::tox_iterate(a, null_mut());
            crate::lifecycle::tox_iterate(b, null_mut());
            if !called && online(a) && online(b) {
                let mut e = crate::types::Toxav_Err_Call::MALLOC;
                assert!(toxav_call(av_a, 0, 48, 0, &mut e), "{e:?}");
                called = true;
            }
            if CALLER_STATE.load(Ordering::SeqCst) != u32::MAX && Instant::now() >= next_frame {
                toxav_audio_send_frame(av_a, 0, pcm.as_ptr(), 960, 1, 48000, null_mut());
                next_frame += Duration::from_millis(20);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        stop.store(true, Ordering::SeqCst);
        let av_thread_hash = av_thread.join().unwrap();
        assert!(
            ANSWERED.load(Ordering::SeqCst),
            "the callee did not answer from its callback"
        );
        assert_eq!(
            CALLER_STATE.load(Ordering::SeqCst) & 4,
            4,
            "the caller never saw the callee sending audio"
        );
        assert!(
            FRAMES.load(Ordering::SeqCst) >= 50,
            "{} audio frames arrived",
            FRAMES.load(Ordering::SeqCst)
        );
        assert_eq!(
            FRAME_THREAD.load(Ordering::SeqCst),
            av_thread_hash,
            "audio frames are handed over by the thread running toxav_iterate"
        );
        toxav_kill(av_a);
        toxav_kill(av_b);
        crate::lifecycle::tox_kill(a);
        crate::lifecycle::tox_kill(b);
    }
}
