//! The one keymap: every key the UI handles outside of plain typing, per context, with a short
//! description. Key handling looks actions up in it, and the help dialog and the hint lines of
//! dialogs and footer are generated from it, so they cannot disagree. The defaults are the
//! table in `table.rs`; the config file's `[keys]` section replaces the keys of any row
//! ([`Keymap::with_overrides`]).

mod key;
mod overrides;
mod table;

use crossterm::event::KeyEvent;

pub use key::KeySpec;
pub use overrides::KeyOverride;
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
    /// The review of a teammate's work (`/review NAME`).
    Review,
    /// The merge queue (`/merges`).
    Merges,
    /// The merge queue, choosing how to merge the selected branch.
    MergeChoice,
    /// A yes/no confirmation.
    Confirm,
    /// The help dialog.
    Help,
    /// The task list panel (toggled; listed for help only).
    Tasks,
}

impl Context {
    /// Every context, in the order help shows them.
    pub const ALL: [Context; 16] = [
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
        Context::Review,
        Context::Merges,
        Context::MergeChoice,
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
            Context::Review => "Review",
            Context::Merges => "Merge queue",
            Context::MergeChoice => "Merge queue, choosing how",
            Context::Confirm => "Confirmation",
            Context::Help => "Help",
            Context::Tasks => "Task list",
        }
    }

    /// The context's name in the config file's `[keys]` section (`[keys.teams]`).
    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Composer => "composer",
            Context::Completion => "completion",
            Context::Badge => "badge",
            Context::Permission => "permission",
            Context::AlwaysConfirm => "always-confirm",
            Context::Feedback => "feedback",
            Context::Plan => "plan",
            Context::TeamsList => "teams",
            Context::TeamsDetail => "teammate",
            Context::Review => "review",
            Context::Merges => "merges",
            Context::MergeChoice => "merge-choice",
            Context::Confirm => "confirm",
            Context::Help => "help",
            Context::Tasks => "tasks",
        }
    }
}

macro_rules! actions {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// What a key asks for. The context decides which of them make sense.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Action {
            $($variant),*
        }

        impl Action {
            /// The action's name in the config file's `[keys]` section.
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$variant => $name),*
                }
            }
        }
    };
}

actions! {
    Quit => "quit",
    ToggleTasks => "toggle-tasks",
    OpenApprovals => "open-approvals",
    NextWaiting => "next-waiting",
    Submit => "submit",
    Steer => "steer",
    Newline => "newline",
    ClearLine => "clear-line",
    CycleMode => "cycle-mode",
    NextView => "next-view",
    PrevView => "prev-view",
    PageUp => "page-up",
    PageDown => "page-down",
    SelectBadge => "select-badge",
    Help => "help",
    Interrupt => "interrupt",
    Complete => "complete",
    CompletionUp => "up",
    CompletionDown => "down",
    CloseCompletion => "close",
    OpenTeams => "open-teams",
    BackToComposer => "back",
    Allow => "yes",
    AllowAlways => "always",
    ConfirmAlways => "confirm",
    Deny => "no",
    PrevOption => "prev-option",
    NextOption => "next-option",
    Choose => "choose",
    OpenRequester => "open-requester",
    Later => "later",
    SendFeedback => "send",
    CancelFeedback => "cancel",
    Approve => "approve",
    Reject => "reject",
    Up => "up",
    Down => "down",
    OpenDetail => "details",
    CycleAllModes => "cycle-all-modes",
    Shutdown => "shutdown",
    Kill => "kill",
    ToggleHidden => "toggle-hidden",
    PruneIdle => "prune-idle",
    Jump => "jump",
    ExpandPrompt => "prompt",
    Back => "back",
    Close => "close",
    Yes => "yes",
    No => "no",
    IncludeBusy => "include-busy",
    Review => "review",
    Merges => "merges",
    Top => "top",
    Bottom => "bottom",
    NextHunk => "next-hunk",
    PrevHunk => "prev-hunk",
    Comment => "comment",
    CommentHunk => "comment-hunk",
    NextFile => "next-file",
    PrevFile => "prev-file",
    Merge => "merge",
    Again => "again",
    Squash => "squash",
    MergeCommit => "merge-commit",
    Rebase => "rebase",
}

/// One row of the default table.
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

/// One row of a keymap in use (the default table's, or with the config file's keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub context: Context,
    pub keys: Vec<KeySpec>,
    pub action: Action,
    pub what: &'static str,
    pub hint: bool,
}

/// The keymap in use. Lookup takes the first row of the context that matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    rows: Vec<Row>,
}

impl Default for Keymap {
    /// The default table.
    fn default() -> Self {
        Keymap {
            rows: KEYMAP
                .iter()
                .map(|b| Row {
                    context: b.context,
                    keys: b.keys.to_vec(),
                    action: b.action,
                    what: b.what,
                    hint: b.hint,
                })
                .collect(),
        }
    }
}

/// `y/enter` — every key of a row.
pub fn keys_label(row: &Row) -> String {
    row.keys
        .iter()
        .map(KeySpec::label)
        .collect::<Vec<_>>()
        .join("/")
}

impl Keymap {
    /// Every row, in lookup order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    fn in_context(&self, context: Context) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(move |r| r.context == context)
    }

    /// The action of a key in a context, if any.
    pub fn lookup(&self, context: Context, event: &KeyEvent) -> Option<Action> {
        self.in_context(context)
            .find(|r| r.keys.iter().any(|k| k.matches(event)))
            .map(|r| r.action)
    }

    /// Whether any row, in any context, has this key.
    pub fn binds(&self, event: &KeyEvent) -> bool {
        self.rows
            .iter()
            .any(|r| r.keys.iter().any(|k| k.matches(event)))
    }

    /// The hint line of a context: `y yes · a always · n no · esc later`.
    pub fn hints(&self, context: Context) -> String {
        self.in_context(context)
            .filter(|r| r.hint && !r.keys.is_empty())
            .map(|r| format!("{} {}", r.keys[0].label(), r.what))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// [`Keymap::hints`] without the hints of `left_out` (actions that do nothing for what is
    /// selected, e.g. hide/show for an in-process teammate, which has no pane).
    pub fn hints_without(&self, context: Context, left_out: &[Action]) -> String {
        self.in_context(context)
            .filter(|r| r.hint && !r.keys.is_empty() && !left_out.contains(&r.action))
            .map(|r| format!("{} {}", r.keys[0].label(), r.what))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// The hint line of a context with every key of each hint: `a/enter confirm · esc/← back`.
    pub fn hints_with_every_key(&self, context: Context) -> String {
        self.in_context(context)
            .filter(|r| r.hint && !r.keys.is_empty())
            .map(|r| format!("{} {}", keys_label(r), r.what))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// The first key bound to `action` in `context` (`ctrl+p`), for hints outside the table's
    /// own hint lines (the approvals banner, the footer); empty when it has none.
    pub fn key_label(&self, context: Context, action: Action) -> String {
        self.in_context(context)
            .find(|r| r.action == action)
            .and_then(|r| r.keys.first())
            .map(KeySpec::label)
            .unwrap_or_default()
    }

    /// Help rows per context: (context title, [(keys, what)]).
    pub fn help_sections(&self) -> Vec<(&'static str, Vec<(String, &'static str)>)> {
        Context::ALL
            .iter()
            .map(|ctx| {
                let rows = self
                    .in_context(*ctx)
                    .map(|r| (keys_label(r), r.what))
                    .collect::<Vec<_>>();
                (ctx.title(), rows)
            })
            .filter(|(_, rows)| !rows.is_empty())
            .collect()
    }
}

#[cfg(test)]
mod tests;
