//! The tmux terminal (PROTOCOL.md 6): inside tmux it splits the lead's pane (lead 30 %,
//! teammates 70 %, main-vertical); outside tmux it runs a private server per lead session with a
//! tiled window. Panes start `cat` as a placeholder and the teammate command is started with
//! `respawn-pane -k`; pane creation is serialized. The server and the backend's layout are
//! here; its `impl PaneBackend` (making, styling, hiding and reading panes, taking over a
//! previous session's private server) in [`panes`], reading `list-panes` in [`state`];
//! detection and what a dead lead left (its private server, panes of teammates whose team is
//! gone, recognised by their start command in [`teammate_panes`]) in [`terminal`].

mod panes;
mod state;
pub mod teammate_panes;
mod terminal;

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use super::cli;
use crate::backend::BackendError;
pub use terminal::Tmux;

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

/// The tmux clients run so far, by private server ([`TmuxServer::clients_run`]).
static CLIENTS_RUN: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

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

    /// Runs `tmux [-L socket] <args>` (through the terminal runner, with its time limit) and
    /// returns its trimmed stdout.
    pub fn run(&self, args: &[&str]) -> Result<String, BackendError> {
        self.run_sequence(&[args])
    }

    /// Several commands in one tmux client (one process, one round trip to the server), in
    /// order; tmux stops at the first that fails, and the call fails. Each command's words are
    /// passed as they are: a word that ends in `;` (which tmux would take for the end of a
    /// command) is escaped.
    pub fn run_sequence(&self, commands: &[&[&str]]) -> Result<String, BackendError> {
        let mut all: Vec<String> = Vec::new();
        if let Some(s) = &self.socket {
            all.extend(["-L", s, "-f", "/dev/null"].map(str::to_string));
        }
        for (i, command) in commands.iter().enumerate() {
            if i > 0 {
                all.push(";".to_string());
            }
            all.extend(command.iter().map(|word| literal_word(word)));
        }
        if let Some(socket) = &self.socket {
            *CLIENTS_RUN
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(socket.clone())
                .or_default() += 1;
        }
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        cli::run("tmux", &all, None).map(|out| out.trim().to_string())
    }

    /// How many tmux clients this process has run against the private server `socket` (each
    /// a process start and a round trip: what a pane spawn's time is mostly made of).
    pub fn clients_run(socket: &str) -> usize {
        CLIENTS_RUN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(socket)
            .copied()
            .unwrap_or(0)
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

/// `word` as tmux reads it back from its command line: a word ending in `;` ends a command
/// there unless the `;` is escaped (`\;`, which tmux turns back into `;`).
fn literal_word(word: &str) -> String {
    match word.strip_suffix(';') {
        Some(rest) => format!("{rest}\\;"),
        None => word.to_string(),
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
    /// What a styled pane still needs, sent with its start ([`PaneBackend::run_command`]).
    setups: Mutex<HashMap<String, panes::PaneSetup>>,
}

impl TmuxBackend {
    /// A backend on `server` with `layout`.
    pub fn new(server: TmuxServer, layout: TmuxLayout) -> TmuxBackend {
        TmuxBackend {
            server,
            layout,
            panes: Mutex::new(Vec::new()),
            setups: Mutex::new(HashMap::new()),
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
            setups: Mutex::new(HashMap::new()),
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
            setups: Mutex::new(HashMap::new()),
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
