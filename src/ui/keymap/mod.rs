//! The one keymap table: every key the UI handles outside of plain typing, per context, with a
//! short description. Key handling looks actions up here, and the help dialog and the hint lines
//! of dialogs and footer are generated from the same table, so they cannot disagree.

mod table;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub use table::KEYMAP;

/// Where a key is pressed: the focused part of the screen or the top dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Anywhere.
    Global,
    /// The composer (main view or a teammate's inline view).
    Composer,
    /// The `/command` or `@name` completion popup over the composer.
    Completion,
    /// The footer's team badge, selected.
    Badge,
    /// The permission dialog.
    Permission,
    /// The permission dialog's second step of "always": the exact rule, to confirm.
    AlwaysConfirm,
    /// A one-line feedback input (deny a permission, reject a plan).
    Feedback,
    /// The plan approval dialog.
    Plan,
    /// The teams dialog, list level.
    TeamsList,
    /// The teams dialog, one teammate.
    TeamsDetail,
    /// A yes/no confirmation.
    Confirm,
    /// The help dialog.
    Help,
    /// The task list panel (toggled; listed for help only).
    Tasks,
}

impl Context {
    /// Every context, in the order help shows them.
    pub const ALL: [Context; 13] = [
        Context::Global,
        Context::Composer,
        Context::Completion,
        Context::Badge,
        Context::Permission,
        Context::AlwaysConfirm,
        Context::Feedback,
        Context::Plan,
        Context::TeamsList,
        Context::TeamsDetail,
        Context::Confirm,
        Context::Help,
        Context::Tasks,
    ];

    /// The heading of this context in the help dialog.
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Anywhere",
            Context::Composer => "Composer",
            Context::Completion => "Completion popup",
            Context::Badge => "Team badge (footer)",
            Context::Permission => "Permission dialog",
            Context::AlwaysConfirm => "Permission dialog, confirming \"always\"",
            Context::Feedback => "Feedback input",
            Context::Plan => "Plan approval",
            Context::TeamsList => "Teams dialog",
            Context::TeamsDetail => "Teammate detail",
            Context::Confirm => "Confirmation",
            Context::Help => "Help",
            Context::Tasks => "Task list",
        }
    }
}

/// What a key asks for. The context decides which of them make sense.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    ToggleTasks,
    OpenApprovals,
    Submit,
    Newline,
    CycleMode,
    NextView,
    PrevView,
    PageUp,
    PageDown,
    SelectBadge,
    Help,
    Interrupt,
    Complete,
    CompletionUp,
    CompletionDown,
    CloseCompletion,
    OpenTeams,
    BackToComposer,
    Allow,
    AllowAlways,
    ConfirmAlways,
    Deny,
    PrevOption,
    NextOption,
    Choose,
    OpenRequester,
    Later,
    SendFeedback,
    CancelFeedback,
    Approve,
    Reject,
    Up,
    Down,
    OpenDetail,
    CycleAllModes,
    Shutdown,
    Kill,
    ToggleHidden,
    PruneIdle,
    Jump,
    ExpandPrompt,
    Back,
    Close,
    Yes,
    No,
}

/// One key chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl KeySpec {
    /// Whether a key event is this chord. Shift is ignored for characters (it is already in the
    /// character) and for Shift+Tab (terminals differ in reporting it).
    pub fn matches(&self, event: &KeyEvent) -> bool {
        match (self.code, event.code) {
            (KeyCode::BackTab, KeyCode::BackTab) => true,
            (KeyCode::Char(a), KeyCode::Char(b)) => {
                a == b && self.mods == event.modifiers.difference(KeyModifiers::SHIFT)
            }
            (a, b) => a == b && self.mods == event.modifiers,
        }
    }

    /// `ctrl+c`, `shift+tab`, `↑`, `enter`, `y`.
    pub fn label(&self) -> String {
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("ctrl+");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("alt+");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            out.push_str("shift+");
        }
        match self.code {
            KeyCode::Char(' ') => out.push_str("space"),
            KeyCode::Char(c) => out.push(c),
            KeyCode::Enter => out.push_str("enter"),
            KeyCode::Esc => out.push_str("esc"),
            KeyCode::Tab => out.push_str("tab"),
            KeyCode::BackTab => out.push_str("shift+tab"),
            KeyCode::Up => out.push('↑'),
            KeyCode::Down => out.push('↓'),
            KeyCode::Left => out.push('←'),
            KeyCode::Right => out.push('→'),
            KeyCode::PageUp => out.push_str("pgup"),
            KeyCode::PageDown => out.push_str("pgdn"),
            KeyCode::Backspace => out.push_str("backspace"),
            other => out.push_str(&format!("{other:?}").to_lowercase()),
        }
        out
    }
}

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub context: Context,
    pub keys: &'static [KeySpec],
    pub action: Action,
    /// Short description, used in hints and in help.
    pub what: &'static str,
    /// Whether the dialog's hint line shows it.
    pub hint: bool,
}

/// The action of a key in a context, if any.
pub fn lookup(context: Context, event: &KeyEvent) -> Option<Action> {
    KEYMAP
        .iter()
        .filter(|b| b.context == context)
        .find(|b| b.keys.iter().any(|k| k.matches(event)))
        .map(|b| b.action)
}

/// `y/enter` — every key of a binding.
pub fn keys_label(binding: &Binding) -> String {
    binding
        .keys
        .iter()
        .map(KeySpec::label)
        .collect::<Vec<_>>()
        .join("/")
}

/// The hint line of a context: `y yes · a always · n no · esc later`.
pub fn hints(context: Context) -> String {
    KEYMAP
        .iter()
        .filter(|b| b.context == context && b.hint)
        .map(|b| format!("{} {}", b.keys[0].label(), b.what))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The hint line of a context with every key of each hint: `a/enter confirm · esc/← back`.
pub fn hints_with_every_key(context: Context) -> String {
    KEYMAP
        .iter()
        .filter(|b| b.context == context && b.hint)
        .map(|b| format!("{} {}", keys_label(b), b.what))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The first key bound to `action` in `context` (`ctrl+p`), for hints outside the table's own
/// hint lines (the approvals banner, the footer).
pub fn key_label(context: Context, action: Action) -> Option<String> {
    KEYMAP
        .iter()
        .find(|b| b.context == context && b.action == action)
        .map(|b| b.keys[0].label())
}

/// Help rows per context: (context title, [(keys, what)]).
pub fn help_sections() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    Context::ALL
        .iter()
        .map(|ctx| {
            let rows = KEYMAP
                .iter()
                .filter(|b| b.context == *ctx)
                .map(|b| (keys_label(b), b.what))
                .collect::<Vec<_>>();
            (ctx.title(), rows)
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventKind;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: mods,
            kind: KeyEventKind::Press,
            state: crossterm::event::KeyEventState::NONE,
        }
    }

    #[test]
    fn shift_tab_matches_however_reported() {
        let a = ev(KeyCode::BackTab, KeyModifiers::SHIFT);
        let b = ev(KeyCode::BackTab, KeyModifiers::NONE);
        assert_eq!(lookup(Context::Composer, &a), Some(Action::CycleMode));
        assert_eq!(lookup(Context::Composer, &b), Some(Action::CycleMode));
    }

    #[test]
    fn plain_enter_submits_and_modified_enter_breaks_the_line() {
        let enter = ev(KeyCode::Enter, KeyModifiers::NONE);
        let alt_enter = ev(KeyCode::Enter, KeyModifiers::ALT);
        let shift_enter = ev(KeyCode::Enter, KeyModifiers::SHIFT);
        assert_eq!(lookup(Context::Composer, &enter), Some(Action::Submit));
        assert_eq!(lookup(Context::Composer, &alt_enter), Some(Action::Newline));
        assert_eq!(
            lookup(Context::Composer, &shift_enter),
            Some(Action::Newline)
        );
    }

    #[test]
    fn characters_ignore_shift_but_not_ctrl() {
        let y = ev(KeyCode::Char('y'), KeyModifiers::NONE);
        let ctrl_y = ev(KeyCode::Char('y'), KeyModifiers::CONTROL);
        assert_eq!(lookup(Context::Permission, &y), Some(Action::Allow));
        assert_eq!(lookup(Context::Permission, &ctrl_y), None);
        let question = ev(KeyCode::Char('?'), KeyModifiers::SHIFT);
        assert_eq!(lookup(Context::Composer, &question), Some(Action::Help));
    }

    #[test]
    fn hints_come_from_the_table() {
        assert_eq!(
            hints(Context::Permission),
            "y yes · a always… · n no · → select · o open its view · esc later"
        );
        assert_eq!(
            hints_with_every_key(Context::AlwaysConfirm),
            "a/enter confirm · esc/← back"
        );
        assert_eq!(
            key_label(Context::Global, Action::OpenApprovals).as_deref(),
            Some("ctrl+p")
        );
        let help = help_sections();
        assert!(help.iter().any(|(title, rows)| *title == "Teams dialog"
            && rows.iter().any(|(k, w)| k == "k" && *w == "kill")));
    }
}
