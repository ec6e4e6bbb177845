//! The default keymap table: every binding of every context, in lookup order.

use crossterm::event::{KeyCode, KeyModifiers};

use super::{Action, Binding, Context, KeySpec};

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
const HOME: KeySpec = key(KeyCode::Home);
const END: KeySpec = key(KeyCode::End);

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
    bind(
        C::Global,
        &[ctrl('n')],
        A::NextWaiting,
        "open the next teammate waiting on you (a request queued, or a message not answered)",
        false,
    ),
    bind(C::Composer, &[ENTER], A::Submit, "send", false),
    bind(
        C::Composer,
        &[ctrl('s')],
        A::Steer,
        "steer `@name text`: stop its turn, send now",
        false,
    ),
    bind(
        C::Composer,
        &[alt(KeyCode::Enter), shift(KeyCode::Enter), ctrl('j')],
        A::Newline,
        "new line",
        false,
    ),
    bind(
        C::Composer,
        &[ctrl('u')],
        A::ClearLine,
        "clear the line up to the cursor (as in shells)",
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
        "interrupt the current turn (the lead model's, or the teammate's in its view)",
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
    bind(C::Permission, &[ch('a')], A::AllowAlways, "always…", true),
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
        "select",
        true,
    ),
    bind(
        C::Permission,
        &[ENTER],
        A::Choose,
        "choose the option selected with the arrows (never the default)",
        false,
    ),
    bind(
        C::Permission,
        &[ch('o')],
        A::OpenRequester,
        "open its view",
        true,
    ),
    bind(C::Permission, &[ESC], A::Later, "later", true),
    bind(
        C::AlwaysConfirm,
        &[ch('a'), ENTER],
        A::ConfirmAlways,
        "confirm",
        true,
    ),
    bind(C::AlwaysConfirm, &[ESC, LEFT], A::Back, "back", true),
    bind(C::Feedback, &[ENTER], A::SendFeedback, "send", true),
    bind(C::Feedback, &[ESC], A::CancelFeedback, "back", true),
    bind(C::Plan, &[ch('y')], A::Approve, "approve", true),
    bind(C::Plan, &[ch('n')], A::Reject, "reject with feedback", true),
    bind(C::Plan, &[LEFT], A::PrevOption, "previous mode", false),
    bind(C::Plan, &[RIGHT, TAB], A::NextOption, "mode", true),
    bind(C::Plan, &[UP, ch('k')], A::Up, "scroll up", false),
    bind(C::Plan, &[DOWN, ch('j')], A::Down, "scroll down", false),
    bind(C::Plan, &[PGUP], A::PageUp, "page up", false),
    bind(C::Plan, &[PGDN, ch(' ')], A::PageDown, "page down", false),
    bind(C::Plan, &[ESC], A::Later, "later", true),
    bind(C::TeamsList, &[UP, ch('k')], A::Up, "previous", false),
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
    bind(C::TeamsList, &[ch('x')], A::Kill, "kill", true),
    bind(C::TeamsList, &[ch('h')], A::ToggleHidden, "hide/show", true),
    bind(C::TeamsList, &[ch('p')], A::PruneIdle, "prune idle", true),
    bind(C::TeamsList, &[ch('r')], A::Review, "review", true),
    bind(C::TeamsList, &[ch('m')], A::Merges, "merge queue", true),
    bind(C::TeamsList, &[ESC], A::Close, "close", true),
    bind(C::TeamsDetail, &[BACKTAB], A::CycleMode, "cycle mode", true),
    bind(C::TeamsDetail, &[ENTER, ch('v')], A::Jump, "jump", true),
    bind(C::TeamsDetail, &[ch('s')], A::Shutdown, "shut down", true),
    bind(C::TeamsDetail, &[ch('x')], A::Kill, "kill", true),
    bind(
        C::TeamsDetail,
        &[ch('h')],
        A::ToggleHidden,
        "hide/show",
        true,
    ),
    bind(C::TeamsDetail, &[ch('e')], A::ExpandPrompt, "prompt", true),
    bind(C::TeamsDetail, &[ch('r')], A::Review, "review", true),
    bind(C::TeamsDetail, &[LEFT], A::Back, "back", true),
    bind(C::TeamsDetail, &[ESC], A::Close, "close", true),
    bind(C::Review, &[UP, ch('k')], A::Up, "previous line", false),
    bind(C::Review, &[DOWN, ch('j')], A::Down, "next line", false),
    bind(C::Review, &[PGUP, ctrl('u')], A::PageUp, "page up", false),
    bind(
        C::Review,
        &[PGDN, ch(' '), ctrl('d')],
        A::PageDown,
        "page down",
        false,
    ),
    bind(C::Review, &[HOME, ch('g')], A::Top, "first line", false),
    bind(C::Review, &[END, ch('G')], A::Bottom, "last line", false),
    bind(C::Review, &[ch('[')], A::PrevHunk, "previous hunk", false),
    bind(C::Review, &[ch(']')], A::NextHunk, "next hunk", false),
    bind(
        C::Review,
        &[ch('c')],
        A::Comment,
        "comment on the line",
        false,
    ),
    bind(
        C::Review,
        &[ch('C')],
        A::CommentHunk,
        "comment on the hunk",
        false,
    ),
    bind(
        C::Review,
        &[BACKTAB, ch('p'), LEFT],
        A::PrevFile,
        "previous file",
        false,
    ),
    bind(
        C::Review,
        &[TAB, ch('n'), RIGHT],
        A::NextFile,
        "next file",
        false,
    ),
    bind(C::Review, &[ESC, ch('q')], A::Close, "close", false),
    bind(C::Merges, &[UP, ch('k')], A::Up, "previous", false),
    bind(C::Merges, &[DOWN, ch('j')], A::Down, "next", false),
    bind(C::Merges, &[ch('m'), ENTER], A::Merge, "merge", false),
    bind(C::Merges, &[ch('r')], A::Review, "review", false),
    bind(
        C::Merges,
        &[ch('g')],
        A::Again,
        "read the queue again",
        false,
    ),
    bind(C::Merges, &[ESC, ch('q')], A::Close, "close", false),
    bind(C::MergeChoice, &[ch('s')], A::Squash, "squash", true),
    bind(
        C::MergeChoice,
        &[ch('m')],
        A::MergeCommit,
        "merge commit",
        true,
    ),
    bind(C::MergeChoice, &[ch('r')], A::Rebase, "rebase", true),
    bind(
        C::MergeChoice,
        &[ESC, ch('n'), LEFT],
        A::Back,
        "cancel",
        true,
    ),
    bind(C::Confirm, &[ch('y')], A::Yes, "yes", true),
    bind(C::Confirm, &[ch('n'), ESC], A::No, "no", true),
    bind(
        C::Confirm,
        &[ch('a')],
        A::IncludeBusy,
        "yes, busy teammates too",
        false,
    ),
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
