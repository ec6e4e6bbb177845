//! Notifications of a screen: when a permission request or a plan arrives (not those already
//! waiting when the screen attached) and this screen's window does not have the focus (the
//! terminal's focus reports; a terminal that never reports counts as unfocused: a person
//! looking at the window sees the dialog and gets no bell), the terminal bell, an OSC 9 and an
//! OSC 777 notification
//! (terminals that know them show a desktop notification; others ignore them), a tmux
//! `display-message` inside tmux, and `notify-send` where it is installed.
//! `TEAMLEAD_NOTIFY` chooses: a comma list of `bell`, `osc`, `tmux`, `desktop`, or `none`
//! (default: all of them).

use std::collections::HashSet;
use std::io::Write;

use tokio::sync::mpsc;

use crate::lead::contract::LeadEvent;
use crate::protocol::display::visible_line;
use crate::ui::focus::TerminalFocus;

/// Which notifications are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notify {
    pub bell: bool,
    pub osc: bool,
    pub tmux: bool,
    pub desktop: bool,
}

impl Notify {
    /// From `TEAMLEAD_NOTIFY` (unset: all on).
    pub fn from_env() -> Notify {
        Notify::parse(std::env::var("TEAMLEAD_NOTIFY").ok().as_deref())
    }

    pub fn parse(value: Option<&str>) -> Notify {
        let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Notify {
                bell: true,
                osc: true,
                tmux: true,
                desktop: true,
            };
        };
        let on: HashSet<&str> = value.split(',').map(str::trim).collect();
        Notify {
            bell: on.contains("bell"),
            osc: on.contains("osc"),
            tmux: on.contains("tmux"),
            desktop: on.contains("desktop"),
        }
    }

    fn any(&self) -> bool {
        self.bell || self.osc || self.tmux || self.desktop
    }
}

/// Tells requests that arrived apart from those already known (the first snapshot of each
/// queue is what waited at attach: no notification).
#[derive(Debug, Default)]
pub struct Arrivals {
    permissions: Option<HashSet<u64>>,
    plans: Option<HashSet<String>>,
}

impl Arrivals {
    /// The one-line text of each request `event` brings for the first time.
    pub fn arrived(&mut self, event: &LeadEvent) -> Vec<String> {
        match event {
            LeadEvent::Permissions(queue) => {
                let first = self.permissions.is_none();
                let known = self.permissions.get_or_insert_with(HashSet::new);
                let new: Vec<String> = queue
                    .iter()
                    .filter(|p| known.insert(p.key) && !first)
                    .map(|p| format!("{} asks to use {}", p.worker, p.tool_name))
                    .collect();
                known.retain(|k| queue.iter().any(|p| p.key == *k));
                new
            }
            LeadEvent::Plans(queue) => {
                let first = self.plans.is_none();
                let known = self.plans.get_or_insert_with(HashSet::new);
                let new: Vec<String> = queue
                    .iter()
                    .filter(|p| known.insert(p.request_id.clone()) && !first)
                    .map(|p| format!("{} has a plan for approval", p.from))
                    .collect();
                known.retain(|k| queue.iter().any(|p| &p.request_id == k));
                new
            }
            _ => Vec::new(),
        }
    }
}

/// The bytes a terminal gets for `text`.
pub fn terminal_bytes(notify: Notify, text: &str) -> Vec<u8> {
    // Inside an OSC, a control character would end it early.
    let text: String = visible_line(text)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let mut out = Vec::new();
    if notify.bell {
        out.push(0x07);
    }
    if notify.osc {
        out.extend(format!("\x1b]9;teamlead: {text}\x07").as_bytes());
        out.extend(format!("\x1b]777;notify;teamlead;{text}\x07").as_bytes());
    }
    out
}

/// Passes the events on to the screen and notifies on each new request while the screen's
/// window is not focused.
pub fn filter(
    mut events: mpsc::Receiver<LeadEvent>,
    notify: Notify,
    focus: TerminalFocus,
) -> mpsc::Receiver<LeadEvent> {
    if !notify.any() {
        return events;
    }
    let (tx, rx) = mpsc::channel(4096);
    let in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    tokio::spawn(async move {
        let mut arrivals = Arrivals::default();
        while let Some(event) = events.recv().await {
            for text in arrivals.arrived(&event) {
                if !focus.is_focused() {
                    tell(notify, in_tmux, &text);
                }
            }
            if tx.send(event).await.is_err() {
                break;
            }
        }
    });
    rx
}

fn tell(notify: Notify, in_tmux: bool, text: &str) {
    let bytes = terminal_bytes(notify, text);
    if !bytes.is_empty() {
        // Between two frames: the UI draws on this same thread, never while this runs.
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&bytes);
        let _ = out.flush();
    }
    let run = |program: &str, args: &[&str]| {
        let child = tokio::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = child {
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
    };
    let line = format!("teamlead: {}", visible_line(text));
    if notify.tmux && in_tmux {
        run("tmux", &["display-message", &line]);
    }
    let env = crate::backend::detect::CapturedEnv::from_process();
    if notify.desktop && env.which("notify-send").is_some() {
        run("notify-send", &["teamlead", &line]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::contract::{PendingPermission, PermissionSource};

    fn perm(key: u64) -> PendingPermission {
        PendingPermission {
            key,
            request_id: format!("r{key}"),
            worker: "alpha".into(),
            color: None,
            tool_name: "Bash".into(),
            description: String::new(),
            input: serde_json::Value::Null,
            suggestions: vec![],
            source: PermissionSource::Bridge,
            in_part: None,
            host: None,
        }
    }

    #[test]
    fn only_requests_that_arrive_after_attaching_notify() {
        let mut a = Arrivals::default();
        assert!(a.arrived(&LeadEvent::Permissions(vec![perm(1)])).is_empty());
        assert_eq!(
            a.arrived(&LeadEvent::Permissions(vec![perm(1), perm(2)])),
            ["alpha asks to use Bash"]
        );
        assert!(a.arrived(&LeadEvent::Permissions(vec![perm(2)])).is_empty());
    }

    #[test]
    fn settings_and_bytes() {
        let none = Notify::parse(Some("none"));
        assert!(!none.any());
        let bell = Notify::parse(Some("bell"));
        assert_eq!(terminal_bytes(bell, "x"), b"\x07");
        let osc = Notify::parse(Some("osc"));
        let bytes = String::from_utf8(terminal_bytes(osc, "a\x1b]b")).unwrap();
        assert_eq!(bytes.matches('\x1b').count(), 2, "{bytes:?}");
        assert!(bytes.starts_with("\x1b]9;teamlead: a"));
        assert!(Notify::parse(None).desktop);
    }
}
