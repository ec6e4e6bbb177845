//! The tmux backend's `impl PaneBackend`: making a pane beside the lead or on the private
//! server (serialized), starting the command line in it (`respawn-pane -k`), its border and
//! title in the teammate's color and name, hiding it in a session of its own and bringing it
//! back, focus, keys, the state of every pane in one call, its last lines, its title and pid,
//! and taking over a previous session's private server.

use super::{HIDDEN_SESSION, NAME_OPTION, SWARM_SESSION, TmuxBackend, TmuxLayout, TmuxServer};
use crate::backend::{BackendError, BackendKind, PaneBackend, PaneKey, PaneState};
use crate::protocol::Color;

/// One tmux command, its words.
type Command = Vec<String>;

fn command(words: &[&str]) -> Command {
    words.iter().map(|w| w.to_string()).collect()
}

fn words(command: &[String]) -> Vec<&str> {
    command.iter().map(String::as_str).collect()
}

/// The placeholder of a pane whose command starts right after it is recorded: none (tmux 3.0
/// and later make an empty pane for an empty command, with no process, which
/// `respawn-pane -k` starts in like any other). A `cat` in its place was a shell and `cat`
/// forked and started, and a utmp record written by a helper tmux waits for, at the split and
/// again at the start: about 2 ms of every spawn.
const EMPTY_PANE: &str = "";

/// What a styled pane gets with its start: its name and color, and its layout's commands
/// (which may fail without harm).
#[derive(Debug)]
pub(super) struct PaneSetup {
    name: String,
    color: Option<Color>,
    after: Vec<Command>,
}

/// The commands that give `pane` its border and title in `name` and `color`.
fn style_commands(pane: &str, name: &str, color: Option<Color>) -> Vec<Command> {
    let fg = color.map(Color::tmux_name).unwrap_or("default");
    let border = format!("fg={fg}");
    // The border shows a pane option of ours, not `#{pane_title}`: Claude Code retitles its
    // pane (`✳ general-purpose`), so every claude teammate's border read the same.
    let format = format!("#[fg={fg},bold] #{{{NAME_OPTION}}} #[default]");
    vec![
        command(&["set-option", "-p", "-t", pane, "pane-border-style", &border]),
        command(&[
            "set-option",
            "-p",
            "-t",
            pane,
            "pane-active-border-style",
            &border,
        ]),
        command(&["select-pane", "-t", pane, "-T", name]),
        command(&["set-option", "-p", "-t", pane, NAME_OPTION, name]),
        command(&[
            "set-option",
            "-p",
            "-t",
            pane,
            "pane-border-format",
            &format,
        ]),
    ]
}

impl TmuxBackend {
    /// Makes a pane running `placeholder` (`cat`, or [`EMPTY_PANE`] for none; serialized: one
    /// at a time) and returns its id, with the commands that lay it out, which may fail
    /// without harm (run after it, or with its style and start when it has a style).
    fn make_pane(&self, placeholder: &str) -> Result<(String, Vec<Command>), BackendError> {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        let mut after = Vec::new();
        let id = match &self.layout {
            TmuxLayout::Inside { lead_pane } => {
                // One listing: the panes alive (those that closed by themselves, a teammate
                // that shut down, are forgotten), so only a live one beside the lead is split.
                let listing = self
                    .server
                    .run(&["list-panes", "-a", "-F", "#{pane_id}"])
                    .unwrap_or_default();
                let alive: Vec<&str> = listing.lines().map(str::trim).collect();
                panes.retain(|p| alive.contains(&p.as_str()));
                let window = self.window_of(lead_pane)?;
                let id = loop {
                    // Only a teammate pane beside the lead is split (a hidden one is elsewhere).
                    let beside_lead = self.panes_of_window(&window);
                    let visible: Vec<String> = panes
                        .iter()
                        .filter(|p| beside_lead.contains(p))
                        .cloned()
                        .collect();
                    match self.split_beside_lead(lead_pane, &visible, placeholder) {
                        // The pane split was closing as it was listed (a teammate that just
                        // shut down): forget it and split another.
                        Err(BackendError::Command { detail, .. })
                            if detail.contains("can't find pane") && !visible.is_empty() =>
                        {
                            let gone = visible.last();
                            panes.retain(|p| Some(p) != gone);
                        }
                        made => break made?,
                    }
                };
                let _ = self
                    .server
                    .run(&["select-layout", "-t", &window, "main-vertical"]);
                self.resize_lead(lead_pane, &window);
                after.push(command(&[
                    "set-option",
                    "-w",
                    "-t",
                    &window,
                    "pane-border-status",
                    "top",
                ]));
                id
            }
            TmuxLayout::Private => {
                // The split is tried first, without a listing (one tmux client fewer per
                // spawn): it fails when the private server or its swarm session is not there
                // yet (the first teammate, or every teammate pane closed), and the session is
                // made then. A session that was there after all (tmux: "duplicate session")
                // means the split failed for its own reason, and its error says which.
                let target = format!("{SWARM_SESSION}:teammates");
                let split = self.server.run(&[
                    "split-window",
                    "-d",
                    "-t",
                    &target,
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "--",
                    placeholder,
                ]);
                match split {
                    Ok(id) => {
                        after.push(command(&["select-layout", "-t", &target, "tiled"]));
                        id
                    }
                    Err(split) => match self.new_swarm() {
                        Ok(id) => id,
                        Err(e) if e.to_string().contains("duplicate session") => return Err(split),
                        Err(e) => return Err(e),
                    },
                }
            }
        };
        after.push(command(&[
            "set-option",
            "-p",
            "-t",
            &id,
            "remain-on-exit",
            "failed",
        ]));
        panes.push(id.clone());
        Ok((id, after))
    }
}

impl PaneBackend for TmuxBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Tmux
    }

    /// Creates a pane running `cat` and returns its id. Serialized: one at a time.
    fn create_pane(&self) -> Result<String, BackendError> {
        let (id, after) = self.make_pane("cat")?;
        for command in &after {
            let _ = self.server.run(&words(command));
        }
        Ok(id)
    }

    /// A new pane for `name`: the pane in one call; its style and layout go with its start,
    /// in the same tmux call ([`PaneBackend::run_command`]). A spawn used to take eleven tmux
    /// clients in a row, each a process and a round trip: most of a pane spawn's time.
    fn create_styled_pane(&self, name: &str, color: Option<Color>) -> Result<String, BackendError> {
        let (id, after) = self.make_pane(EMPTY_PANE)?;
        let setup = PaneSetup {
            name: name.to_string(),
            color,
            after,
        };
        self.setups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), setup);
        Ok(id)
    }

    /// Starts the teammate's command in a placeholder pane (`respawn-pane -k`), after the style
    /// and layout of a pane made by [`PaneBackend::create_styled_pane`], in one tmux call. If a
    /// step fails, tmux stops there, so the start (last) has started nothing: each then runs
    /// on its own, the layout's steps allowed to fail as they always were, the style's not.
    fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError> {
        let start = ["respawn-pane", "-k", "-t", pane, command];
        let setup = self
            .setups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(pane);
        let Some(setup) = setup else {
            return self.server.run(&start).map(|_| ());
        };
        let style = style_commands(pane, &setup.name, setup.color);
        let owned: Vec<Vec<&str>> = style
            .iter()
            .chain(setup.after.iter())
            .map(|c| words(c))
            .chain(std::iter::once(start.to_vec()))
            .collect();
        let all: Vec<&[&str]> = owned.iter().map(Vec::as_slice).collect();
        if self.server.run_sequence(&all).is_ok() {
            return Ok(());
        }
        for command in &setup.after {
            let _ = self.server.run(&words(command));
        }
        self.style(pane, &setup.name, setup.color)?;
        self.server.run(&start).map(|_| ())
    }

    /// Border and title in the teammate's color and name (the name also in [`NAME_OPTION`],
    /// which the border shows), in one tmux call.
    fn style(&self, pane: &str, name: &str, color: Option<Color>) -> Result<(), BackendError> {
        let commands = style_commands(pane, name, color);
        let all: Vec<Vec<&str>> = commands.iter().map(|c| words(c)).collect();
        let all: Vec<&[&str]> = all.iter().map(Vec::as_slice).collect();
        self.server.run_sequence(&all).map(|_| ())
    }

    /// Kills a pane.
    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        self.panes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != pane);
        self.setups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(pane);
        self.server.run(&["kill-pane", "-t", pane]).map(|_| ())
    }

    /// Moves a pane to the hidden session. The session is created with a placeholder pane that
    /// is killed once the pane is in, so the session holds only hidden panes and tmux removes it
    /// when the last one is shown or killed (nothing is left on the user's server).
    fn hide(&self, pane: &str) -> Result<(), BackendError> {
        let placeholder = if self
            .server
            .run(&["has-session", "-t", HIDDEN_SESSION])
            .is_err()
        {
            Some(self.server.run(&[
                "new-session",
                "-d",
                "-s",
                HIDDEN_SESSION,
                "-P",
                "-F",
                "#{pane_id}",
                "--",
                "cat",
            ])?)
        } else {
            None
        };
        let target = format!("{HIDDEN_SESSION}:");
        let moved = self
            .server
            .run(&["break-pane", "-d", "-s", pane, "-t", &target])
            .map(|_| ());
        if let Some(placeholder) = placeholder {
            let _ = self.server.run(&["kill-pane", "-t", &placeholder]);
        }
        moved
    }

    /// Brings a hidden pane back next to the others. On a private server whose swarm window
    /// went away (every visible pane was hidden or closed) the window is made again.
    fn show(&self, pane: &str) -> Result<(), BackendError> {
        let mut placeholder = None;
        let (window, layout) = match &self.layout {
            TmuxLayout::Inside { lead_pane } => (self.window_of(lead_pane)?, "main-vertical"),
            TmuxLayout::Private => {
                if !self.swarm_exists() {
                    placeholder = Some(self.new_swarm()?);
                }
                (format!("{SWARM_SESSION}:teammates"), "tiled")
            }
        };
        let joined = self
            .server
            .run(&["join-pane", "-d", "-h", "-s", pane, "-t", &window]);
        if let Some(placeholder) = placeholder {
            let _ = self.server.run(&["kill-pane", "-t", &placeholder]);
        }
        joined?;
        let _ = self.server.run(&["select-layout", "-t", &window, layout]);
        if let TmuxLayout::Inside { lead_pane } = &self.layout {
            self.resize_lead(lead_pane, &window);
        }
        Ok(())
    }

    /// Selects a pane (inside tmux this moves the user's focus there).
    fn focus(&self, pane: &str) -> Result<(), BackendError> {
        if let Ok(w) = self.window_of(pane) {
            let _ = self.server.run(&["select-window", "-t", &w]);
        }
        self.server.run(&["select-pane", "-t", pane]).map(|_| ())
    }

    /// True when the pane still exists.
    fn pane_alive(&self, pane: &str) -> bool {
        self.server.pane_ids().iter().any(|p| p == pane)
    }

    /// True while the pane exists and its program runs. With `remain-on-exit failed` tmux may
    /// keep the pane of a program that exited 0, dead, when the pty closed before it collected
    /// the exit status (seen with tmux 3.3a).
    fn pane_running(&self, pane: &str) -> bool {
        self.server
            .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_dead}"])
            .is_ok_and(|out| out.lines().any(|l| l == format!("{pane} 0")))
    }

    fn send_key(&self, pane: &str, key: PaneKey) -> Result<(), BackendError> {
        let name = match key {
            PaneKey::BackTab => "BTab",
            PaneKey::Escape => "Escape",
        };
        self.server
            .run(&["send-keys", "-t", pane, name])
            .map(|_| ())
    }

    /// The state of each of `panes`, from one `list-panes -a`. When tmux does not answer, the
    /// panes are gone if the server is (a private server that died), else unknown (running).
    /// tmux marks a pane dead when its pty closes and learns the exit status when it reaps the
    /// program, a moment later: a dead pane without a status is asked about again (up to 3 times
    /// over ~150 ms; this runs on the blocking pool), and a program tmux has not reaped yet is
    /// read from its zombie ([`zombie_status`]).
    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        let unsettled = |states: &[PaneState]| {
            states.iter().any(|s| {
                matches!(
                    s,
                    PaneState::Dead {
                        status: None,
                        signal: None
                    }
                )
            })
        };
        let mut states = self.pane_states_once(panes);
        for _ in 0..3 {
            if !unsettled(&states) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            states = self.pane_states_once(panes);
        }
        states
    }

    /// The last `lines` non-empty lines of the pane's screen and history.
    fn tail(&self, pane: &str, lines: usize) -> Vec<String> {
        let Ok(text) = self
            .server
            .run(&["capture-pane", "-p", "-J", "-t", pane, "-S", "-50"])
        else {
            return Vec::new();
        };
        let kept: Vec<String> = text
            .lines()
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        kept[kept.len().saturating_sub(lines)..].to_vec()
    }

    /// The teammate's name the pane was styled with ([`NAME_OPTION`]), else the pane's
    /// title (which the program in it may change: Claude Code does).
    fn title(&self, pane: &str) -> Option<String> {
        let format = format!("#{{?{opt},#{{{opt}}},#{{pane_title}}}}", opt = NAME_OPTION);
        self.server
            .run(&["display-message", "-p", "-t", pane, &format])
            .ok()
    }

    /// The pid of the pane's program (`#{pane_pid}`), while the pane exists.
    fn pane_pid(&self, pane: &str) -> Option<u32> {
        let listing = self
            .server
            .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"])
            .ok()?;
        listing.lines().find_map(|l| {
            let (id, pid) = l.split_once(' ')?;
            (id == pane).then(|| pid.trim().parse().ok()).flatten()
        })
    }

    /// Counts a pane a previous lead created as one of this session's.
    fn adopt_pane(&self, pane: &str) {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        if !panes.iter().any(|p| p == pane) {
            panes.push(pane.to_string());
        }
    }

    /// Takes over the private server `record` (the socket name of the previous lead of the
    /// team): its socket file is renamed to this session's, so the panes, the attach hint and
    /// the clean-up at quit are this session's from now on. False when there is nothing to
    /// take over (inside the user's tmux, the same socket, or no server answers there).
    fn take_over(&self, record: &str) -> Result<bool, BackendError> {
        let Some(ours) = self.server.socket.clone() else {
            return Ok(false);
        };
        if record == ours || !record.starts_with("teamlead-") || record.contains('/') {
            return Ok(false);
        }
        let old = TmuxServer {
            socket: Some(record.to_string()),
        };
        let (Some(from), Some(to)) = (old.socket_path(), self.server.socket_path()) else {
            return Ok(false);
        };
        if !from.exists() || !old.is_running() {
            return Ok(false);
        }
        if self.server.is_running() {
            return Err(BackendError::Unavailable(format!(
                "cannot take over tmux -L {record}: this session's server -L {ours} already runs"
            )));
        }
        std::fs::rename(&from, &to).map_err(|e| BackendError::Command {
            command: format!("rename {} to {}", from.display(), to.display()),
            detail: e.to_string(),
        })?;
        Ok(self.server.is_running())
    }

    fn session_record(&self) -> Option<String> {
        self.server.socket.clone()
    }

    fn attach(&self) -> Option<(Vec<String>, String)> {
        let socket = self.server.socket.clone()?;
        let hint = self.attach_hint()?;
        let argv = ["tmux", "-L", &socket, "attach", "-t", SWARM_SESSION]
            .map(str::to_string)
            .to_vec();
        Some((argv, hint))
    }

    fn shutdown(&self) {
        if self.server.socket.is_some() {
            let _ = self.server.kill_server();
        }
    }
}

impl TmuxBackend {
    /// Splits a new `cat` pane beside the lead: the lead's own pane when no teammate pane is
    /// beside it, else the last of `visible` (the teammate panes in the lead's window),
    /// alternating the direction.
    fn split_beside_lead(
        &self,
        lead_pane: &str,
        visible: &[String],
        placeholder: &str,
    ) -> Result<String, BackendError> {
        match visible.last() {
            None => self.server.run(&[
                "split-window",
                "-d",
                "-t",
                lead_pane,
                "-h",
                "-l",
                "70%",
                "-P",
                "-F",
                "#{pane_id}",
                "--",
                placeholder,
            ]),
            Some(last) => {
                let dir = if visible.len() % 2 == 1 { "-v" } else { "-h" };
                self.server.run(&[
                    "split-window",
                    "-d",
                    "-t",
                    last,
                    dir,
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "--",
                    placeholder,
                ])
            }
        }
    }
}
