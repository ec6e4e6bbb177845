//! The controller's copies of the team's files, kept through the [`StoreWorker`]
//! (see `store_worker`): `config.json` and the task list as last read (re-read in the
//! background after a change, or read fresh before a decision that then runs as the read's
//! continuation), messages to a
//! member's inbox (appended in its inbox lane; the sender hears back when it is written), and
//! the session record. Nothing here touches a file on the loop.
//!
//! [`StoreWorker`]: super::store_worker::StoreWorker

use super::state::{Controller, Phase};
use super::store_worker::Lane;
use super::team_cache::ReadTicket;
use crate::lead::tracking::Activity;
use crate::protocol::frames::Frame;
use crate::protocol::time::now_ms;
use crate::protocol::{InboxEntry, TeamFile};
use crate::store::tasks::TaskListing;
use crate::store::team_guard::Repair;
use crate::store::{self, StoreError};

impl Controller {
    /// Writes the session record (what the next lead needs, the worktrees of this session and
    /// of the leads before it included) in the background; a failure is told once. Asked for
    /// while a write is under way, it writes once more when that one is done, with the record
    /// as it is then: the latest record always reaches the disk, a burst in a few writes.
    pub fn save_record(&mut self) {
        if self.record_write.start() {
            self.write_record();
        }
    }

    fn write_record(&mut self) {
        // The worktrees not retired yet, so a lead taking over after a crash retires them
        // (those on hosts are not recorded: the record has no host for them).
        let worktrees = self
            .worktrees
            .iter()
            .filter(|(_, w)| w.host.is_none())
            .map(|(name, w)| store::session_record::WorktreeRecord {
                name: name.to_string(),
                path: w.path.to_string_lossy().into_owned(),
                branch: w.branch.clone(),
                repo: w.repo.to_string_lossy().into_owned(),
            })
            .collect();
        let record = self.record.to_write(worktrees);
        let team = self.given.team().to_string();
        self.store.submit(
            Lane::Record,
            move |home| record.write(home, &team),
            |c, written| {
                if let Err(e) = written {
                    c.note_once(format!("Cannot write the session record: {e}"));
                }
                if c.record_write.finish() {
                    c.save_record();
                }
            },
        );
    }

    /// Asks for a re-read of `config.json` (after a change event, a write of the lead's own, or
    /// by the safety poll); the copy is replaced when it is done.
    pub fn reload_team(&mut self) {
        if !self.team_reload.start() {
            return;
        }
        let team = self.given.team().to_string();
        let clock = self.cache.clock();
        self.store.submit(
            Lane::TeamReads,
            move |home| (clock.stamp(), store::team_guard::read_guarded(home, &team)),
            move |c, (ticket, read)| {
                c.apply_team(read, ticket);
                if c.team_reload.finish() {
                    c.reload_team();
                }
            },
        );
    }

    /// Reads `config.json` now (off the loop, lock-free) and awaits it: at start-up, before
    /// the loop runs.
    pub async fn fresh_team(&mut self) {
        let team = self.given.team().to_string();
        let clock = self.cache.clock();
        if let Some((ticket, read)) = self
            .store
            .read(move |home| {
                (
                    clock.stamp(),
                    store::read_team(home, &team).map(|f| (f, None)),
                )
            })
            .await
        {
            self.apply_team(read, ticket);
        }
    }

    /// Reads `config.json` (off the loop, lock-free, never behind a write), takes it as the
    /// copy, then runs `then`: a decision that needs the members as they are.
    pub fn with_fresh_team(&mut self, then: impl FnOnce(&mut Controller) + Send + 'static) {
        let team = self.given.team().to_string();
        let clock = self.cache.clock();
        self.store.read_then(
            move |home| {
                (
                    clock.stamp(),
                    store::read_team(home, &team).map(|f| (f, None)),
                )
            },
            move |c, (ticket, read)| {
                c.apply_team(read, ticket);
                then(c)
            },
        );
    }

    /// Runs `then` with whether `name` is a teammate: at once when the copy of `config.json`
    /// (or a start under way) knows it, else after a fresh read (it may have just changed).
    pub fn with_teammate(
        &mut self,
        name: &str,
        then: impl FnOnce(&mut Controller, bool) + Send + 'static,
    ) {
        if self.knows_teammate(name) {
            return then(self, true);
        }
        let name = name.to_string();
        self.with_fresh_team(move |c| {
            let known = c.knows_teammate(&name);
            then(c, known)
        });
    }

    /// Whether the copy of `config.json` has `name` as a teammate, or a start of it is under
    /// way.
    pub fn knows_teammate(&self, name: &str) -> bool {
        self.cache.file().member(name).is_some_and(|m| !m.is_lead())
            || self.roster.is_starting(name)
    }

    /// Takes a read of `config.json`, started at `ticket`, as the copy (a failure is told
    /// once). A read older than one already taken is dropped whole: its `isActive` and members
    /// are the past.
    pub(super) fn apply_team(
        &mut self,
        read: Result<(TeamFile, Option<Repair>), StoreError>,
        ticket: ReadTicket,
    ) {
        if self.cache.is_stale(ticket) {
            return;
        }
        match read {
            Ok((mut file, repair)) => {
                self.keep_held_modes(&mut file);
                if let Some(repair) = repair {
                    self.note(format!("Repaired the team file: {repair}."));
                }
                let now = now_ms();
                let mut ended_unseen = Vec::new();
                for member in file.teammates() {
                    let t = self.roster.entry(&member.name);
                    if t.observe_is_active(member.is_active, now) {
                        ended_unseen.push(member.name.clone());
                    }
                }
                // Its `false` after the lead's own `true`: a turn of its ran (and ended).
                for name in ended_unseen {
                    self.teammate_acted(&name, now);
                }
                for member in file.teammates() {
                    let carried = crate::protocol::display::controls_in(member);
                    if !carried.is_empty() {
                        self.note_once(format!(
                            "Teammate {} carries control sequences in {}: shown escaped, never applied.",
                            crate::protocol::display::visible_line(&member.name),
                            crate::protocol::display::field_list(&carried)
                        ));
                    }
                }
                for bad in &file.invalid_members {
                    let text = format!(
                        "config.json has a member entry without a string agentId and name: {}",
                        crate::protocol::inbox::clip(&bad.to_string(), 120)
                    );
                    self.note_once(text);
                }
                self.cache.replace_file(file, ticket);
            }
            Err(StoreError::NotFound { .. }) if self.phase == Phase::Running => {
                self.note_once("The team file config.json is gone: the team was deleted.");
            }
            Err(StoreError::NotFound { .. }) => {}
            Err(e) => self.note_once(format!("Cannot read the team file: {e}")),
        }
    }

    /// Asks for a re-read of the task list; the copy is replaced when it is done.
    pub fn reload_tasks(&mut self) {
        if !self.task_reload.start() {
            return;
        }
        let list = self.task_list.clone();
        self.store.submit(
            Lane::TaskReads,
            move |_| list.list(),
            |c, listed| {
                c.apply_tasks(listed);
                if c.task_reload.finish() {
                    c.reload_tasks();
                }
            },
        );
    }

    /// Reads the task list now (off the loop, lock-free) and awaits it: at start-up.
    pub async fn fresh_tasks(&mut self) {
        let list = self.task_list.clone();
        if let Some(listed) = self.store.read(move |_| list.list()).await {
            self.apply_tasks(listed);
        }
    }

    /// Reads the task list (off the loop, lock-free), takes it as the copy, then runs `then`.
    pub fn with_fresh_tasks(&mut self, then: impl FnOnce(&mut Controller) + Send + 'static) {
        let list = self.task_list.clone();
        self.store.read_then(
            move |_| list.list(),
            move |c, listed| {
                c.apply_tasks(listed);
                then(c)
            },
        );
    }

    fn apply_tasks(&mut self, listed: Result<TaskListing, StoreError>) {
        match listed {
            Ok(listing) => {
                for problem in listing.problems {
                    self.note_once(format!("Skipped a task file: {problem}"));
                }
                for task in &listing.tasks {
                    let carried = crate::protocol::display::controls_in(task);
                    if !carried.is_empty() {
                        self.note_once(format!(
                            "Task #{} carries control sequences in {}: shown escaped, never applied.",
                            crate::protocol::display::visible_line(&task.id),
                            crate::protocol::display::field_list(&carried)
                        ));
                    }
                }
                self.wave.observe(&listing.tasks, now_ms());
                let before = self.cache.replace_tasks(listing.tasks);
                self.say_claude_completions(&before);
            }
            Err(e) => self.note_once(format!("Cannot read the task list: {e}")),
        }
    }

    /// Appends `entry` (a message or a frame) to `to`'s inbox in its lane (after every earlier
    /// entry to `to`), followed in the message ledger (`lead::ledger`); wakes `to` if it runs
    /// here, then runs `then` on the loop with how it went.
    pub fn deliver(
        &mut self,
        to: &str,
        entry: InboxEntry,
        then: impl FnOnce(&mut Controller, Result<(), StoreError>) + Send + 'static,
    ) {
        self.send_message(to, entry, move |c, sent, _| then(c, sent));
    }

    /// [`Controller::deliver`], where `then` also gets the entry's ledger id (to show beside
    /// the message); its receipt follows.
    pub fn send_message(
        &mut self,
        to: &str,
        entry: InboxEntry,
        then: impl FnOnce(&mut Controller, Result<(), StoreError>, u64) + Send + 'static,
    ) {
        let now = now_ms();
        let id = self.ledger.sending(to, &entry, now);
        // A parked teammate gets it when it is resumed (`controller::park`); sent as far as
        // the sender is concerned.
        if self.hold_for_park(to, &entry, id) {
            self.store.submit(
                Lane::Inbox(to.to_string()),
                |_| (),
                move |c, ()| then(c, Ok(()), id),
            );
            return;
        }
        self.write_entry(to, entry, id, then);
    }

    /// Writes `entry` (ledger id `id`) into `to`'s inbox: the rest of
    /// [`Controller::send_message`], and how a held entry is delivered.
    pub(super) fn write_entry(
        &mut self,
        to: &str,
        entry: InboxEntry,
        id: u64,
        then: impl FnOnce(&mut Controller, Result<(), StoreError>, u64) + Send + 'static,
    ) {
        // A teammate on another host gets it over its link now; the copy below is the lead's
        // record (and is not sent again). Its mark before delivery and the wait for its `false`
        // concern the lead's copy of the team file only: the host's client reads its own.
        self.given.executor().hand_off(to, &entry);
        let now = now_ms();
        // An idle `claude` teammate's `isActive` is set `true` by the lead first (docs/DESIGN.md,
        // "The lead marks an idle claude teammate active before it delivers").
        let mark = self.is_claude(to)
            && starts_a_turn(&entry)
            && self
                .roster
                .get_mut(to)
                .is_some_and(|t| t.mark_before_delivery(now));
        // Held idle by the lead (its idle notification came), the client's own `false` may
        // still be on its way: the entry waits for it, so the mark comes between.
        let idle = mark
            && self
                .roster
                .get(to)
                .is_some_and(|t| matches!(t.activity(), Activity::Idle { .. }));
        let (team, name) = (self.given.team().to_string(), to.to_string());
        let key = entry.dedup_key();
        self.store.submit(
            Lane::Inbox(to.to_string()),
            move |home| {
                if idle {
                    wait_for_false(home, &team, &name, IDLE_FALSE_WAIT, || true);
                }
                let marked = mark
                    && store::mark_active_before_turn(home, &team, &name).unwrap_or_else(|e| {
                        tracing::warn!("could not mark {name} active before a delivery: {e}");
                        false
                    });
                let began = std::time::Instant::now();
                let appended = store::inbox::append(home, &team, &name, &entry).map(|_| ());
                tracing::debug!(teammate = %name, took_us = began.elapsed().as_micros() as u64, "entry appended");
                (appended, marked)
            },
            {
                let to = to.to_string();
                move |c: &mut Controller, (appended, marked): (Result<(), StoreError>, bool)| {
                    let ok = appended.is_ok();
                    if mark && !marked && ok {
                        // Not idle in the file yet: its `false` may trail its idle notification.
                        c.mark_when_idle(&to, key);
                    } else if mark && let Some(t) = c.roster.get_mut(&to) {
                        tracing::debug!(teammate = %to, wrote = marked, "isActive marked before a delivery");
                        t.mark_written(marked);
                    }
                    if ok {
                        c.given.executor().wake(&to);
                    }
                    then(c, appended, id);
                    c.ledger_written(id, ok);
                }
            },
        );
    }

    /// The lead's mark before a delivery found `to` not idle in `config.json`: a client ends
    /// its turn with its idle notification and its `isActive: false`, un-awaited and not in
    /// that order (2.1.45 writes the `false` up to ~0.3 s after the notification), so a
    /// message sent on the notification can find the file still `true`. Until the entry is
    /// taken, or for [`LATE_MARK_WAIT`], the file is read (lock-free, off the loop, in the
    /// teammate's own uncounted lane) for that `false`, and marked over it. A teammate that is
    /// busy, or was interrupted (no `false` comes), only costs the wait.
    fn mark_when_idle(&mut self, to: &str, key: String) {
        let (team, name) = (self.given.team().to_string(), to.to_string());
        self.store.submit(
            Lane::Marks(to.to_string()),
            move |home| {
                let unread = || {
                    store::inbox::read(home, &team, &name).is_ok_and(|r| {
                        r.entries
                            .iter()
                            .any(|e| e.dedup_key() == key && e.read != Some(true))
                    })
                };
                // The store writes only over the client's own `false`.
                wait_for_false(home, &team, &name, LATE_MARK_WAIT, unread)
                    && store::mark_active_before_turn(home, &team, &name).unwrap_or(false)
            },
            {
                let to = to.to_string();
                move |c: &mut Controller, wrote: bool| {
                    tracing::debug!(teammate = %to, wrote, "isActive marked after waiting for its false");
                    if let Some(t) = c.roster.get_mut(&to) {
                        t.mark_written(wrote);
                    }
                }
            },
        );
    }

    /// [`Controller::deliver`] whose failure is told as `what` ("Could not send … : error").
    pub fn deliver_or_note(&mut self, to: &str, entry: InboxEntry, what: String) {
        self.deliver(to, entry, move |c, appended| {
            if let Err(e) = appended {
                c.note(format!("{what}: {e}"));
            }
        });
    }
}

/// How long a mark waits for a teammate's own `isActive: false` after a delivery that found it
/// `true` (a client polls its inbox about once a second, so the entry is taken by then).
const LATE_MARK_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// How long an entry for a teammate the lead holds idle waits for the client's own
/// `isActive: false` before it is appended: 2.1.45 writes it 31 to 504 ms after its idle
/// notification on a quiet machine, seconds later on a loaded one (docs/PROTOCOL.md §4).
const IDLE_FALSE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Reads (lock-free) `team`'s file every 20 ms until `name` no longer says `isActive: true`
/// (whether it then did), while `wanted` holds and `limit` has not passed; off the loop.
fn wait_for_false(
    home: &store::Home,
    team: &str,
    name: &str,
    limit: std::time::Duration,
    wanted: impl Fn() -> bool,
) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if !wanted() {
            return false;
        }
        let settled = store::read_team(home, team)
            .is_ok_and(|f| f.member(name).is_none_or(|m| m.is_active != Some(true)));
        if settled {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether a `claude` client may take `entry` as a turn: everything but a mode change (its
/// poller applies it without one). An answer to a request is included: a teammate that waits
/// for it mid-turn is active in the file (nothing is written), and 2.1.45's ExitPlanMode
/// returns at once, so the plan's answer can find it idle.
fn starts_a_turn(entry: &InboxEntry) -> bool {
    !matches!(entry.parse_frame(), Some(Frame::ModeSetRequest(_)))
}
