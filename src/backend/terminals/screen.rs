//! GNU screen as a terminal: teammates are windows of a private detached session
//! `teamlead-<lead pid>` (`screen -dmS`), made when screen is asked for by name (`--backend
//! screen`); `auto` never takes it, and a lead inside screen gets a private session too (a
//! window made in the user's own session would take that display's focus). The session starts
//! with the other terminals' variables removed from its environment, so a teammate in one of
//! its windows finds its own pane (`WINDOW`), not the lead's. Commands go to the session with
//! `screen -S NAME -X` (their words pass screen's own parser: `\` and `$` are escaped) and
//! questions with `-Q`, whose answer also says that every command before it was done. A new
//! window runs the placeholder until the command line is pasted into it (`readbuf` of a private
//! file, then `paste`: byte for byte, no escape of screen's); it is titled with its teammate's
//! name (`title`: screen has no per-window colors). A window closes with its program, so it is
//! running while `windows` lists it; the session ends with its last window. Its last lines come
//! from `hardcopy -h`. Windows cannot be hidden: they are all in the background; a jump selects
//! the window and attaches the user's terminal (`screen -x NAME`, detached with `ctrl+a d`). What
//! dead leads left: their private sessions, listed (`screen -ls`) only when screen's socket
//! directory exists (listing makes it).

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::cli::{self, PLACEHOLDER};
use super::{About, Leftover, PaneChoice, Probe, TERMINALS, Terminal};
use crate::backend::detect::CapturedEnv;
use crate::backend::orphans::{of_dead_lead, pid_alive};
use crate::backend::{BackendError, BackendKind, PaneBackend, PaneKey, PaneState};
use crate::protocol::Color;
use crate::store::Home;

/// The GNU screen terminal.
pub struct Screen;

static ABOUT: About = About {
    kind: BackendKind::Screen,
    help: "GNU screen windows in a private detached session (`screen -x` shows them)",
    inside: None,
    auto_elsewhere: None,
    unusable: "is not installed",
    variables: &["STY", "WINDOW"],
};

impl Terminal for Screen {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn inside(&self, _env: &CapturedEnv, _probe: Probe<'_>) -> Option<PaneChoice> {
        None
    }

    fn elsewhere(&self, env: &CapturedEnv, asked: bool) -> Option<PaneChoice> {
        let screen = env.which("screen").filter(|_| asked)?;
        Some(PaneChoice::private(BackendKind::Screen, &screen))
    }

    fn open(&self, choice: &PaneChoice) -> Arc<dyn PaneBackend> {
        Arc::new(ScreenBackend::private(
            &choice.program,
            &private_session_name(std::process::id()),
        ))
    }

    fn own_pane(&self, env: &CapturedEnv) -> Option<String> {
        env.get("STY")?;
        env.var("WINDOW")
    }

    fn leftovers(&self, _home: &Home) -> Vec<Leftover> {
        let Some(program) = screen_program().filter(|_| socket_dir_exists()) else {
            return Vec::new();
        };
        let mut found: Vec<String> = list_sessions(&program)
            .into_iter()
            .filter(|s| of_dead_lead(s))
            .collect();
        found.sort();
        found.dedup();
        found
            .into_iter()
            .map(|name| Leftover::Private {
                kind: BackendKind::Screen,
                name,
            })
            .collect()
    }

    fn remove_leftover(&self, _home: &Home, leftover: &Leftover) -> Result<(), String> {
        let Leftover::Private { name, .. } = leftover else {
            return Err("screen leaves no such thing".to_string());
        };
        if !of_dead_lead(name) {
            return Err("its lead is running again".to_string());
        }
        let program = screen_program().ok_or("screen is no longer on PATH")?;
        ScreenBackend::private(&program, name).shutdown();
        Ok(())
    }

    fn end_private(&self, _home: &Home, _team: &str, lead_pid: u32) {
        let session = private_session_name(lead_pid);
        if let Some(program) = screen_program().filter(|_| socket_dir_exists())
            && !pid_alive(lead_pid)
            && list_sessions(&program).contains(&session)
        {
            ScreenBackend::private(&program, &session).shutdown();
        }
    }
}

/// The private session name of the lead with this pid.
pub fn private_session_name(lead_pid: u32) -> String {
    format!("teamlead-{lead_pid}")
}

/// The `screen` on PATH, if any.
fn screen_program() -> Option<String> {
    CapturedEnv::from_process().which("screen")
}

/// A word for screen's command parser (what `-X` and `-Q` are given goes through it, as a line
/// of `.screenrc` would): backslashes and `$` escaped, so nothing is expanded.
fn escaped(word: &str) -> String {
    word.replace('\\', "\\\\").replace('$', "\\$")
}

/// Session names of `screen -ls` (`<pid>.<name>` lines).
pub fn list_sessions(program: &str) -> Vec<String> {
    // It exits 1 when there is no session at all.
    let out = cli::run(program, &["-ls"], None).unwrap_or_default();
    out.lines()
        .filter(|l| l.starts_with('\t'))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|id| id.split_once('.').map(|(_, name)| name.to_string()))
        .collect()
}

/// Whether one of screen's socket directories of this user exists (`$SCREENDIR`, else
/// `/run/screen/S-<user>`, `/var/run/screen/S-<user>` or `~/.screen`): without one there is no
/// session, and `screen -ls` would make it.
fn socket_dir_exists() -> bool {
    use std::os::unix::fs::MetadataExt;
    if let Some(dir) = std::env::var_os("SCREENDIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).is_dir();
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let mine = |p: &std::path::Path| p.metadata().is_ok_and(|m| m.is_dir() && m.uid() == uid);
    let shared = ["/run/screen", "/var/run/screen"].iter().any(|root| {
        std::fs::read_dir(root).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("S-") && mine(&e.path()))
        })
    });
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".screen"));
    shared || home.is_some_and(|h| mine(&h))
}

/// How long a new session, or a new window, may take to be listed.
const LISTED_WAIT: Duration = Duration::from_secs(10);

/// The screen backend of one lead session.
#[derive(Debug)]
pub struct ScreenBackend {
    /// The `screen` program (a name on PATH or a path).
    program: String,
    /// The session the windows live in (renamed when a resumed lead takes it over).
    session: Mutex<String>,
    /// Teammate windows, oldest first; creation is serialized by this lock.
    windows: Mutex<Vec<String>>,
    /// Serializes pastes: the paste buffer is the session's one register.
    pasting: Mutex<()>,
}

impl ScreenBackend {
    /// A private detached session named `session` (made with the first window).
    pub fn private(program: &str, session: &str) -> ScreenBackend {
        ScreenBackend {
            program: program.to_string(),
            session: Mutex::new(session.to_string()),
            windows: Mutex::new(Vec::new()),
            pasting: Mutex::new(()),
        }
    }

    /// The session's name now.
    pub fn session(&self) -> String {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn windows_mut(&self) -> MutexGuard<'_, Vec<String>> {
        self.windows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `screen -S SESSION [-p WINDOW] <-X|-Q> words…`, the words escaped for screen's parser.
    fn call(
        &self,
        mode: &str,
        window: Option<&str>,
        words: &[&str],
    ) -> Result<String, BackendError> {
        let session = self.session();
        let mut args = vec!["-S".to_string(), session];
        if let Some(w) = window {
            args.extend(["-p".to_string(), w.to_string()]);
        }
        args.push(mode.to_string());
        args.extend(words.iter().map(|w| escaped(w)));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        cli::run(&self.program, &argv, None)
    }

    /// Sends a command (`-X`).
    fn command(&self, window: Option<&str>, words: &[&str]) -> Result<(), BackendError> {
        self.call("-X", window, words).map(|_| ())
    }

    /// Asks a question (`-Q`): its answer also means every command sent before was done.
    fn query(&self, window: Option<&str>, words: &[&str]) -> Result<String, BackendError> {
        self.call("-Q", window, words)
    }

    /// The numbers of the session's windows: `Some(empty)` when there is no such session,
    /// `None` when it does not answer.
    pub fn listed(&self) -> Option<Vec<String>> {
        match self.query(None, &["windows", "%n "]) {
            Ok(out) => Some(out.split_whitespace().map(str::to_string).collect()),
            Err(BackendError::Command { detail, .. })
                if detail.contains("No screen session found") =>
            {
                Some(Vec::new())
            }
            Err(_) => None,
        }
    }

    /// Does the session run?
    fn running(&self) -> bool {
        self.listed().is_some_and(|l| !l.is_empty())
    }

    /// Starts the session with one window running the placeholder, titled `title`; screen's
    /// own variables and every other terminal's are left out of its environment.
    fn start_session(&self, title: &str) -> Result<(), BackendError> {
        let mut argv: Vec<String> = Vec::new();
        for t in TERMINALS {
            for v in t.about().variables {
                argv.extend(["-u".to_string(), v.to_string()]);
            }
        }
        argv.extend([
            self.program.clone(),
            "-dmS".into(),
            self.session(),
            "-t".into(),
            title.to_string(),
        ]);
        argv.extend(PLACEHOLDER.iter().map(|s| s.to_string()));
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        cli::run("env", &argv, None).map(|_| ())
    }

    /// The window that is listed now and was not in `before`, waiting for it.
    fn new_window_since(&self, before: &[String]) -> Option<String> {
        let deadline = Instant::now() + LISTED_WAIT;
        loop {
            let fresh = self
                .listed()
                .unwrap_or_default()
                .into_iter()
                .find(|w| !before.contains(w));
            if fresh.is_some() || Instant::now() >= deadline {
                return fresh;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Pastes `text` into `window` as typed, byte for byte.
    fn paste(&self, window: &str, text: &str) -> Result<(), BackendError> {
        let _one = self.pasting.lock().unwrap_or_else(|e| e.into_inner());
        let failed = |e: std::io::Error| BackendError::Unavailable(format!("a paste file: {e}"));
        let mut file = tempfile::NamedTempFile::new().map_err(failed)?;
        file.write_all(text.as_bytes()).map_err(failed)?;
        let path = file.path().to_string_lossy().into_owned();
        self.command(None, &["readbuf", &path])?;
        self.command(Some(window), &["paste", "."])?;
        // Done once screen answers (only then may the file go); a window whose program ended
        // with what was pasted (`exit`), or a session that ended with it, answers no more.
        let _ = self.query(None, &["windows", "%n "]);
        Ok(())
    }

    /// The windows created so far (for tests).
    pub fn windows(&self) -> Vec<String> {
        self.windows_mut().clone()
    }
}

impl PaneBackend for ScreenBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Screen
    }

    /// Opens a window running the placeholder (starting the session with it when there is
    /// none) and returns its number.
    fn create_pane(&self) -> Result<String, BackendError> {
        let mut windows = self.windows_mut();
        let listed = self.listed().unwrap_or_default();
        windows.retain(|w| listed.contains(w));
        let title = "teamlead-new";
        if listed.is_empty() {
            self.start_session(title)?;
        } else {
            let mut words = vec!["screen", "-t", title];
            words.extend_from_slice(&PLACEHOLDER);
            self.command(None, &words)?;
        }
        let id = self
            .new_window_since(&listed)
            .ok_or_else(|| BackendError::Command {
                command: "screen -X screen".into(),
                detail: format!(
                    "no new window in session {} within {} s",
                    self.session(),
                    LISTED_WAIT.as_secs()
                ),
            })?;
        windows.push(id.clone());
        Ok(id)
    }

    fn run_command(&self, window: &str, command: &str) -> Result<(), BackendError> {
        self.paste(window, &cli::command_input(command))
    }

    fn style(&self, window: &str, name: &str, _color: Option<Color>) -> Result<(), BackendError> {
        // screen has no per-window colors; the teammate's header carries its color.
        self.command(Some(window), &["title", name])
    }

    fn kill(&self, window: &str) -> Result<(), BackendError> {
        self.windows_mut().retain(|w| w != window);
        self.command(Some(window), &["kill"])
    }

    fn hide(&self, _window: &str) -> Result<(), BackendError> {
        Err(BackendError::Unavailable(
            "screen windows cannot be hidden: they are all in the background session".into(),
        ))
    }

    fn show(&self, window: &str) -> Result<(), BackendError> {
        self.hide(window)
    }

    fn focus(&self, window: &str) -> Result<(), BackendError> {
        self.command(None, &["select", window])
    }

    fn send_key(&self, window: &str, key: PaneKey) -> Result<(), BackendError> {
        self.paste(window, key.bytes())
    }

    fn pane_alive(&self, window: &str) -> bool {
        self.listed().is_some_and(|l| l.iter().any(|w| w == window))
    }

    fn pane_states(&self, windows: &[String]) -> Vec<PaneState> {
        // A session that does not answer proves nothing: everything counts as running.
        let listed = self.listed();
        windows
            .iter()
            .map(|w| match &listed {
                Some(l) if !l.contains(w) => PaneState::Gone,
                _ => PaneState::Running,
            })
            .collect()
    }

    fn tail(&self, window: &str, lines: usize) -> Vec<String> {
        let Ok(file) = tempfile::NamedTempFile::new() else {
            return Vec::new();
        };
        let path = file.path().to_string_lossy().into_owned();
        let copied = self
            .command(Some(window), &["hardcopy", "-h", &path])
            .and_then(|_| self.query(Some(window), &["title"]));
        match copied {
            Ok(_) => {
                let text = std::fs::read(file.path()).unwrap_or_default();
                crate::backend::last_lines(&String::from_utf8_lossy(&text), lines)
            }
            Err(_) => Vec::new(),
        }
    }

    fn title(&self, window: &str) -> Option<String> {
        self.query(Some(window), &["title"])
            .ok()
            .map(|t| t.trim().to_string())
    }

    fn adopt_pane(&self, window: &str) {
        let mut windows = self.windows_mut();
        if !windows.iter().any(|w| w == window) {
            windows.push(window.to_string());
        }
    }

    /// Renames the previous lead's session (`sessionname`) to this session's.
    fn take_over(&self, record: &str) -> Result<bool, BackendError> {
        let ours = self.session();
        if record == ours || !record.starts_with("teamlead-") {
            return Ok(false);
        }
        let old = ScreenBackend::private(&self.program, record);
        if !old.running() {
            return Ok(false);
        }
        if self.running() {
            return Err(BackendError::Unavailable(format!(
                "cannot take over screen session {record}: this session's {ours} already runs"
            )));
        }
        old.command(None, &["sessionname", &ours])?;
        let deadline = Instant::now() + LISTED_WAIT;
        while !self.running() {
            if Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(true)
    }

    fn session_record(&self) -> Option<String> {
        Some(self.session())
    }

    fn attach(&self) -> Option<(Vec<String>, String)> {
        let session = self.session();
        let argv = vec![self.program.clone(), "-x".to_string(), session.clone()];
        Some((argv, format!("screen -x {session}")))
    }

    fn detach_keys(&self) -> &'static str {
        "ctrl+a d"
    }

    fn shutdown(&self) {
        let _ = self.command(None, &["quit"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_escaped_for_screens_parser() {
        assert_eq!(
            escaped(r#"exec sh -c "$line" \n"#),
            r#"exec sh -c "\$line" \\n"#
        );
        assert_eq!(private_session_name(42), "teamlead-42");
    }
}
