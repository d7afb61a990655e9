//! Conference delivery in simulated time: N conference engines (`rustox_core::conference`,
//! c-toxcore 0.2.18's group.c rules) joined into one text conference the way clients join
//! (each member invites the next along a chain of friends), on one of the simulator's named
//! paths ([`links`]), with members leaving and coming back (a clean quit, the profile saved
//! through the CONFERENCES section's codec, a restart with a fresh DHT key and the saved
//! conference loaded), while members take turns sending messages.
//!
//! Everything runs on one event queue in virtual time from one seed: a run replays bit for
//! bit. Measured: the share of messages that reach every online member, the time until the
//! last one has it, the hops it took, the wire bytes spent (conference payload and
//! net_crypto's per-packet overhead, resends included) and the heap each engine holds.
//!
//! "Online" for a message sent at `t`: up (and, after a return, up for [`Config::settle`])
//! at `t`, and still up at `t` + [`Config::window`]. A member that comes back rejoins
//! through its friends; until then it is not expected to hear anything.

pub mod links;
mod report;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustox_core::conference::wire::{MESSAGE_ACTION_ID, MESSAGE_MESSAGE_ID, PACKET_ID_MESSAGE};
use rustox_core::conference::{
    ConferenceEvent, ConferenceNumber, ConferenceType, Conferences, LinkAction,
};
use rustox_core::node::MessageKind;
use rustox_core::savedata::{parse_conferences, write_conferences};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;
use rustox_simulator::{derive_rng, Profile, StreamKind};

use links::{carry, connect_delay, Link, State};
pub use report::Report;

/// How often a c-toxcore client runs `tox_iterate` (`TOX_ITERATION_INTERVAL`, 50 ms): an
/// engine that asks for a tick "at once" gets it this much later.
pub const ITERATION: Duration = Duration::from_millis(50);

/// When the founder creates the conference: the friend links are up by then.
const CREATE_AT: Duration = Duration::from_secs(5);

/// Unix time at the simulation's zero, for the engines' last-active times.
const UNIX_ORIGIN: u64 = 1_764_000_000;

/// One run's parameters.
#[derive(Debug, Clone)]
pub struct Config {
    /// Members of the conference.
    pub peers: usize,
    /// The path between any two members.
    pub profile: Profile,
    /// The seed every random draw derives from.
    pub seed: u64,
    /// Share of the members that leave (and later come back) per minute, on average.
    pub churn_per_minute: f64,
    /// How long a member that left stays away: uniform in this range.
    pub away: (Duration, Duration),
    /// How long messages are sent (churn runs during it).
    pub message_phase: Duration,
    /// One message every this long, from a member chosen at random among the online ones.
    pub message_interval: Duration,
    /// How long a message may take to reach everyone.
    pub window: Duration,
    /// How long after coming back a member counts as online (its rejoin).
    pub settle: Duration,
    /// How long the chain of invitations may take before messages start anyway.
    pub join_limit: Duration,
}

impl Config {
    /// The benchmark's defaults for `peers` members on `profile`: 1 % churn per minute, away
    /// 10–60 s, a message a second for ten minutes, 30 s to arrive, 30 s to rejoin.
    pub fn new(peers: usize, profile: Profile, seed: u64) -> Self {
        Config {
            peers,
            profile,
            seed,
            churn_per_minute: 0.01,
            away: (Duration::from_secs(10), Duration::from_secs(60)),
            message_phase: Duration::from_secs(600),
            message_interval: Duration::from_secs(1),
            window: Duration::from_secs(30),
            settle: Duration::from_secs(30),
            join_limit: Duration::from_secs(30 * 60),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Create,
    Invite {
        from: usize,
    },
    LinkUp {
        a: usize,
        b: usize,
        epoch: u64,
    },
    LinkDown {
        to: usize,
        other: usize,
        incarnation: u64,
    },
    Deliver {
        from: usize,
        to: usize,
        incarnation: u64,
        data: Vec<u8>,
        lossy: bool,
    },
    Timer {
        member: usize,
        incarnation: u64,
    },
    SendTick,
    Leave {
        member: usize,
    },
    Return {
        member: usize,
    },
}

struct Member {
    pk: PublicKey,
    /// The DHT key of its current run.
    dht: PublicKey,
    name: Vec<u8>,
    conf: Conferences,
    up: bool,
    /// Bumped on every restart: packets to an earlier run of the member are lost.
    incarnation: u64,
    conference: Option<ConferenceNumber>,
    /// `Open` minus `Release` per other member.
    opens: Vec<i32>,
    /// Link status last reported to the engine, per other member.
    reported: Vec<bool>,
    /// When it was (re)connected and when it went away.
    spells: Vec<(Timestamp, Option<Timestamp>)>,
    /// The CONFERENCES section body saved when it left.
    saved: Vec<u8>,
    timer: Option<Timestamp>,
}

struct Message {
    sender: usize,
    sent: Timestamp,
    /// Per member: when it first had it, and over how many hops.
    got: Vec<Option<(Timestamp, u32)>>,
}

/// One run.
struct Sim {
    cfg: Config,
    now: Timestamp,
    seq: u64,
    queue: BinaryHeap<Reverse<(Timestamp, u64, Ev)>>,
    members: Vec<Member>,
    by_pk: HashMap<PublicKey, usize>,
    links: HashMap<(usize, usize), Link>,
    link_rng: ChaCha8Rng,
    scenario_rng: ChaCha8Rng,
    node_rng: ChaCha8Rng,
    messages: Vec<Message>,
    report: Report,
    phase: (Timestamp, Timestamp),
    joined_at: Option<Timestamp>,
}

/// Runs one configuration to the end and returns what it measured.
pub fn run(cfg: &Config) -> Report {
    let mut sim = Sim::new(cfg.clone());
    sim.run();
    sim.finish()
}

fn are_friends(a: usize, b: usize) -> bool {
    a.abs_diff(b) == 1
}

fn message_text(seq: usize) -> Vec<u8> {
    format!("m{seq}").into_bytes()
}

fn parse_text(text: &[u8]) -> Option<usize> {
    std::str::from_utf8(text.strip_prefix(b"m")?)
        .ok()?
        .parse()
        .ok()
}

impl Sim {
    fn new(cfg: Config) -> Self {
        let mut node_rng = derive_rng(cfg.seed, StreamKind::Node, 0);
        let n = cfg.peers;
        let mut members = Vec::with_capacity(n);
        let mut by_pk = HashMap::new();
        for i in 0..n {
            let keys = KeyPair::generate(&mut node_rng);
            let dht = KeyPair::generate(&mut node_rng);
            let name = format!("peer{i}").into_bytes();
            let mut conf = Conferences::new(keys.public, dht.public, &name);
            conf.set_unix_time(Timestamp::ZERO, UNIX_ORIGIN);
            by_pk.insert(keys.public, i);
            members.push(Member {
                pk: keys.public,
                dht: dht.public,
                name,
                conf,
                up: true,
                incarnation: 0,
                conference: None,
                opens: vec![0; n],
                reported: vec![false; n],
                spells: Vec::new(),
                saved: Vec::new(),
                timer: None,
            });
        }
        for i in 0..n {
            for j in [i.wrapping_sub(1), i + 1] {
                if j < n {
                    let pk = members[j].pk;
                    members[i].conf.set_friend(pk, true);
                }
            }
        }
        Sim {
            link_rng: derive_rng(cfg.seed, StreamKind::Link, 0),
            scenario_rng: derive_rng(cfg.seed, StreamKind::Scenario, 0),
            node_rng,
            cfg,
            now: Timestamp::ZERO,
            seq: 0,
            queue: BinaryHeap::new(),
            members,
            by_pk,
            links: HashMap::new(),
            messages: Vec::new(),
            report: Report::default(),
            phase: (Timestamp::MAX, Timestamp::MAX),
            joined_at: None,
        }
    }

    fn push(&mut self, at: Timestamp, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, ev)));
    }

    fn exists(&self, a: usize, b: usize) -> bool {
        are_friends(a, b) || self.members[a].opens[b] > 0
    }

    fn run(&mut self) {
        for i in 0..self.cfg.peers {
            for j in i + 1..self.cfg.peers {
                if are_friends(i, j) {
                    self.update_link(i, j);
                }
            }
        }
        self.push(Timestamp::ZERO.saturating_add(CREATE_AT), Ev::Create);
        let join_deadline = Timestamp::ZERO.saturating_add(CREATE_AT + self.cfg.join_limit);
        let mut end = Timestamp::MAX;
        while let Some(Reverse((at, _, ev))) = self.queue.pop() {
            if at > end {
                break;
            }
            self.now = at;
            if self.phase.0 == Timestamp::MAX && (self.joined_at.is_some() || at >= join_deadline) {
                let start = at.saturating_add(self.cfg.settle);
                self.phase = (start, start.saturating_add(self.cfg.message_phase));
                end = self
                    .phase
                    .1
                    .saturating_add(self.cfg.window + Duration::from_secs(1));
                self.report.joined = self
                    .members
                    .iter()
                    .filter(|m| m.conference.is_some())
                    .count();
                self.report.join_secs = at
                    .saturating_duration_since(Timestamp::ZERO.saturating_add(CREATE_AT))
                    .as_secs_f64();
                self.push(start, Ev::SendTick);
                for i in 0..self.cfg.peers {
                    self.schedule_leave(i, start);
                }
            }
            self.handle(ev);
        }
    }

    fn schedule_leave(&mut self, member: usize, from: Timestamp) {
        let rate_per_sec = self.cfg.churn_per_minute / 60.0;
        if rate_per_sec <= 0.0 {
            return;
        }
        let u: f64 = self.scenario_rng.gen_range(f64::EPSILON..1.0);
        let wait = Duration::from_secs_f64(-u.ln() / rate_per_sec);
        let at = from.saturating_add(wait);
        if at < self.phase.1 {
            self.push(at, Ev::Leave { member });
        }
    }

    fn handle(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::Create => {
                let c = self.members[0]
                    .conf
                    .create(now, &mut self.node_rng, ConferenceType::Text)
                    .expect("create");
                self.members[0].conference = Some(c);
                self.members[0].spells.push((now, None));
                self.after(0, None);
                self.push(now, Ev::Invite { from: 0 });
            }
            Ev::Invite { from } => {
                let next = from + 1;
                if next >= self.cfg.peers {
                    self.joined_at = Some(now);
                    return;
                }
                let (Some(c), true) = (self.members[from].conference, self.members[from].up) else {
                    return;
                };
                if self.members[next].conference.is_some() {
                    return;
                }
                let pk = self.members[next].pk;
                let link_up = self.link_state(from, next) == State::Up;
                if !link_up || self.members[from].conf.invite(now, c, pk).is_err() {
                    self.push(
                        now.saturating_add(Duration::from_secs(1)),
                        Ev::Invite { from },
                    );
                    return;
                }
                self.after(from, None);
                // Ask again if nothing came of it (a real user would).
                self.push(
                    now.saturating_add(Duration::from_secs(10)),
                    Ev::Invite { from },
                );
            }
            Ev::LinkUp { a, b, epoch } => {
                let Some(link) = self.links.get_mut(&(a, b)) else {
                    return;
                };
                if link.epoch != epoch || link.state != State::Connecting {
                    return;
                }
                link.state = State::Up;
                link.last_arrival = [now; 2];
                for (k, other) in [(a, b), (b, a)] {
                    self.report_link(k, other, true);
                }
            }
            Ev::LinkDown {
                to,
                other,
                incarnation,
            } => {
                if self.members[to].incarnation == incarnation
                    && self.link_state(to, other) != State::Up
                {
                    self.report_link(to, other, false);
                }
            }
            Ev::Deliver {
                from,
                to,
                incarnation,
                data,
                lossy: _,
            } => {
                let m = &mut self.members[to];
                if !m.up || m.incarnation != incarnation {
                    return;
                }
                let pk = self.members[from].pk;
                self.members[to].conf.handle_packet(now, pk, &data);
                self.after(to, Some(from));
            }
            Ev::Timer {
                member,
                incarnation,
            } => {
                let m = &mut self.members[member];
                if !m.up || m.incarnation != incarnation || m.timer != Some(now) {
                    return;
                }
                m.timer = None;
                m.conf.handle_timeout(now);
                self.after(member, None);
            }
            Ev::SendTick => {
                if now >= self.phase.1 {
                    return;
                }
                self.push(now.saturating_add(self.cfg.message_interval), Ev::SendTick);
                self.send_one();
            }
            Ev::Leave { member } => self.leave(member),
            Ev::Return { member } => self.come_back(member),
        }
    }

    fn link_state(&self, a: usize, b: usize) -> State {
        self.links
            .get(&(a.min(b), a.max(b)))
            .map_or(State::Down, |l| l.state)
    }

    /// Tells `k` the link to `other` is up or down, if it holds that link and the news is new.
    fn report_link(&mut self, k: usize, other: usize, up: bool) {
        if !self.members[k].up {
            return;
        }
        if !self.exists(k, other) {
            self.members[k].reported[other] = false;
            return;
        }
        if self.members[k].reported[other] == up {
            return;
        }
        self.members[k].reported[other] = up;
        let now = self.now;
        let (pk, dht) = (self.members[other].pk, self.members[other].dht);
        let conf = &mut self.members[k].conf;
        if up {
            conf.set_link_dht_pk(pk, dht);
        }
        conf.handle_link_status(now, pk, up);
        self.after(k, None);
    }

    /// Brings the link between `i` and `j` in line with whether both want it.
    fn update_link(&mut self, i: usize, j: usize) {
        if i == j {
            return;
        }
        let (a, b) = (i.min(j), i.max(j));
        let wanted =
            self.members[a].up && self.members[b].up && self.exists(a, b) && self.exists(b, a);
        let loss = self.cfg.profile.loss;
        let link = self.links.entry((a, b)).or_insert_with(|| Link::new(loss));
        match (wanted, link.state) {
            (true, State::Down) => {
                link.state = State::Connecting;
                link.epoch += 1;
                let epoch = link.epoch;
                let at = self.now.saturating_add(connect_delay(&self.cfg.profile));
                self.push(at, Ev::LinkUp { a, b, epoch });
            }
            (false, State::Connecting) => {
                link.state = State::Down;
                link.epoch += 1;
            }
            (false, State::Up) => {
                link.state = State::Down;
                link.epoch += 1;
                // Each side hears of it after what the other had already sent (net_crypto's
                // kill packet follows the data).
                let one_way = self.cfg.profile.rtt / 2;
                let arrivals = link.last_arrival;
                for (k, other, dir) in [(a, b, 1), (b, a, 0)] {
                    let at = self
                        .now
                        .saturating_add(one_way)
                        .max(arrivals[dir])
                        .saturating_add(Duration::from_micros(1));
                    let incarnation = self.members[k].incarnation;
                    self.push(
                        at,
                        Ev::LinkDown {
                            to: k,
                            other,
                            incarnation,
                        },
                    );
                }
            }
            _ => {}
        }
    }

    /// Carries out what engine `i` asked for and hears what it says; `cause` is the member
    /// whose packet it was handling.
    fn after(&mut self, i: usize, cause: Option<usize>) {
        // Events can lead to calls (a join on an invite) that queue more actions.
        loop {
            let acted = self.drain_actions(i);
            let mut heard = false;
            while let Some(event) = self.members[i].conf.poll_event() {
                heard = true;
                self.on_event(i, cause, event);
            }
            if !acted && !heard {
                break;
            }
        }
        let m = &mut self.members[i];
        if let Some(t) = m.conf.poll_timeout() {
            let t = if t <= self.now {
                self.now.saturating_add(ITERATION)
            } else {
                t
            };
            if m.timer.is_none_or(|s| t < s || s < self.now) {
                m.timer = Some(t);
                let incarnation = m.incarnation;
                self.push(
                    t,
                    Ev::Timer {
                        member: i,
                        incarnation,
                    },
                );
            }
        }
    }

    /// Carries out engine `i`'s link actions; true when there were any.
    fn drain_actions(&mut self, i: usize) -> bool {
        let mut any = false;
        while let Some(action) = self.members[i].conf.poll_action() {
            any = true;
            match action {
                LinkAction::Open { pk, .. } => {
                    if let Some(&j) = self.by_pk.get(&pk) {
                        self.members[i].opens[j] += 1;
                        self.update_link(i, j);
                    }
                }
                LinkAction::Release { pk } => {
                    if let Some(&j) = self.by_pk.get(&pk) {
                        self.members[i].opens[j] -= 1;
                        assert!(self.members[i].opens[j] >= 0, "a Release without its Open");
                        self.update_link(i, j);
                    }
                }
                LinkAction::Send { pk, data, lossy } => {
                    if let Some(&j) = self.by_pk.get(&pk) {
                        self.send_packet(i, j, data, lossy);
                    }
                }
            }
        }
        any
    }

    fn send_packet(&mut self, i: usize, j: usize, data: Vec<u8>, lossy: bool) {
        let (a, b) = (i.min(j), i.max(j));
        let dir = usize::from(i > j);
        let Some(link) = self.links.get_mut(&(a, b)) else {
            return;
        };
        if link.state != State::Up {
            return;
        }
        let carried = carry(
            link,
            dir,
            data.len(),
            lossy,
            self.now,
            &self.cfg.profile,
            &mut self.link_rng,
        );
        let in_phase = self.now >= self.phase.0;
        let chat = data.first() == Some(&PACKET_ID_MESSAGE)
            && matches!(data.get(9), Some(&(MESSAGE_MESSAGE_ID | MESSAGE_ACTION_ID)));
        if chat {
            self.report.chat_bytes += carried.bytes;
        } else if in_phase && self.now < self.phase.1 {
            self.report.other_bytes += carried.bytes;
        }
        if let Some(at) = carried.arrival {
            let incarnation = self.members[j].incarnation;
            self.push(
                at,
                Ev::Deliver {
                    from: i,
                    to: j,
                    incarnation,
                    data,
                    lossy,
                },
            );
        }
    }

    fn on_event(&mut self, i: usize, cause: Option<usize>, event: ConferenceEvent) {
        let now = self.now;
        match event {
            ConferenceEvent::Invite {
                friend_pk, cookie, ..
            } if self.members[i].conference.is_none() => {
                let _ = self.members[i].conf.join(now, friend_pk, &cookie);
            }
            ConferenceEvent::Connected { conference } => {
                let first = self.members[i].conference.is_none();
                self.members[i].conference = Some(conference);
                if first {
                    self.members[i].spells.push((now, None));
                    self.push(now, Ev::Invite { from: i });
                }
            }
            ConferenceEvent::Message { text, .. } => {
                let Some(seq) = parse_text(&text) else { return };
                let Some(msg) = self.messages.get_mut(seq) else {
                    return;
                };
                if msg.got[i].is_some() {
                    return;
                }
                let hops = cause
                    .and_then(|q| msg.got[q].map(|(_, h)| h + 1))
                    .unwrap_or(1);
                msg.got[i] = Some((now, hops));
            }
            _ => {}
        }
    }

    /// The members a message sent now should reach: online for [`Config::settle`] already.
    fn ready(&self, i: usize) -> bool {
        let m = &self.members[i];
        m.up && m.conference.is_some()
            && m.spells.last().is_some_and(|&(from, to)| {
                to.is_none() && from.saturating_add(self.cfg.settle) <= self.now
            })
    }

    fn send_one(&mut self) {
        let ready: Vec<usize> = (0..self.cfg.peers).filter(|&i| self.ready(i)).collect();
        if ready.is_empty() {
            return;
        }
        let sender = ready[self.scenario_rng.gen_range(0..ready.len())];
        let seq = self.messages.len();
        let now = self.now;
        let mut got = vec![None; self.cfg.peers];
        got[sender] = Some((now, 0));
        self.messages.push(Message {
            sender,
            sent: now,
            got,
        });
        let c = self.members[sender].conference.expect("ready");
        if self.members[sender]
            .conf
            .send_message(now, c, MessageKind::Normal, &message_text(seq))
            .is_err()
        {
            self.report.send_failures += 1;
        }
        self.after(sender, None);
    }

    /// A clean quit: the engine leaves every conference as `tox_kill` does, the profile's
    /// CONFERENCES section is written, the links close.
    fn leave(&mut self, i: usize) {
        if !self.members[i].up || self.members[i].conference.is_none() {
            self.schedule_leave(i, self.now);
            return;
        }
        let now = self.now;
        let saved = self.members[i].conf.save();
        let mut body = Vec::new();
        write_conferences(&saved, &mut body);
        self.members[i].saved = body;
        self.members[i].conf.close(now);
        self.after(i, None);
        let m = &mut self.members[i];
        m.up = false;
        m.timer = None;
        m.opens.iter_mut().for_each(|o| *o = 0);
        m.reported.iter_mut().for_each(|r| *r = false);
        if let Some(spell) = m.spells.last_mut() {
            spell.1 = Some(now);
        }
        for j in 0..self.cfg.peers {
            self.update_link(i, j);
        }
        self.report.churn_events += 1;
        let (lo, hi) = self.cfg.away;
        let away = self.scenario_rng.gen_range(lo..=hi);
        self.push(now.saturating_add(away), Ev::Return { member: i });
    }

    /// A restart: a fresh DHT key, the saved conference loaded, the friends known again.
    fn come_back(&mut self, i: usize) {
        let now = self.now;
        let saved = parse_conferences(&self.members[i].saved).expect("what we saved parses");
        let dht = KeyPair::generate(&mut self.node_rng).public;
        let n = self.cfg.peers;
        let m = &mut self.members[i];
        m.incarnation += 1;
        m.dht = dht;
        m.conf = Conferences::new(m.pk, dht, &m.name);
        m.conf.set_unix_time(now, UNIX_ORIGIN + now.as_secs());
        m.conf.reseed(&mut self.node_rng);
        for j in [i.wrapping_sub(1), i + 1] {
            if j < n {
                let pk = self.members[j].pk;
                self.members[i].conf.set_friend(pk, true);
            }
        }
        let m = &mut self.members[i];
        m.conf.load(now, &saved);
        m.conference = saved
            .first()
            .and_then(|s| m.conf.by_id(&rustox_core::conference::ConferenceId(s.id)));
        m.up = true;
        m.spells.push((now, None));
        self.after(i, None);
        for j in 0..n {
            self.update_link(i, j);
        }
        self.schedule_leave(i, now);
    }

    fn finish(mut self) -> Report {
        let mut r = std::mem::take(&mut self.report);
        r.peers = self.cfg.peers;
        r.phase_secs = self.cfg.message_phase.as_secs_f64();
        let rtt_ms = self.cfg.profile.rtt.as_secs_f64() * 1000.0;
        let window = self.cfg.window;
        let settle = self.cfg.settle;
        let mut targets_total = 0usize;
        for msg in &self.messages {
            let deadline = msg.sent.saturating_add(window);
            // Each target with the index of the spell it is online in (0: since it joined).
            let targets: Vec<(usize, usize)> = (0..self.cfg.peers)
                .filter(|&p| p != msg.sender)
                .filter_map(|p| {
                    let spell = self.members[p].spells.iter().position(|&(from, to)| {
                        from.saturating_add(settle) <= msg.sent && to.is_none_or(|t| t >= deadline)
                    })?;
                    Some((p, spell))
                })
                .collect();
            targets_total += targets.len();
            let mut last = msg.sent;
            let mut hops = 0;
            let mut all = true;
            for &(p, spell) in &targets {
                match msg.got[p] {
                    Some((at, h)) if at <= deadline => {
                        last = last.max(at);
                        hops = hops.max(h);
                        if spell > 0 {
                            r.heard_after_return += 1;
                        }
                    }
                    _ => {
                        all = false;
                        r.missed += 1;
                    }
                }
            }
            r.messages += 1;
            if all {
                r.reached_all += 1;
                let ms = last.saturating_duration_since(msg.sent).as_secs_f64() * 1000.0;
                r.time_to_all_ms.push(ms);
                r.hops.push(hops);
                if ms <= rtt_ms * f64::from(hops) + 100.0 {
                    r.within_budget += 1;
                }
            }
        }
        if r.messages > 0 {
            r.mean_targets = targets_total as f64 / r.messages as f64;
        }
        let up_links = self.links.values().filter(|l| l.state == State::Up).count();
        let running = self.members.iter().filter(|m| m.up).count();
        if running > 0 {
            r.links_per_peer = 2.0 * up_links as f64 / running as f64;
        }
        // The heap each running engine holds: what dropping it gives back.
        let mut heap = 0u64;
        let mut estimate = 0u64;
        let mut counted = 0u64;
        for m in self.members.iter_mut().filter(|m| m.up) {
            estimate += m.conf.memory_estimate() as u64;
            let placeholder = Conferences::new(m.pk, m.pk, b"");
            let before = crate::heap_meter::live_bytes();
            drop(std::mem::replace(&mut m.conf, placeholder));
            if let (Some(before), Some(after)) = (before, crate::heap_meter::live_bytes()) {
                heap += before.saturating_sub(after);
            }
            counted += 1;
        }
        if let Some(mean) = estimate.checked_div(counted) {
            r.estimate_per_peer = mean;
            r.heap_per_peer = heap
                .checked_div(counted)
                .filter(|_| crate::heap_meter::installed());
        }
        r
    }
}
