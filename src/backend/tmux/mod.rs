//! The tmux pane backend (PROTOCOL.md 6): inside tmux it splits the lead's pane (lead 30 %,
//! teammates 70 %, main-vertical); outside tmux it runs a private server per lead session with a
//! tiled window. Panes start `cat` as a placeholder and the teammate command is started with
//! `respawn-pane -k`; pane creation is serialized. What a pane's state is, what it shows, and
//! taking over a previous session's private server are in [`state`]; recognising teammate
//! panes by their start command in [`teammate_panes`].

mod state;
pub mod teammate_panes;

use std::process::Command;
use std::sync::Mutex;

use super::BackendError;
use crate::protocol::Color;

/// Name of the session panes are moved to while hidden.
pub const HIDDEN_SESSION: &str = "teamlead-hidden";
/// The pane option holding a teammate's name (its border shows it).
pub const NAME_OPTION: &str = "@teamlead-name";
/// Name of the session (and window) of a private server.
pub const SWARM_SESSION: &str = "teamlead-swarm";

/// The width the lead's pane keeps beside its teammates when the window allows: a `Spawned …`
/// line fits on one row.
pub const LEAD_MIN_COLUMNS: u16 = 80;
/// What the teammates' side keeps at least when the lead takes [`LEAD_MIN_COLUMNS`].
pub const TEAMMATES_MIN_COLUMNS: u16 = 40;

/// The lead's pane width in a window `window` columns wide: 30 %, or more to reach
/// [`LEAD_MIN_COLUMNS`] while the teammates keep [`TEAMMATES_MIN_COLUMNS`] (and the border).
pub fn lead_columns(window: u16) -> u16 {
    let share = window.saturating_mul(3) / 10;
    let room = window.saturating_sub(TEAMMATES_MIN_COLUMNS + 1);
    share.max(LEAD_MIN_COLUMNS.min(room)).max(1)
}

/// One tmux server: the user's (no socket) or a private one (`-L <socket>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxServer {
    pub socket: Option<String>,
}

impl TmuxServer {
    /// The socket name of the private server of the lead with this pid.
    pub fn private_socket_name(lead_pid: u32) -> String {
        format!("teamlead-{lead_pid}")
    }

    /// Runs `tmux [-L socket] <args>` and returns its trimmed stdout.
    pub fn run(&self, args: &[&str]) -> Result<String, BackendError> {
        let mut cmd = Command::new("tmux");
        if let Some(s) = &self.socket {
            cmd.args(["-L", s, "-f", "/dev/null"]);
        }
        cmd.args(args);
        let out = cmd.output().map_err(|e| BackendError::Spawn {
            program: "tmux".into(),
            detail: e.to_string(),
        })?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(BackendError::Command {
                command: format!("tmux {}", args.join(" ")),
                detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// True when the server answers.
    pub fn is_running(&self) -> bool {
        self.run(&["list-sessions"]).is_ok()
    }

    /// Every pane id of the server, hidden ones included.
    pub fn pane_ids(&self) -> Vec<String> {
        self.run(&["list-panes", "-a", "-F", "#{pane_id}"])
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// May the user's tmux server (the one of `$TMUX`, else the default socket) be running?
    /// Only then is it asked anything: a `tmux` client started without a server makes its
    /// socket directory, and a read-only command must not write.
    pub fn user_server_may_run() -> bool {
        if std::env::var_os("TMUX").is_some_and(|v| !v.is_empty()) {
            return true;
        }
        use std::os::unix::fs::FileTypeExt;
        std::fs::symlink_metadata(TmuxServer::socket_dir().join("default"))
            .is_ok_and(|m| m.file_type().is_socket())
    }

    /// The directory of this user's tmux sockets (`$TMUX_TMPDIR` or `/tmp`, then `tmux-<uid>`).
    pub fn socket_dir() -> std::path::PathBuf {
        let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".to_string());
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        std::path::Path::new(&dir).join(format!("tmux-{uid}"))
    }

    /// The socket file of a private server.
    pub fn socket_path(&self) -> Option<std::path::PathBuf> {
        let name = self.socket.as_ref()?;
        Some(TmuxServer::socket_dir().join(name))
    }

    /// Kills the whole server (private servers only) and removes its socket file, which tmux
    /// leaves behind.
    pub fn kill_server(&self) -> Result<(), BackendError> {
        let result = self.run(&["kill-server"]).map(|_| ());
        if let Some(path) = self.socket_path() {
            let _ = std::fs::remove_file(path);
        }
        result
    }
}

/// Where teammate panes go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TmuxLayout {
    /// The lead runs inside tmux in this pane.
    Inside { lead_pane: String },
    /// A private server with one tiled window.
    Private,
}

/// The tmux backend of one lead session.
#[derive(Debug)]
pub struct TmuxBackend {
    pub server: TmuxServer,
    pub layout: TmuxLayout,
    /// Teammate panes created so far, in order (serializes creation too).
    panes: Mutex<Vec<String>>,
}

impl TmuxBackend {
    /// A backend on `server` with `layout`.
    pub fn new(server: TmuxServer, layout: TmuxLayout) -> TmuxBackend {
        TmuxBackend {
            server,
            layout,
            panes: Mutex::new(Vec::new()),
        }
    }

    /// Inside the user's tmux, splitting `lead_pane`.
    pub fn inside(lead_pane: &str) -> TmuxBackend {
        TmuxBackend {
            server: TmuxServer { socket: None },
            layout: TmuxLayout::Inside {
                lead_pane: lead_pane.to_string(),
            },
            panes: Mutex::new(Vec::new()),
        }
    }

    /// A private server named `socket`.
    pub fn private(socket: &str) -> TmuxBackend {
        TmuxBackend {
            server: TmuxServer {
                socket: Some(socket.to_string()),
            },
            layout: TmuxLayout::Private,
            panes: Mutex::new(Vec::new()),
        }
    }

    /// The command a user types to see the private server.
    pub fn attach_hint(&self) -> Option<String> {
        self.server
            .socket
            .as_ref()
            .map(|s| format!("tmux -L {s} attach -t {SWARM_SESSION}"))
    }

    /// The window that holds the teammates (target for layouts and join-pane).
    fn window_of(&self, pane: &str) -> Result<String, BackendError> {
        self.server.run(&[
            "display-message",
            "-p",
            "-t",
            pane,
            "#{session_name}:#{window_index}",
        ])
    }

    /// Pane ids of one window (empty when it does not exist).
    fn panes_of_window(&self, window: &str) -> Vec<String> {
        self.server
            .run(&["list-panes", "-t", window, "-F", "#{pane_id}"])
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// Does the private server have its swarm session (it may run with only hidden panes)?
    fn swarm_exists(&self) -> bool {
        self.server
            .run(&["has-session", "-t", SWARM_SESSION])
            .is_ok()
    }

    /// Creates the swarm session (and the server when needed) with a pane running `cat`.
    fn new_swarm(&self) -> Result<String, BackendError> {
        let id = self.server.run(&[
            "new-session",
            "-d",
            "-s",
            SWARM_SESSION,
            "-n",
            "teammates",
            "-x",
            "200",
            "-y",
            "50",
            "-P",
            "-F",
            "#{pane_id}",
            "--",
            "cat",
        ])?;
        let _ = self.server.run(&[
            "set-option",
            "-w",
            "-t",
            &format!("{SWARM_SESSION}:teammates"),
            "pane-border-status",
            "top",
        ]);
        Ok(id)
    }

    /// Gives the lead's pane its width in `window` ([`lead_columns`]).
    fn resize_lead(&self, lead_pane: &str, window: &str) {
        let width = self
            .server
            .run(&["display-message", "-p", "-t", window, "#{window_width}"])
            .ok()
            .and_then(|w| w.trim().parse::<u16>().ok());
        let columns = match width {
            Some(w) => lead_columns(w).to_string(),
            None => "30%".to_string(),
        };
        let _ = self
            .server
            .run(&["resize-pane", "-t", lead_pane, "-x", &columns]);
    }

    /// Creates a pane running `cat` and returns its id. Serialized: one at a time.
    pub fn create_pane(&self) -> Result<String, BackendError> {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        // Panes that closed by themselves (a teammate that shut down) are forgotten.
        let alive = self.server.pane_ids();
        panes.retain(|p| alive.contains(p));
        let id = match &self.layout {
            TmuxLayout::Inside { lead_pane } => {
                let window = self.window_of(lead_pane)?;
                // Only a teammate pane beside the lead is split (a hidden one is elsewhere).
                let beside_lead = self.panes_of_window(&window);
                let visible: Vec<&String> =
                    panes.iter().filter(|p| beside_lead.contains(p)).collect();
                let id = match visible.last() {
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
                        "cat",
                    ])?,
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
                            "cat",
                        ])?
                    }
                };
                let _ = self
                    .server
                    .run(&["select-layout", "-t", &window, "main-vertical"]);
                self.resize_lead(lead_pane, &window);
                let _ = self.server.run(&[
                    "set-option",
                    "-w",
                    "-t",
                    &window,
                    "pane-border-status",
                    "top",
                ]);
                id
            }
            TmuxLayout::Private => {
                if !self.swarm_exists() {
                    self.new_swarm()?
                } else {
                    let target = format!("{SWARM_SESSION}:teammates");
                    let id = self.server.run(&[
                        "split-window",
                        "-d",
                        "-t",
                        &target,
                        "-P",
                        "-F",
                        "#{pane_id}",
                        "--",
                        "cat",
                    ])?;
                    let _ = self.server.run(&["select-layout", "-t", &target, "tiled"]);
                    id
                }
            }
        };
        let _ = self
            .server
            .run(&["set-option", "-p", "-t", &id, "remain-on-exit", "failed"]);
        panes.push(id.clone());
        Ok(id)
    }

    /// Starts the teammate's command in a placeholder pane (`respawn-pane -k`).
    pub fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError> {
        self.server
            .run(&["respawn-pane", "-k", "-t", pane, command])
            .map(|_| ())
    }

    /// Border and title in the teammate's color and name (the name also in [`NAME_OPTION`],
    /// which the border shows).
    pub fn style(&self, pane: &str, name: &str, color: Option<Color>) -> Result<(), BackendError> {
        let fg = color.map(Color::tmux_name).unwrap_or("default");
        let border = format!("fg={fg}");
        self.server
            .run(&["set-option", "-p", "-t", pane, "pane-border-style", &border])?;
        self.server.run(&[
            "set-option",
            "-p",
            "-t",
            pane,
            "pane-active-border-style",
            &border,
        ])?;
        self.server.run(&["select-pane", "-t", pane, "-T", name])?;
        // The border shows a pane option of ours, not `#{pane_title}`: Claude Code retitles its
        // pane (`✳ general-purpose`), so every claude teammate's border read the same.
        self.server
            .run(&["set-option", "-p", "-t", pane, NAME_OPTION, name])?;
        let format = format!("#[fg={fg},bold] #{{{NAME_OPTION}}} #[default]");
        self.server.run(&[
            "set-option",
            "-p",
            "-t",
            pane,
            "pane-border-format",
            &format,
        ])?;
        Ok(())
    }

    /// Kills a pane.
    pub fn kill(&self, pane: &str) -> Result<(), BackendError> {
        self.panes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != pane);
        self.server.run(&["kill-pane", "-t", pane]).map(|_| ())
    }

    /// Moves a pane to the hidden session. The session is created with a placeholder pane that
    /// is killed once the pane is in, so the session holds only hidden panes and tmux removes it
    /// when the last one is shown or killed (nothing is left on the user's server).
    pub fn hide(&self, pane: &str) -> Result<(), BackendError> {
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
    pub fn show(&self, pane: &str) -> Result<(), BackendError> {
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
    pub fn focus(&self, pane: &str) -> Result<(), BackendError> {
        if let Ok(w) = self.window_of(pane) {
            let _ = self.server.run(&["select-window", "-t", &w]);
        }
        self.server.run(&["select-pane", "-t", pane]).map(|_| ())
    }

    /// True when the pane still exists.
    pub fn pane_alive(&self, pane: &str) -> bool {
        self.server.pane_ids().iter().any(|p| p == pane)
    }

    /// True while the pane exists and its program runs. With `remain-on-exit failed` tmux may
    /// keep the pane of a program that exited 0, dead, when the pty closed before it collected
    /// the exit status (seen with tmux 3.3a).
    pub fn pane_running(&self, pane: &str) -> bool {
        self.server
            .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_dead}"])
            .is_ok_and(|out| out.lines().any(|l| l == format!("{pane} 0")))
    }
}

#[cfg(test)]
mod lead_width_tests {
    use super::*;

    #[test]
    fn the_lead_keeps_80_columns_when_the_window_allows() {
        assert_eq!(lead_columns(200), 80);
        assert_eq!(lead_columns(400), 120);
        assert_eq!(lead_columns(120), 79);
        assert_eq!(lead_columns(100), 59);
        assert_eq!(lead_columns(40), 12);
    }
}
