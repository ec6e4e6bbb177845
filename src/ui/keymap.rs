//! The one keymap table: every key the UI handles outside of plain typing, per context, with a
//! short description. Key handling looks actions up here, and the help dialog and the hint lines
//! of dialogs and footer are generated from the same table, so they cannot disagree.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

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
    pub const ALL: [Context; 12] = [
        Context::Global,
        Context::Composer,
        Context::Completion,
        Context::Badge,
        Context::Permission,
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

const fn key(code: KeyCode) -> KeySpec {
    KeySpec {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn ch(c: char) -> KeySpec {
    key(KeyCode::Char(c))
}

const fn ctrl(c: char) -> KeySpec {
    KeySpec {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

const fn shift(code: KeyCode) -> KeySpec {
    KeySpec {
        code,
        mods: KeyModifiers::SHIFT,
    }
}

const fn alt(code: KeyCode) -> KeySpec {
    KeySpec {
        code,
        mods: KeyModifiers::ALT,
    }
}

const BACKTAB: KeySpec = key(KeyCode::BackTab);
const ENTER: KeySpec = key(KeyCode::Enter);
const ESC: KeySpec = key(KeyCode::Esc);
const UP: KeySpec = key(KeyCode::Up);
const DOWN: KeySpec = key(KeyCode::Down);
const LEFT: KeySpec = key(KeyCode::Left);
const RIGHT: KeySpec = key(KeyCode::Right);
const TAB: KeySpec = key(KeyCode::Tab);
const PGUP: KeySpec = key(KeyCode::PageUp);
const PGDN: KeySpec = key(KeyCode::PageDown);

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

const fn bind(
    context: Context,
    keys: &'static [KeySpec],
    action: Action,
    what: &'static str,
    hint: bool,
) -> Binding {
    Binding {
        context,
        keys,
        action,
        what,
        hint,
    }
}

use Action as A;
use Context as C;

/// The keymap. Lookup takes the first row of the context that matches.
pub const KEYMAP: &[Binding] = &[
    bind(
        C::Global,
        &[ctrl('c')],
        A::Quit,
        "quit (press twice)",
        false,
    ),
    bind(
        C::Global,
        &[ctrl('t')],
        A::ToggleTasks,
        "show or hide the task list",
        false,
    ),
    bind(
        C::Global,
        &[ctrl('p')],
        A::OpenApprovals,
        "open pending approvals",
        false,
    ),
    bind(C::Composer, &[ENTER], A::Submit, "send", false),
    bind(
        C::Composer,
        &[alt(KeyCode::Enter), shift(KeyCode::Enter), ctrl('j')],
        A::Newline,
        "new line",
        false,
    ),
    bind(
        C::Composer,
        &[BACKTAB],
        A::CycleMode,
        "cycle the mode",
        false,
    ),
    bind(
        C::Composer,
        &[shift(KeyCode::Down)],
        A::NextView,
        "next view (lead, in-process teammates)",
        false,
    ),
    bind(
        C::Composer,
        &[shift(KeyCode::Up)],
        A::PrevView,
        "previous view",
        false,
    ),
    bind(
        C::Composer,
        &[PGUP],
        A::PageUp,
        "scroll the transcript up",
        false,
    ),
    bind(
        C::Composer,
        &[PGDN],
        A::PageDown,
        "scroll the transcript down",
        false,
    ),
    bind(
        C::Composer,
        &[DOWN],
        A::SelectBadge,
        "select the team badge (empty composer)",
        false,
    ),
    bind(
        C::Composer,
        &[ch('?')],
        A::Help,
        "help (empty composer)",
        false,
    ),
    bind(
        C::Composer,
        &[ESC],
        A::Interrupt,
        "interrupt the teammate's turn (its view)",
        false,
    ),
    bind(C::Completion, &[TAB], A::Complete, "complete", true),
    bind(C::Completion, &[UP], A::CompletionUp, "previous", false),
    bind(C::Completion, &[DOWN], A::CompletionDown, "next", false),
    bind(C::Completion, &[ESC], A::CloseCompletion, "close", false),
    bind(
        C::Badge,
        &[ENTER],
        A::OpenTeams,
        "open the teams dialog",
        true,
    ),
    bind(C::Badge, &[UP, ESC], A::BackToComposer, "back", true),
    bind(C::Permission, &[ch('y')], A::Allow, "yes", true),
    bind(C::Permission, &[ch('a')], A::AllowAlways, "always", true),
    bind(C::Permission, &[ch('n')], A::Deny, "no", true),
    bind(
        C::Permission,
        &[LEFT, UP],
        A::PrevOption,
        "previous option",
        false,
    ),
    bind(
        C::Permission,
        &[RIGHT, DOWN, TAB],
        A::NextOption,
        "next option",
        false,
    ),
    bind(C::Permission, &[ENTER], A::Choose, "choose", false),
    bind(
        C::Permission,
        &[ch('o')],
        A::OpenRequester,
        "open its view",
        true,
    ),
    bind(C::Permission, &[ESC], A::Later, "later", true),
    bind(C::Feedback, &[ENTER], A::SendFeedback, "send", true),
    bind(C::Feedback, &[ESC], A::CancelFeedback, "back", true),
    bind(C::Plan, &[ch('y'), ENTER], A::Approve, "approve", true),
    bind(C::Plan, &[ch('n')], A::Reject, "reject with feedback", true),
    bind(C::Plan, &[LEFT], A::PrevOption, "previous mode", false),
    bind(C::Plan, &[RIGHT, TAB], A::NextOption, "mode", true),
    bind(C::Plan, &[UP, ch('k')], A::Up, "scroll up", false),
    bind(C::Plan, &[DOWN, ch('j')], A::Down, "scroll down", false),
    bind(C::Plan, &[PGUP], A::PageUp, "page up", false),
    bind(C::Plan, &[PGDN, ch(' ')], A::PageDown, "page down", false),
    bind(C::Plan, &[ESC], A::Later, "later", true),
    bind(C::TeamsList, &[UP], A::Up, "previous", false),
    bind(C::TeamsList, &[DOWN, ch('j')], A::Down, "next", false),
    bind(C::TeamsList, &[ENTER], A::OpenDetail, "details", true),
    bind(
        C::TeamsList,
        &[BACKTAB],
        A::CycleAllModes,
        "cycle all modes",
        true,
    ),
    bind(C::TeamsList, &[ch('s')], A::Shutdown, "shut down", true),
    bind(C::TeamsList, &[ch('k')], A::Kill, "kill", true),
    bind(C::TeamsList, &[ch('h')], A::ToggleHidden, "hide/show", true),
    bind(C::TeamsList, &[ch('p')], A::PruneIdle, "prune idle", true),
    bind(C::TeamsList, &[ESC], A::Close, "close", true),
    bind(C::TeamsDetail, &[BACKTAB], A::CycleMode, "cycle mode", true),
    bind(C::TeamsDetail, &[ENTER, ch('v')], A::Jump, "jump", true),
    bind(C::TeamsDetail, &[ch('s')], A::Shutdown, "shut down", true),
    bind(C::TeamsDetail, &[ch('k')], A::Kill, "kill", true),
    bind(
        C::TeamsDetail,
        &[ch('h')],
        A::ToggleHidden,
        "hide/show",
        true,
    ),
    bind(C::TeamsDetail, &[ch('e')], A::ExpandPrompt, "prompt", true),
    bind(C::TeamsDetail, &[LEFT], A::Back, "back", true),
    bind(C::TeamsDetail, &[ESC], A::Close, "close", true),
    bind(C::Confirm, &[ch('y')], A::Yes, "yes", true),
    bind(C::Confirm, &[ch('n'), ESC], A::No, "no", true),
    bind(C::Help, &[UP, ch('k')], A::Up, "scroll up", false),
    bind(C::Help, &[DOWN, ch('j')], A::Down, "scroll down", false),
    bind(C::Help, &[ESC, ch('q'), ch('?')], A::Close, "close", true),
    bind(
        C::Tasks,
        &[ctrl('t')],
        A::ToggleTasks,
        "hide the task list",
        false,
    ),
];

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
            "y yes · a always · n no · o open its view · esc later"
        );
        let help = help_sections();
        assert!(help.iter().any(|(title, rows)| *title == "Teams dialog"
            && rows.iter().any(|(k, w)| k == "k" && *w == "kill")));
    }
}
