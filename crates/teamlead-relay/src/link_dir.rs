//! The link's state on disk, under `teams/<team>/.teamlead/link/<link id>/` (directory 0700,
//! files 0600), so a killed lead server or relay resumes where it was:
//!
//! * `outbox.jsonl`: every `data` this side sent and the peer has not acknowledged, one line
//!   each (`{"seq","body","key"?}`), appended and synced *before* the frame is written;
//! * `acked`: the highest seq the peer acknowledged (lines up to it are dropped when the outbox
//!   is compacted);
//! * `recv`: the highest seq received from the peer and applied;
//! * `forwarded.jsonl`: the keys of the inbox entries already put in the outbox, so an entry
//!   is forwarded once even across restarts;
//! * `hosted.json`: on a relay, the members of the team that run on its host (the lead's
//!   `route`).
//! * `relay.lock`: on a relay, an exclusive `flock` held from its bind to its exit, so a new
//!   relay of the link never runs beside an old one ([`LinkDir::hold_relay`]).
//!
//! A line torn by a crash at the end of `outbox.jsonl` or `forwarded.jsonl` was never sent (the
//! write comes first), so it is skipped.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use teamlead_protocol::names::check_path_component;
use teamlead_protocol::store::atomic::write_atomic;
use teamlead_protocol::store::safe_file::read_regular;
use teamlead_protocol::store::{Home, Result, StoreError};

use crate::wire::Body;

/// Acknowledged lines kept in `outbox.jsonl` before it is rewritten without them.
const COMPACT_AFTER: usize = 256;

/// The largest state file read back (the outbox of a long partition stays far below).
const MAX_STATE_BYTES: u64 = 1 << 30;

/// One unacknowledged `data` of the outbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outgoing {
    pub seq: u64,
    pub body: Body,
    /// The key of the inbox entry it forwards (see [`crate::forward`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The state of one link on one host, as loaded from and kept on disk.
#[derive(Debug)]
pub struct LinkDir {
    dir: PathBuf,
    outbox: Vec<Outgoing>,
    next_seq: u64,
    acked: u64,
    recv: u64,
    forwarded: HashSet<String>,
    hosted: Option<Vec<String>>,
    /// Acknowledged lines still in `outbox.jsonl`.
    stale_lines: usize,
    /// Opened without `acked` or `recv` on disk and no handshake since: a new link, or one
    /// whose state was lost (see [`LinkDir::skip_to`]).
    fresh: bool,
}

impl LinkDir {
    /// `teams/<team>/.teamlead/link/<link>/` of `home`.
    pub fn path(home: &Home, team: &str, link: &str) -> Result<PathBuf> {
        Ok(home
            .teamlead_dir(team)?
            .join("link")
            .join(check_path_component(link)?))
    }

    /// Holds `relay.lock` in the link's directory (an exclusive `flock`, released when the
    /// returned file closes, even by a killed process), waiting up to `wait` for the holder to
    /// go. One relay of a link at a time: an old relay whose ssh session has not ended yet (its
    /// master just killed, or its lead partitioned away and not yet silent for long enough)
    /// must not share the outbox and `recv` with the new one. Past `wait`: `LockTimeout`, the
    /// connection ends and the lead connects again.
    pub fn hold_relay(
        home: &Home,
        team: &str,
        link: &str,
        wait: std::time::Duration,
    ) -> Result<std::fs::File> {
        use std::os::fd::AsRawFd;
        let dir = LinkDir::path(home, team, link)?;
        home.ensure_dir(&dir)?;
        let path = dir.join("relay.lock");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        let end = std::time::Instant::now() + wait;
        loop {
            // SAFETY: flock on a descriptor owned here.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(file);
            }
            if std::time::Instant::now() >= end {
                return Err(StoreError::LockTimeout { path });
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Loads (or creates) the state of `link` for `team`.
    pub fn open(home: &Home, team: &str, link: &str) -> Result<LinkDir> {
        let dir = LinkDir::path(home, team, link)?;
        home.ensure_dir(&dir)?;
        let fresh = !dir.join("acked").exists() && !dir.join("recv").exists();
        let acked = read_number(&dir.join("acked"))?;
        let recv = read_number(&dir.join("recv"))?;
        let lines: Vec<Outgoing> = read_lines(&dir.join("outbox.jsonl"))?;
        end_torn_line(&dir.join("outbox.jsonl"))?;
        end_torn_line(&dir.join("forwarded.jsonl"))?;
        let mut forwarded: HashSet<String> = read_lines::<String>(&dir.join("forwarded.jsonl"))?
            .into_iter()
            .collect();
        let hosted = match read_regular(&dir.join("hosted.json"), MAX_STATE_BYTES)? {
            None => None,
            Some(bytes) => Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| StoreError::parse(dir.join("hosted.json"), e))?,
            ),
        };
        let highest = lines.iter().map(|o| o.seq).max().unwrap_or(0);
        let mut me = LinkDir {
            next_seq: highest.max(acked) + 1,
            stale_lines: lines.iter().filter(|o| o.seq <= acked).count(),
            outbox: Vec::new(),
            dir,
            acked,
            recv,
            forwarded: HashSet::new(),
            hosted,
            fresh,
        };
        // Keys of lines still in the outbox (moved to `forwarded.jsonl` by a compaction).
        for o in &lines {
            if let Some(key) = &o.key {
                forwarded.insert(key.clone());
            }
        }
        me.forwarded = forwarded;
        me.outbox = lines.into_iter().filter(|o| o.seq > acked).collect();
        me.outbox.sort_by_key(|o| o.seq);
        me.outbox.dedup_by_key(|o| o.seq);
        Ok(me)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The highest seq received and applied.
    pub fn recv(&self) -> u64 {
        self.recv
    }

    /// The highest seq the peer acknowledged.
    pub fn acked(&self) -> u64 {
        self.acked
    }

    /// What waits for an acknowledgement, in seq order.
    pub fn unacked(&self) -> &[Outgoing] {
        &self.outbox
    }

    /// Whether the entry with this key was forwarded already.
    pub fn was_forwarded(&self, key: &str) -> bool {
        self.forwarded.contains(key)
    }

    /// The relay's hosted members (`None`: the lead has not said yet).
    pub fn hosted(&self) -> Option<&[String]> {
        self.hosted.as_deref()
    }

    /// Puts `body` in the outbox under the next seq, durably, and returns it.
    pub fn push(&mut self, body: Body, key: Option<String>) -> Result<Outgoing> {
        let mut out = self.push_many(vec![(body, key)])?;
        out.pop()
            .ok_or_else(|| StoreError::parse(self.dir.join("outbox.jsonl"), "nothing pushed"))
    }

    /// Puts each body in the outbox under the next seqs with one synced append, and returns
    /// them. The line carries the forwarded entry's key: once it is on disk the entry is never
    /// picked up again.
    pub fn push_many(&mut self, items: Vec<(Body, Option<String>)>) -> Result<Vec<Outgoing>> {
        let path = self.dir.join("outbox.jsonl");
        let mut bytes = Vec::new();
        let mut out = Vec::with_capacity(items.len());
        for (i, (body, key)) in items.into_iter().enumerate() {
            let o = Outgoing {
                seq: self.next_seq + i as u64,
                body,
                key,
            };
            bytes.extend(serde_json::to_vec(&o).map_err(|e| StoreError::parse(&path, e))?);
            bytes.push(b'\n');
            out.push(o);
        }
        if out.is_empty() {
            return Ok(out);
        }
        append_bytes(&path, &bytes)?;
        self.next_seq += out.len() as u64;
        for o in &out {
            if let Some(key) = &o.key {
                self.forwarded.insert(key.clone());
            }
        }
        self.outbox.extend(out.iter().cloned());
        Ok(out)
    }

    /// The peer applied everything up to `seq`: persists it and drops what it covers.
    pub fn ack(&mut self, seq: u64) -> Result<()> {
        if seq <= self.acked {
            return Ok(());
        }
        let seq = seq.min(self.next_seq.saturating_sub(1));
        if seq <= self.acked {
            return Ok(());
        }
        write_small(&self.dir.join("acked"), seq.to_string().as_bytes())?;
        self.acked = seq;
        let before = self.outbox.len();
        self.outbox.retain(|o| o.seq > seq);
        self.stale_lines += before - self.outbox.len();
        if self.stale_lines >= COMPACT_AFTER {
            self.compact()?;
        }
        Ok(())
    }

    /// The peer says it applied `seq`, beyond anything this side remembers sending: this side's
    /// state was lost (a removed directory). Seqs continue after it, so new data is not taken
    /// by the peer for a repeat.
    ///
    /// A side whose state is fresh (no `acked`, no `recv` on disk) while the peer has applied
    /// something lost its state: whatever its outbox holds now was made since and never sent,
    /// so it is renumbered after the peer's `recv` even when its seqs already reach that far (a
    /// side that forwards its inboxes again after the loss may well have queued more than the
    /// peer ever applied; numbered from 1, those would be taken for repeats and dropped).
    pub fn skip_to(&mut self, seq: u64) -> Result<()> {
        let lost = self.fresh && seq > self.acked;
        if self.fresh {
            // From this handshake on the link has state on disk: `recv` says so.
            write_atomic(&self.dir.join("recv"), self.recv.to_string().as_bytes())?;
            self.fresh = false;
        }
        if seq >= self.next_seq || lost {
            tracing::warn!(
                "the peer applied seq {seq} but this side's outbox ends at {} (lost: {lost}): \
                 continuing after it",
                self.next_seq - 1
            );
            self.next_seq = seq + 1;
            // Every line still in the outbox is older than what the peer has: renumber them
            // after it so they are still delivered.
            let pending = std::mem::take(&mut self.outbox);
            self.acked = seq;
            self.compact()?;
            self.push_many(pending.into_iter().map(|o| (o.body, o.key)).collect())?;
        }
        Ok(())
    }

    /// Everything up to `seq` is applied here (each batch, before its ack). Written, not
    /// synced: what it covers is on disk already (each body is applied with its own synced
    /// write before `recv` moves), and a `recv` that a power loss takes back is made good at
    /// the next handshake from the peer's `acked` ([`LinkDir::set_recv_synced`]; the peer
    /// drops a line only after a synced `acked` covers it), while what the peer sends again
    /// above that is skipped as after a crash between an append and `recv` (relay ids). Two
    /// fsyncs fewer for every batch a side receives: on a link that carries one message at a
    /// time, four per round trip, each one contending with the writers of the inboxes it
    /// delivers to.
    pub fn set_recv(&mut self, seq: u64) -> Result<()> {
        write_small(&self.dir.join("recv"), seq.to_string().as_bytes())?;
        self.recv = seq;
        Ok(())
    }

    /// [`LinkDir::set_recv`], synced: the handshake's correction of a `recv` that was lost
    /// (taken from the peer's `acked`).
    pub fn set_recv_synced(&mut self, seq: u64) -> Result<()> {
        write_atomic(&self.dir.join("recv"), seq.to_string().as_bytes())?;
        self.recv = seq;
        Ok(())
    }

    /// The lead's route (relay side): the members that run on this host.
    pub fn set_hosted(&mut self, hosted: Vec<String>) -> Result<()> {
        let bytes = serde_json::to_vec(&hosted)
            .map_err(|e| StoreError::parse(self.dir.join("hosted.json"), e))?;
        write_atomic(&self.dir.join("hosted.json"), &bytes)?;
        self.hosted = Some(hosted);
        Ok(())
    }

    /// Rewrites `outbox.jsonl` with the unacknowledged lines only, after the keys of the lines
    /// it drops are in `forwarded.jsonl`.
    fn compact(&mut self) -> Result<()> {
        // `acked` is written unsynced on every ack (a lost one only resends); before the lines
        // it covers leave the outbox it must be durable, or seqs would be reused.
        write_atomic(&self.dir.join("acked"), self.acked.to_string().as_bytes())?;
        let outbox = self.dir.join("outbox.jsonl");
        let kept: HashSet<u64> = self.outbox.iter().map(|o| o.seq).collect();
        let mut keys = Vec::new();
        for o in read_lines::<Outgoing>(&outbox)? {
            if let Some(key) = o.key
                && !kept.contains(&o.seq)
            {
                keys.extend(serde_json::to_vec(&key).map_err(|e| StoreError::parse(&outbox, e))?);
                keys.push(b'\n');
            }
        }
        if !keys.is_empty() {
            append_bytes(&self.dir.join("forwarded.jsonl"), &keys)?;
        }
        let mut bytes = Vec::new();
        for o in &self.outbox {
            let line = serde_json::to_string(o)
                .map_err(|e| StoreError::parse(self.dir.join("outbox.jsonl"), e))?;
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        write_atomic(&self.dir.join("outbox.jsonl"), &bytes)?;
        self.stale_lines = 0;
        Ok(())
    }
}

/// A number file; missing or empty is 0.
fn read_number(path: &Path) -> Result<u64> {
    match read_regular(path, 64)? {
        None => Ok(0),
        Some(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.trim();
            if text.is_empty() {
                return Ok(0);
            }
            text.parse()
                .map_err(|_| StoreError::parse(path, format!("not a number: {text:?}")))
        }
    }
}

/// The JSON lines of `path` (missing: none). A line that does not parse was cut by a crash
/// while it was written (every line is appended whole and synced before it is used, and a cut
/// line is ended before the next append), so it was never sent: it is skipped.
fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>> {
    let Some(bytes) = read_regular(path, MAX_STATE_BYTES)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        match serde_json::from_slice(line) {
            Ok(v) => out.push(v),
            Err(e) => tracing::warn!("{}: skipping a line cut by a crash ({e})", path.display()),
        }
    }
    Ok(out)
}

/// Appends whole lines to `path` (created 0600, never through a symbolic link) and syncs it.
fn append_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| StoreError::io(path, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_data())
        .map_err(|e| StoreError::io(path, e))
}

/// Ends a last line cut by a crash, so the next append starts on a line of its own.
fn end_torn_line(path: &Path) -> Result<()> {
    match read_regular(path, MAX_STATE_BYTES)? {
        Some(bytes) if !bytes.is_empty() && !bytes.ends_with(b"\n") => append_bytes(path, b"\n"),
        _ => Ok(()),
    }
}

/// Replaces a small file (a number) by a temporary file renamed over it, not synced: `acked`
/// between compactions (a value a power loss takes back only makes this side send again what
/// the peer has, which the peer skips by seq) and `recv` after a batch ([`LinkDir::set_recv`]).
fn write_small(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp.{}", uuid::Uuid::new_v4().simple()));
    let temp = path.with_file_name(name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&temp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(StoreError::io(path, e));
    }
    Ok(())
}
