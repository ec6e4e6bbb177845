//! What a pane teammate shows in its own pane: who it is (its name in its color), its mode, its
//! current task, "waiting for team lead approval" with the request, and its recent messages and
//! output. Plain ANSI text, redrawn in place on a terminal and appended line by line otherwise;
//! the teammate runtime never loads the lead's UI.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};

use crate::agent::events::{LogKind, StopReason, TeammateEventKind};
use crate::agent::runtime::TeammateConfig;
use crate::protocol::frames::IdleReason;
use crate::protocol::inbox::{clip, first_line};
use crate::protocol::{Color, PermissionMode};

/// Lines of recent activity kept on screen.
const RECENT: usize = 14;

/// The pane's state and its writer.
pub struct PaneDisplay {
    name: String,
    team: String,
    color: Option<Color>,
    mode: PermissionMode,
    status: String,
    task: Option<(String, String)>,
    waiting: Option<String>,
    recent: VecDeque<String>,
    out: Box<dyn Write + Send>,
    redraw: bool,
}

impl PaneDisplay {
    pub fn new(config: &TeammateConfig, out: Box<dyn Write + Send>) -> PaneDisplay {
        PaneDisplay {
            name: config.name.clone(),
            team: config.team.clone(),
            color: config.color.as_deref().and_then(Color::parse),
            mode: config.starting_mode(),
            status: "starting".into(),
            task: None,
            waiting: None,
            recent: VecDeque::new(),
            redraw: std::io::stdout().is_terminal(),
            out,
        }
    }

    /// Adds a line of activity.
    pub fn note(&mut self, line: impl Into<String>) {
        let line = line.into();
        if !self.redraw {
            let _ = writeln!(self.out, "{line}");
        }
        self.recent.push_back(line);
        while self.recent.len() > RECENT {
            self.recent.pop_front();
        }
    }

    /// Folds one event into the state.
    pub fn apply(&mut self, event: &TeammateEventKind) {
        match event {
            TeammateEventKind::Received {
                from,
                summary,
                text,
                ..
            } => {
                let body = summary.clone().unwrap_or_else(|| first_line(text));
                self.note(format!("← {from}: {}", clip(&body, 100)));
            }
            TeammateEventKind::Log { kind, text } => {
                let mark = match kind {
                    // Engines write the command line with its own mark (`$ cmd`, `Bash(cmd)`).
                    LogKind::Command => "",
                    LogKind::Output => "  ",
                    LogKind::Result => "→ ",
                    LogKind::Warning => "! ",
                    LogKind::Note => "· ",
                };
                self.note(format!("{mark}{}", clip(text, 160)));
            }
            TeammateEventKind::Working { task } => {
                self.status = "working".into();
                self.task = task.clone();
                self.waiting = None;
            }
            TeammateEventKind::WaitingForApproval { what } => {
                self.status = "waiting for team lead approval".into();
                self.waiting = Some(what.clone());
                self.note(format!(
                    "? waiting for team lead approval: {}",
                    clip(what, 120)
                ));
            }
            TeammateEventKind::Idle { reason, .. } => {
                self.status = match reason {
                    IdleReason::Available => "idle".into(),
                    IdleReason::Interrupted => "idle (interrupted)".into(),
                    IdleReason::Failed => "idle (last turn failed)".into(),
                };
                self.task = None;
                self.waiting = None;
            }
            TeammateEventKind::ModeChanged(mode) => {
                self.mode = *mode;
                self.note(format!("· mode is now {mode}"));
            }
            TeammateEventKind::Stopped(reason) => {
                self.status = match reason {
                    StopReason::Shutdown => "shut down".into(),
                    StopReason::Killed => "stopped".into(),
                    StopReason::Failed(why) => format!("failed: {why}"),
                };
                self.note(format!("· {}", self.status));
            }
        }
    }

    /// Redraws the pane (on a terminal), else flushes the appended lines.
    pub fn draw(&mut self) {
        if !self.redraw {
            let _ = self.out.flush();
            return;
        }
        let (on, off) = match self.color {
            Some(c) => (format!("\x1b[1;38;5;{}m", c.ansi256()), "\x1b[0m"),
            None => ("\x1b[1m".to_string(), "\x1b[0m"),
        };
        let mut screen = String::from("\x1b[H\x1b[2J");
        // Who, mode and status, each part whole: a narrow pane takes them on more lines
        // instead of cutting a word in two.
        let parts = [
            format!("● {} @ {}", self.name, self.team),
            format!("{} mode", self.mode),
            self.status.clone(),
        ];
        for (i, line) in header_lines(&parts, pane_width()).iter().enumerate() {
            if i == 0 {
                // The name in its color (the first part always starts the first line).
                let name_end = parts[0].find(" @ ").unwrap_or(parts[0].len());
                let (name, rest) = line.split_at(name_end.min(line.len()));
                screen.push_str(&format!("{on}{name}{off}{rest}\r\n"));
            } else {
                screen.push_str(&format!("{line}\r\n"));
            }
        }
        match &self.task {
            Some((id, subject)) => screen.push_str(&format!("task #{id}: {subject}\r\n")),
            None => screen.push_str("no task\r\n"),
        }
        if let Some(what) = &self.waiting {
            screen.push_str(&format!(
                "\x1b[1;33mwaiting for team lead approval\x1b[0m: {}\r\n",
                clip(what, 200)
            ));
        }
        screen.push_str("\r\n");
        for line in &self.recent {
            screen.push_str(line);
            screen.push_str("\r\n");
        }
        let _ = self.out.write_all(screen.as_bytes());
        let _ = self.out.flush();
    }
}

/// The columns of the pane (of standard output), when it is a terminal that says.
fn pane_width() -> Option<usize> {
    // SAFETY: TIOCGWINSZ fills a `winsize` the call owns; a failure leaves it zeroed.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// `parts` joined with `  ·  ` on as few lines as `width` allows, never cutting a part (a part
/// longer than the width has a line of its own). Without a width, one line.
fn header_lines(parts: &[String], width: Option<usize>) -> Vec<String> {
    const SEP: &str = "  ·  ";
    let width = width.unwrap_or(usize::MAX);
    let len = |s: &str| s.chars().count();
    let mut lines: Vec<String> = Vec::new();
    for part in parts {
        match lines.last_mut() {
            Some(line) if len(line) + len(SEP) + len(part) <= width => {
                line.push_str(SEP);
                line.push_str(part);
            }
            _ => lines.push(part.clone()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::header_lines;

    #[test]
    fn the_header_wraps_between_parts_never_inside_one() {
        let parts = [
            "● reviewer @ audit-team".to_string(),
            "acceptEdits mode".to_string(),
            "waiting for team lead approval".to_string(),
        ];
        assert_eq!(
            header_lines(&parts, None),
            ["● reviewer @ audit-team  ·  acceptEdits mode  ·  waiting for team lead approval"]
        );
        assert_eq!(
            header_lines(&parts, Some(50)),
            [
                "● reviewer @ audit-team  ·  acceptEdits mode",
                "waiting for team lead approval"
            ]
        );
        insta::assert_snapshot!(
            "pane_header_at_50_columns",
            header_lines(&parts, Some(50)).join("\n")
        );
        // Narrower than a part: that part has its line (the terminal may still wrap it).
        assert_eq!(
            header_lines(&parts, Some(20)),
            [
                "● reviewer @ audit-team",
                "acceptEdits mode",
                "waiting for team lead approval"
            ]
        );
    }
}
