//! The terminals teammates' panes can live in, as plug-ins. Each is one [`Terminal`] (what
//! teamlead knows of it without asking, [`About`]; how it is found in the environment; opening
//! its [`PaneBackend`]; the pane a teammate runs in; what a dead lead left in it) in a file or
//! folder of its own here, holding its `impl PaneBackend` too, and one line of [`TERMINALS`],
//! which lists them in the order `auto` tries them. Detection (`backend::detect`), the pane
//! executor, `teamlead teammate`'s own pane and `clean` go through the registry and name no
//! terminal. Every call to a terminal's CLI goes through one runner with a time limit
//! ([`cli`]).

pub mod cli;
pub mod iterm2;
pub mod kitty;
pub mod screen;
pub mod tmux;
pub mod wezterm;
pub mod zellij;

use std::sync::Arc;

use super::detect::{BackendChoice, CapturedEnv};
use super::lead_probe::procs::ProcTable;
use super::{BackendKind, PaneBackend};
use crate::protocol::{Member, TeamFile};
use crate::store::Home;

/// Every terminal, in the order `auto` tries them (a multiplexer before the terminal it runs
/// in: inside tmux in kitty, the panes are tmux's). A new terminal is one line here.
pub static TERMINALS: &[&dyn Terminal] = &[
    &tmux::Tmux,
    &zellij::Zellij,
    &kitty::Kitty,
    &wezterm::Wezterm,
    &iterm2::Iterm2,
    &screen::Screen,
];

/// The terminal of `kind` (`None` for in-process).
pub fn terminal(kind: BackendKind) -> Option<&'static dyn Terminal> {
    TERMINALS.iter().copied().find(|t| t.about().kind == kind)
}

/// The pane backend of a choice (`None` for in-process).
pub fn open(choice: &BackendChoice) -> Option<Arc<dyn PaneBackend>> {
    match choice {
        BackendChoice::Panes(panes) => terminal(panes.kind).map(|t| t.open(panes)),
        BackendChoice::InProcess { .. } => None,
    }
}

/// Asks whether the CLI `program` of a terminal answers (`it2 session list` works): injected
/// into detection so tests need no terminal; [`answers`] is the real one.
pub type Probe<'a> = &'a dyn Fn(BackendKind, &str) -> bool;

/// The real [`Probe`]: the terminal's own check ([`Terminal::answers`]).
pub fn answers(kind: BackendKind, program: &str) -> bool {
    terminal(kind).is_some_and(|t| t.answers(program))
}

/// What teamlead knows of a terminal without asking it.
#[derive(Debug)]
pub struct About {
    pub kind: BackendKind,
    /// `--backend NAME`'s help (`tmux panes (the user's server, or a private one outside tmux)`).
    pub help: &'static str,
    /// When `auto` takes it: the lead runs inside it (`inside tmux`); `None`: never.
    pub inside: Option<&'static str>,
    /// When `auto` takes it with the lead outside it, and what it makes then (`tmux on PATH →
    /// a private tmux server`); `None`: never.
    pub auto_elsewhere: Option<&'static str>,
    /// Why it cannot be used when it was asked for by name (`is not installed`).
    pub unusable: &'static str,
    /// The environment variables it reads (captured once at start).
    pub variables: &'static [&'static str],
}

/// Where a pane backend puts its panes, as detected once per session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneChoice {
    pub kind: BackendKind,
    /// Its CLI (a path found on PATH, or a name).
    pub program: String,
    pub place: Place,
}

/// Beside the lead, or a private server of this lead's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Beside the lead in the terminal it runs in: the lead's pane (tmux `%N`, the iTerm2
    /// session, the Zellij pane, the kitty window, the WezTerm pane) when it has one, and where
    /// the terminal is reached when it must be named (the Zellij session, kitty's
    /// remote-control address).
    Inside {
        lead_pane: Option<String>,
        address: Option<String>,
    },
    /// A private server or background session named after this lead's pid.
    Private,
}

impl PaneChoice {
    /// Panes beside the lead.
    pub fn inside(
        kind: BackendKind,
        program: &str,
        lead_pane: Option<String>,
        address: Option<String>,
    ) -> PaneChoice {
        PaneChoice {
            kind,
            program: program.to_string(),
            place: Place::Inside { lead_pane, address },
        }
    }

    /// Panes on a private server or session of this lead.
    pub fn private(kind: BackendKind, program: &str) -> PaneChoice {
        PaneChoice {
            kind,
            program: program.to_string(),
            place: Place::Private,
        }
    }

    /// The lead's pane, when inside.
    pub fn lead_pane(&self) -> Option<&str> {
        match &self.place {
            Place::Inside { lead_pane, .. } => lead_pane.as_deref(),
            Place::Private => None,
        }
    }

    /// Where the terminal is reached, when inside and it must be named.
    pub fn address(&self) -> Option<&str> {
        match &self.place {
            Place::Inside { address, .. } => address.as_deref(),
            Place::Private => None,
        }
    }
}

/// Something a lead that no longer runs left in a terminal, which `clean` may remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leftover {
    /// A private server or session (`teamlead-<pid>`) whose lead is gone.
    Private { kind: BackendKind, name: String },
    /// A pane that runs (or ran: `dead`) a teamlead teammate of this home whose team is gone.
    Pane {
        kind: BackendKind,
        pane: String,
        team: String,
        name: String,
        dead: bool,
    },
}

impl Leftover {
    pub fn kind(&self) -> BackendKind {
        match self {
            Leftover::Private { kind, .. } | Leftover::Pane { kind, .. } => *kind,
        }
    }
}

impl std::fmt::Display for Leftover {
    /// `tmux server -L teamlead-42: its lead is gone`, `tmux pane %3 of teammate al (dead): its
    /// team t1 is gone`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Leftover::Private { kind, name } => {
                let label = terminal(*kind)
                    .map(|t| t.private_label(name))
                    .unwrap_or_else(|| name.clone());
                write!(f, "{label}: its lead is gone")
            }
            Leftover::Pane {
                kind,
                pane,
                team,
                name,
                dead,
            } => write!(
                f,
                "{kind} pane {pane} of teammate {name}{}: its team {team} is gone",
                if *dead { " (dead)" } else { "" }
            ),
        }
    }
}

/// One terminal teammates' panes can live in (see the module header).
pub trait Terminal: Sync {
    /// What teamlead knows of it without asking it.
    fn about(&self) -> &'static About;

    /// The lead runs inside this terminal and can drive it from here: where the panes go.
    /// `probe` asks a CLI whether it answers, for a terminal that must be asked.
    fn inside(&self, env: &CapturedEnv, probe: Probe<'_>) -> Option<PaneChoice>;

    /// Panes outside the lead's terminal (a private server or session), when this terminal
    /// makes them: `asked` when it was asked for by name, else for `auto`.
    fn elsewhere(&self, _env: &CapturedEnv, _asked: bool) -> Option<PaneChoice> {
        None
    }

    /// Opens the pane backend of `choice` (one of this terminal's).
    fn open(&self, choice: &PaneChoice) -> Arc<dyn PaneBackend>;

    /// The pane a teammate runs in, from the variables its terminal set (`None`: not in one
    /// of this terminal's).
    fn own_pane(&self, env: &CapturedEnv) -> Option<String>;

    /// Whether the CLI `program` answers (the real [`Probe`]; only terminals that must be
    /// asked before they are chosen are).
    fn answers(&self, _program: &str) -> bool {
        true
    }

    /// What the private server or session `name` is called: `tmux server -L teamlead-42`.
    fn private_label(&self, name: &str) -> String {
        format!("{} session {name}", self.about().kind)
    }

    /// What dead leads left in this terminal, found without changing anything.
    fn leftovers(&self, _home: &Home) -> Vec<Leftover> {
        Vec::new()
    }

    /// Removes one of its [`Terminal::leftovers`], once it has checked that it still is one.
    fn remove_leftover(&self, _home: &Home, leftover: &Leftover) -> Result<(), String> {
        Err(format!("{} leaves nothing to remove", leftover.kind()))
    }

    /// A dead team is being removed: ends the private server or session its lead (`lead_pid`)
    /// had in this terminal, if it is there.
    fn end_private(&self, _home: &Home, _team: &str, _lead_pid: u32) {}

    /// A dead team is being removed: closes the panes of `members` (its teammates of this
    /// terminal) that still carry their teammate's name, on the terminal `clean` runs in.
    fn close_member_panes(&self, _team: &TeamFile, members: &[&Member], _table: &ProcTable) {
        let env = CapturedEnv::from_process();
        let Some(choice) = self.inside(&env, &|_, _| false) else {
            return;
        };
        let backend = self.open(&choice);
        for m in members {
            if backend.title(&m.tmux_pane_id).as_deref() == Some(m.name.as_str()) {
                let _ = backend.kill(&m.tmux_pane_id);
            }
        }
    }
}

/// The terminals `auto` may take, in words: `tmux, Zellij, kitty, WezTerm or iTerm2`.
pub fn auto_terminals() -> String {
    let names: Vec<&str> = TERMINALS
        .iter()
        .map(|t| t.about())
        .filter(|a| a.inside.is_some() || a.auto_elsewhere.is_some())
        .map(|a| a.kind.terminal_name())
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// `auto`'s rules, in words, for `--backend`'s help: `Inside tmux → tmux; …; tmux on PATH → a
/// private tmux server; else in-process`.
pub fn auto_help() -> String {
    let inside = TERMINALS.iter().filter_map(|t| {
        let about = t.about();
        Some(format!(
            "{} → {}",
            about.inside?,
            about.kind.terminal_name()
        ))
    });
    let elsewhere = TERMINALS
        .iter()
        .filter_map(|t| t.about().auto_elsewhere.map(str::to_string));
    let rules: Vec<String> = inside
        .chain(elsewhere)
        .chain(std::iter::once("else in-process".to_string()))
        .collect();
    let text = rules.join("; ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pane kind has its terminal, once; in-process has none.
    #[test]
    fn the_registry_covers_every_pane_kind_once() {
        for kind in BackendKind::ALL {
            let found = TERMINALS.iter().filter(|t| t.about().kind == kind).count();
            assert_eq!(found, usize::from(kind.is_pane()), "{kind}");
        }
        assert!(auto_help().starts_with("Inside tmux → tmux; inside Zellij → Zellij;"));
        assert!(auto_help().ends_with("tmux on PATH → a private tmux server; else in-process"));
    }
}
