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
        screen.push_str(&format!(
            "{on}● {}{off} @ {}  ·  {} mode  ·  {}\r\n",
            self.name, self.team, self.mode, self.status
        ));
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
