//! An instance's life (tox.h): `tox_new` (options, savedata, the UDP port), `tox_kill`,
//! the savedata it writes, bootstrapping, and `tox_iterate` with its interval.

use std::ffi::{c_char, c_void, CStr};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use rustox_core::driver::instance_relay::InstanceRelay;
use rustox_core::driver::socket::{bind, interface_broadcasts, BindError};
use rustox_core::driver::step::Stepper;
use rustox_core::driver::{clock, Clock, DriverOptions};
use rustox_core::node::{system_rng, Node, NodeOptions};
use rustox_core::relay::server::RelayConfig;
use rustox_core::savedata::{crypt, Profile};
use rustox_net_crypto::crypto::{KeyPair, PublicKey, SecretKey};
use rustox_net_crypto::TransportConfig;

use crate::callbacks;
use crate::guard;
use crate::handle::{tox_ref, Instance, Tox};
use crate::options::Tox_Options;
use crate::types::{Tox_Err_Bootstrap, Tox_Err_New, Tox_Savedata_Type};

/// The UDP ports tried when the options name none: c-toxcore's `TOX_PORTRANGE_FROM` and
/// `TOX_PORTRANGE_TO` (network.h), so a client on rustox is found where a client on
/// c-toxcore would be.
pub const DEFAULT_PORTS: (u16, u16) = (33445, 33545);

/// The ports to try, c-toxcore's way (`new_networking_ex`): neither given, the default
/// range; one given, that one; both, the range between them in either order.
pub fn port_range(start: u16, end: u16) -> (u16, u16) {
    match (start, end) {
        (0, 0) => DEFAULT_PORTS,
        (0, p) | (p, 0) => (p, p),
        (a, b) => (a.min(b), a.max(b)),
    }
}

/// What `tox_new` builds, or the code it fails with.
fn build(options: &Tox_Options) -> Result<Instance, Tox_Err_New> {
    let proxy = crate::proxy::from_options(options)?;
    // A proxy carries TCP only: c-toxcore's `new_messenger` turns UDP off when one is set,
    // so nothing leaves but through the proxy.
    let udp_enabled = options.udp_enabled && proxy.is_none();
    let keys_or_profile = load(options)?;
    let socket = if udp_enabled {
        let (first, last) = port_range(options.start_port, options.end_port);
        let ip = if options.ipv6_enabled {
            Ipv6Addr::UNSPECIFIED.into()
        } else {
            Ipv4Addr::UNSPECIFIED.into()
        };
        (first..=last)
            .find_map(|port| match bind(SocketAddr::new(ip, port)) {
                Ok(s) => Some(Ok(s)),
                Err(BindError::InUse { .. }) => None,
                Err(_) => Some(Err(Tox_Err_New::PORT_ALLOC)),
            })
            .unwrap_or(Err(Tox_Err_New::PORT_ALLOC))?
    } else {
        // UDP off: TCP relays only. The step driver still wants a socket; one on loopback
        // is reachable from nowhere else, and the node neither sends on it nor reads what
        // arrives (NodeOptions::udp_disabled).
        bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).map_err(|_| Tox_Err_New::PORT_ALLOC)?
    };
    let clock = Clock::default();
    let now = clock.now();
    let driver = DriverOptions::default();
    let mut node_options = NodeOptions {
        transport: TransportConfig {
            // The client sleeps on its own timer for whole milliseconds (tox.h's interval).
            wake_lateness: std::time::Duration::from_millis(2),
            ..TransportConfig::default()
        },
        unix_time: clock::unix_now(),
        udp_disabled: !udp_enabled,
        proxy,
        ..NodeOptions::default()
    };
    node_options.dht.lan_discovery = options.local_discovery_enabled && udp_enabled;
    // c-toxcore's lan_discovery_send: an IPv6 socket also sends to ff02::1, which reaches
    // the instances on this machine too (their replies come from a link-local address,
    // which counts as LAN where the IPv4 broadcast's source may not).
    node_options.dht.lan_discovery_ipv6 = node_options.dht.lan_discovery && options.ipv6_enabled;
    node_options.dht.hole_punching = options.hole_punching_enabled;
    let mut node = match keys_or_profile {
        Loaded::Profile(profile) => Node::from_profile(now, &profile, node_options, system_rng()),
        Loaded::Secret(secret) => Node::new(
            now,
            KeyPair::from_secret(secret),
            node_options,
            system_rng(),
        ),
        Loaded::Nothing => {
            let mut rng = system_rng();
            let keys = KeyPair::generate(rng.as_mut());
            Node::new(now, keys, node_options, rng)
        }
    };
    if options.local_discovery_enabled && udp_enabled {
        node.set_lan_broadcasts(interface_broadcasts());
    }
    let mut stepper = Stepper::new(socket, clock, driver.gso, driver.gro);
    if options.tcp_port != 0 {
        // c-toxcore's new_messenger: a TCP relay under the DHT keys, on [::] or 0.0.0.0
        // as the UDP socket; a port that cannot be bound fails tox_new.
        let relay = InstanceRelay::start(
            &mut node,
            now,
            options.tcp_port,
            options.ipv6_enabled,
            RelayConfig::default(),
            clock,
            None,
        )
        .map_err(|_| Tox_Err_New::PORT_ALLOC)?;
        stepper.set_relay_server(relay);
    }
    Ok(Instance::new(node, stepper))
}

/// What the options' savedata holds.
enum Loaded {
    Nothing,
    Profile(Box<Profile>),
    Secret(SecretKey),
}

fn load(options: &Tox_Options) -> Result<Loaded, Tox_Err_New> {
    let kind =
        Tox_Savedata_Type::from_raw(options.savedata_type).ok_or(Tox_Err_New::LOAD_BAD_FORMAT)?;
    if kind == Tox_Savedata_Type::NONE {
        return Ok(Loaded::Nothing);
    }
    // SAFETY: tox.h: `savedata_length` bytes at `savedata_data`, alive during tox_new.
    let data = unsafe { guard::bytes(options.savedata_data, options.savedata_length) }
        .ok_or(Tox_Err_New::NULL)?;
    match kind {
        Tox_Savedata_Type::SECRET_KEY => {
            let key: [u8; 32] = data.try_into().map_err(|_| Tox_Err_New::LOAD_BAD_FORMAT)?;
            Ok(Loaded::Secret(SecretKey::from_bytes(key)))
        }
        _ => {
            if crypt::is_encrypted(data) {
                return Err(Tox_Err_New::LOAD_ENCRYPTED);
            }
            Profile::parse(data)
                .map(|p| Loaded::Profile(Box::new(p)))
                .map_err(|_| Tox_Err_New::LOAD_BAD_FORMAT)
        }
    }
}

/// Creates an instance (`tox_new`): binds its UDP port, loads the savedata, and starts the
/// node. NULL options mean the defaults. Free it with `tox_kill`.
#[no_mangle]
pub unsafe extern "C" fn tox_new(options: *const Tox_Options, error: *mut Tox_Err_New) -> *mut Tox {
    guard::call(std::ptr::null_mut(), || {
        // SAFETY: a non-NULL pointer is a readable Tox_Options (tox.h).
        let options = unsafe { options.as_ref() }.copied().unwrap_or_default();
        match build(&options) {
            Ok(tox) => {
                guard::set(error, Tox_Err_New::OK);
                tox.into_c()
            }
            Err(code) => guard::fail(error, code, std::ptr::null_mut()),
        }
    })
}

/// Ends an instance (`tox_kill`): closes its socket and frees it; NULL is ignored. Calls in
/// progress on other threads are waited for (new ones are refused as if the instance were
/// NULL); called from one of the instance's callbacks, the instance is freed when the
/// `tox_iterate` running them returns.
#[no_mangle]
pub unsafe extern "C" fn tox_kill(tox: *mut Tox) {
    guard::call((), || {
        if !tox.is_null() {
            // SAFETY: a non-NULL pointer came from tox_new and is not killed twice (tox.h).
            unsafe { crate::handle::kill(tox) };
        }
    })
}

fn savedata(tox: &Instance) -> Vec<u8> {
    let state = tox.lock();
    state.node.to_profile(state.now()).to_bytes()
}

/// The size of the savedata `tox_get_savedata` writes now.
#[no_mangle]
pub unsafe extern "C" fn tox_get_savedata_size(tox: *const Tox) -> usize {
    guard::call(0, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { tox_ref(tox) }.map_or(0, |tox| savedata(&tox).len())
    })
}

/// Writes the instance's profile, in c-toxcore 0.2.18's format, to `savedata` (which has
/// room for `tox_get_savedata_size` bytes).
#[no_mangle]
pub unsafe extern "C" fn tox_get_savedata(tox: *const Tox, savedata_out: *mut u8) {
    guard::call((), || {
        // SAFETY: tox.h's contract for `tox`.
        if let Some(tox) = unsafe { tox_ref(tox) } {
            // SAFETY: tox.h: room for tox_get_savedata_size bytes.
            unsafe { guard::copy_out(&savedata(&tox), savedata_out) };
        }
    })
}

/// Resolves a host name or address as c-toxcore does (`getaddrinfo`), IPv6 only when the
/// socket takes it.
fn resolve(
    host: *const c_char,
    port: u16,
    ipv6: bool,
) -> Result<Vec<SocketAddr>, Tox_Err_Bootstrap> {
    if host.is_null() {
        return Err(Tox_Err_Bootstrap::NULL);
    }
    // SAFETY: tox.h: a NUL-terminated string.
    let host = unsafe { CStr::from_ptr(host) }
        .to_str()
        .map_err(|_| Tox_Err_Bootstrap::BAD_HOST)?;
    if port == 0 {
        return Err(Tox_Err_Bootstrap::BAD_PORT);
    }
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|_| Tox_Err_Bootstrap::BAD_HOST)?
        .filter(|a| ipv6 || a.is_ipv4())
        .collect();
    if addrs.is_empty() {
        return Err(Tox_Err_Bootstrap::BAD_HOST);
    }
    Ok(addrs)
}

/// Shared by `tox_bootstrap` and `tox_add_tcp_relay`.
unsafe fn with_node_address(
    tox: *mut Tox,
    host: *const c_char,
    port: u16,
    public_key: *const u8,
    error: *mut Tox_Err_Bootstrap,
    apply: impl Fn(&mut crate::handle::State, SocketAddr, PublicKey),
) -> bool {
    // SAFETY: tox.h's contract for `tox`.
    let Some(tox) = (unsafe { tox_ref(tox) }) else {
        return guard::fail(error, Tox_Err_Bootstrap::NULL, false);
    };
    // SAFETY: tox.h: TOX_PUBLIC_KEY_SIZE bytes.
    let Some(pk) = (unsafe { guard::array::<32>(public_key) }) else {
        return guard::fail(error, Tox_Err_Bootstrap::NULL, false);
    };
    let ipv6 = tox
        .lock()
        .stepper
        .socket()
        .local_addr()
        .is_ok_and(|a| a.is_ipv6());
    match resolve(host, port, ipv6) {
        Ok(addrs) => {
            let mut state = tox.lock();
            for addr in addrs {
                apply(&mut state, addr, PublicKey(pk));
            }
            state.flush();
            guard::fail(error, Tox_Err_Bootstrap::OK, true)
        }
        Err(code) => guard::fail(error, code, false),
    }
}

/// Defines an entry point that takes a node's address (`host`, `port`, `public_key`) with
/// `Tox_Err_Bootstrap`: `apply` runs for every address the host resolves to
/// ([`with_node_address`]).
macro_rules! node_address_entry {
    ($(#[$doc:meta])* $name:ident = $apply:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            tox: *mut Tox,
            host: *const c_char,
            port: u16,
            public_key: *const u8,
            error: *mut Tox_Err_Bootstrap,
        ) -> bool {
            guard::call(false, || {
                // SAFETY: the arguments are the caller's, per tox.h.
                unsafe { with_node_address(tox, host, port, public_key, error, $apply) }
            })
        }
    };
}

node_address_entry! {
    /// Asks a DHT node for its neighbours (`tox_bootstrap`): every address the host resolves
    /// to is tried.
    tox_bootstrap = |state, addr, pk| {
        let now = state.now();
        state.node.bootstrap(now, addr, pk);
    }
}

node_address_entry! {
    /// Adds a TCP relay (`tox_add_tcp_relay`): connected through when friends or the onion need
    /// it (and always with UDP off), and kept in the profile.
    tox_add_tcp_relay = |state, addr, pk| {
        let now = state.now();
        // A full relay table keeps the relays it has: as c-toxcore, still a success.
        if state.node.add_tcp_relay(now, addr, pk).is_err() {
            state.node.keep_tcp_relay(addr, pk);
        }
    }
}

/// Milliseconds until `tox_iterate` has work (`tox_iteration_interval`): the node's next
/// deadline, at most [`crate::handle::MAX_ITERATION_INTERVAL_MS`].
#[no_mangle]
pub unsafe extern "C" fn tox_iteration_interval(tox: *const Tox) -> u32 {
    guard::call(crate::handle::MAX_ITERATION_INTERVAL_MS, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { tox_ref(tox) }.map_or(crate::handle::MAX_ITERATION_INTERVAL_MS, |t| {
            t.iteration_interval()
        })
    })
}

/// Runs the node (`tox_iterate`): reads the socket, runs due timers, sends, then calls the
/// client's callbacks for what happened, with `user_data`, without holding the instance's
/// lock.
#[no_mangle]
pub unsafe extern "C" fn tox_iterate(tox: *mut Tox, user_data: *mut c_void) {
    guard::call((), || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(instance) = (unsafe { tox_ref(tox) }) else {
            return;
        };
        let events = instance.step_events();
        instance.in_callbacks(|| {
            for event in &events {
                if instance.kill_requested() {
                    break;
                }
                {
                    let mut state = instance.lock();
                    if !state.is_current(event) {
                        continue;
                    }
                    state.deliver(event);
                }
                // Read before each event: a callback may register or clear another.
                let callbacks = *instance.callbacks();
                // SAFETY: the callbacks are the client's, called with tox.h's arguments.
                unsafe { callbacks::fire(tox, &callbacks, event, user_data) };
            }
            if !instance.kill_requested() {
                // SAFETY: no lock is held; toxav's callbacks run where c-toxcore runs them.
                unsafe {
                    crate::av::callbacks::fire_signals(&instance);
                    crate::av::group::fire_group_audio(tox, &instance);
                }
            }
        });
        let kill = instance.kill_requested();
        drop(instance);
        if kill {
            // SAFETY: a callback killed the instance; our own call has left it.
            unsafe { crate::handle::finish_kill(tox) };
        }
    })
}
