//! The merge queue dialog (`/merges`, `m` in the teams dialog): one row per teammate branch —
//! commits ahead of and behind the lead's branch, clean or conflicting with it, and the other
//! teammates whose branches it conflicts with (computed in the background: `checking…` until
//! then) — and, for the selected one, the files. `m` on a branch that merges cleanly shows
//! what the merge would do (the preview) and asks how (`s` squash, `m` merge commit, `r`
//! rebase); the lead merges it (`/merge NAME --…`) and sends the queue again, so the others'
//! status follows. `r` opens the branch's review. Keys in the first moment after the preview
//! opens are not answers ([`Guard`]).

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::contract::{LeadCommand, ViewTarget};
use crate::lead::review::{MergeHow, MergeQueue, QueueEntry};
use crate::ui::keymap::{Action, Context, Keymap};
use crate::ui::modal::context::DialogSender;
use crate::ui::modal::guard::{Focused, Guard};
use crate::ui::modal::{DialogOutcome, fit_spans, frame, hint_lines};
use crate::ui::palette::dim;
use crate::ui::transcript::wrap::{sanitize, str_width, truncate, wrap_line};

/// The queue and what the person is doing with it.
pub struct MergesDialog {
    queue: MergeQueue,
    selected: usize,
    /// The branch whose merge preview is open, with its grace period.
    preview: Option<(String, Guard)>,
    /// The branch whose merge this dialog asked for (the screen then offers to retire it).
    asked: Option<String>,
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

impl MergesDialog {
    pub fn new(queue: MergeQueue) -> MergesDialog {
        MergesDialog {
            queue,
            selected: 0,
            preview: None,
            asked: None,
        }
    }

    /// A newer queue (the pairs computed, the queue after a merge): the selection follows its
    /// teammate.
    pub fn update(&mut self, queue: MergeQueue) {
        let name = self.selected_entry().map(|e| e.name.clone());
        self.queue = queue;
        self.selected = name
            .and_then(|n| self.queue.entries.iter().position(|e| e.name == n))
            .unwrap_or(0);
        if self
            .preview
            .as_ref()
            .is_some_and(|(n, _)| !self.queue.entries.iter().any(|e| &e.name == n))
        {
            self.preview = None;
        }
    }

    /// Whether this dialog asked for `name`'s merge (taken: asked once, offered once).
    pub fn take_asked(&mut self, name: &str) -> bool {
        if self.asked.as_deref() == Some(name) {
            self.asked = None;
            true
        } else {
            false
        }
    }

    fn selected_entry(&self) -> Option<&QueueEntry> {
        self.queue.entries.get(self.selected)
    }

    pub fn handle(
        &mut self,
        key: &KeyEvent,
        keymap: &Keymap,
        now_ms: u64,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        if let Some((name, guard)) = &self.preview {
            if guard.in_grace(now_ms) {
                return DialogOutcome::Keep;
            }
            let how = match keymap.lookup(Context::MergeChoice, key) {
                Some(Action::Squash) => Some(MergeHow::Squash),
                Some(Action::MergeCommit) => Some(MergeHow::Merge),
                Some(Action::Rebase) => Some(MergeHow::Rebase),
                Some(Action::Back) => {
                    self.preview = None;
                    return DialogOutcome::Keep;
                }
                _ => None,
            };
            if let Some(how) = how {
                let flag = how.option();
                sender.command(LeadCommand::Submit {
                    target: ViewTarget::Lead,
                    text: format!("/merge {name} {flag}"),
                });
                self.asked = Some(name.clone());
                self.preview = None;
            }
            return DialogOutcome::Keep;
        }
        let rows = self.queue.entries.len();
        match keymap.lookup(Context::Merges, key) {
            Some(Action::Close) => return DialogOutcome::Close,
            Some(Action::Up) => self.selected = self.selected.saturating_sub(1),
            Some(Action::Down) => self.selected = (self.selected + 1).min(rows.saturating_sub(1)),
            Some(Action::Merge) => {
                if let Some(e) = self.selected_entry() {
                    self.preview = Some((e.name.clone(), Guard::new(now_ms, Focused::OnPurpose)));
                }
            }
            Some(Action::Review) => {
                if let Some(e) = self.selected_entry() {
                    sender.command(LeadCommand::Submit {
                        target: ViewTarget::Lead,
                        text: format!("/review {}", e.name),
                    });
                }
            }
            Some(Action::Again) => {
                // Again: the branches may have moved since.
                sender.command(LeadCommand::Submit {
                    target: ViewTarget::Lead,
                    text: "/merges".to_string(),
                });
            }
            _ => {}
        }
        DialogOutcome::Keep
    }

    /// Draws the dialog; `notice` is the lead's last note since the dialog's last key (a
    /// merge's outcome: the transcript is hidden under the dialog).
    pub fn render(&self, area: Rect, buf: &mut Buffer, notice: Option<&str>, keymap: &Keymap) {
        let q = &self.queue;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let right = match q.entries.len() {
            1 => "1 branch".to_string(),
            n => format!("{n} branches"),
        };
        let title = vec![
            Span::styled(" Merge queue ", bold),
            Span::styled(format!("into {} ", q.lead_branch), dim()),
        ];
        let inner = frame(area, buf, Style::default(), title, Some(right));
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        let width = usize::from(inner.width);
        let mut lines: Vec<Line<'static>> = Vec::new();
        if q.entries.is_empty() {
            lines.push(Line::from(Span::styled(
                "No teammate has a worktree of its own: nothing to merge.",
                dim(),
            )));
        }
        let name_w = q
            .entries
            .iter()
            .map(|e| str_width(&e.name) + 1)
            .max()
            .unwrap_or(0)
            .min(20);
        for (i, e) in q.entries.iter().enumerate() {
            lines.push(self.row(i, e, name_w, width));
        }
        lines.push(Line::default());
        if let Some(e) = self.selected_entry() {
            lines.extend(self.detail(e, width));
        }
        let (hints, preview) = match self
            .preview
            .as_ref()
            .and_then(|(n, _)| q.entries.iter().find(|e| &e.name == n))
        {
            Some(e) => (
                if e.mergeable() {
                    keymap.hints(Context::MergeChoice)
                } else {
                    format!(
                        "{} back",
                        keymap.key_label(Context::MergeChoice, Action::Back)
                    )
                },
                Some(self.preview_lines(e, width)),
            ),
            None => {
                let key = |a| keymap.key_label(Context::Merges, a);
                let hints = format!(
                    "{}/{} select · {} merge · {} review · {} again · {} close",
                    key(Action::Up),
                    key(Action::Down),
                    key(Action::Merge),
                    key(Action::Review),
                    key(Action::Again),
                    key(Action::Close)
                );
                (hints, None)
            }
        };
        let hints = hint_lines(&hints, inner.width);
        let mut bottom: Vec<Line<'static>> = Vec::new();
        // The queue's own account is what the dialog shows: not repeated below it.
        let notice = notice.filter(|t| !t.starts_with("Merge queue ("));
        if let Some(text) = notice.filter(|_| preview.is_none()) {
            let style = Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD);
            let mut wrapped = wrap_line(
                &Line::from(Span::styled(sanitize(&text.replace('\n', " ")), style)),
                0,
                inner.width,
            );
            if wrapped.len() > 3 {
                // Never a sentence cut off: two lines, then where the rest is.
                wrapped.truncate(2);
                wrapped.push(Line::from(Span::styled(
                    "… the rest is in the transcript (esc closes the dialog).",
                    dim(),
                )));
            }
            bottom.extend(wrapped);
        }
        bottom.extend(preview.into_iter().flatten());
        bottom.extend(hints);
        let body = usize::from(inner.height).saturating_sub(bottom.len());
        lines.truncate(body);
        while lines.len() < body {
            lines.push(Line::default());
        }
        lines.extend(bottom);
        Paragraph::new(lines).render(inner, buf);
    }

    /// `▸ @alpha   2 ahead  0 behind  clean            ✗ @beta`.
    fn row(&self, i: usize, e: &QueueEntry, name_w: usize, width: usize) -> Line<'static> {
        let selected = i == self.selected;
        let mark = if selected { "▸ " } else { "  " };
        let name = format!("@{}", e.name);
        let name_style = if selected {
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        };
        let mut spans = vec![
            Span::raw(mark),
            Span::styled(truncate(&name, name_w), name_style),
            Span::raw(" ".repeat(name_w.saturating_sub(str_width(&name)) + 1)),
        ];
        if let Some(err) = &e.error {
            spans.push(Span::styled(err.clone(), Style::default().fg(Color::Red)));
            return Line::from(fit_spans(spans, width));
        }
        spans.push(Span::raw(format!(
            "{:>3} ahead {:>3} behind  ",
            e.ahead, e.behind
        )));
        let (lead, lead_style) = if !e.conflicts.is_empty() {
            (
                format!("conflicts ({})", plural(e.conflicts.len(), "file")),
                Style::default().fg(Color::Red),
            )
        } else if e.nothing_left() {
            ("nothing to merge".to_string(), dim())
        } else {
            ("clean".to_string(), Style::default().fg(Color::Green))
        };
        let lead_w = 20;
        let pad = lead_w - str_width(&lead).min(lead_w);
        spans.push(Span::styled(lead, lead_style));
        spans.push(Span::raw(" ".repeat(pad + 1)));
        match &self.queue.pairs {
            None => spans.push(Span::styled("checking…", dim())),
            Some(_) => {
                let others: Vec<String> = self
                    .queue
                    .conflicts_of(&e.name)
                    .iter()
                    .map(|(n, _)| format!("@{n}"))
                    .collect();
                if others.is_empty() {
                    spans.push(Span::styled("no conflict with others", dim()));
                } else {
                    spans.push(Span::styled(
                        format!("✗ {}", others.join(", ")),
                        Style::default().fg(Color::Yellow),
                    ));
                }
            }
        }
        Line::from(fit_spans(spans, width))
    }

    /// The selected branch: its name, what it conflicts in, what a merge leaves out.
    fn detail(&self, e: &QueueEntry, width: usize) -> Vec<Line<'static>> {
        let q = &self.queue;
        let mut out = vec![Line::from(Span::styled(
            truncate(&format!("@{} · {}", e.name, e.branch), width),
            Style::default().add_modifier(Modifier::BOLD),
        ))];
        let mut say = |text: String, style: Style| {
            let wrapped = wrap_line(&Line::from(Span::styled(text, style)), 0, width as u16);
            out.extend(wrapped);
        };
        if e.error.is_some() {
            return out;
        }
        if e.conflicts.is_empty() {
            if e.already_in && e.ahead > 0 {
                say(
                    format!(
                        "Nothing left to merge: its changes are in {} already (merged before).",
                        q.lead_branch
                    ),
                    dim(),
                );
            } else if e.ahead == 0 {
                say(
                    format!("Nothing to merge: every commit is in {}.", q.lead_branch),
                    dim(),
                );
            } else {
                say(
                    format!(
                        "{} ahead, merges cleanly into {}.",
                        plural(e.ahead, "commit"),
                        q.lead_branch
                    ),
                    Style::default(),
                );
            }
        } else {
            say(
                format!(
                    "Conflicts with {} in {}.",
                    q.lead_branch,
                    e.conflicts.join(", ")
                ),
                Style::default().fg(Color::Red),
            );
        }
        match &q.pairs {
            None => say(
                "Conflicts with the other branches: checking…".to_string(),
                dim(),
            ),
            Some(_) => {
                for (other, files) in q.conflicts_of(&e.name) {
                    say(
                        format!("Conflicts with @{other} in {}.", files.join(", ")),
                        Style::default().fg(Color::Yellow),
                    );
                }
            }
        }
        if e.uncommitted > 0 {
            say(
                format!(
                    "{} in its worktree {} not part of a merge.",
                    plural(e.uncommitted, "uncommitted file"),
                    if e.uncommitted == 1 { "is" } else { "are" }
                ),
                dim(),
            );
        }
        out
    }

    /// What merging `e` would do, or why it cannot.
    fn preview_lines(&self, e: &QueueEntry, width: usize) -> Vec<Line<'static>> {
        let q = &self.queue;
        let (text, style) = if !e.conflicts.is_empty() {
            (
                format!(
                    "@{} cannot be merged: it conflicts with {} in {}.",
                    e.name,
                    q.lead_branch,
                    e.conflicts.join(", ")
                ),
                Style::default().fg(Color::Red),
            )
        } else if e.nothing_left() {
            (
                format!(
                    "Nothing to merge: the changes of @{} are in {} already.",
                    e.name, q.lead_branch
                ),
                dim(),
            )
        } else {
            let others: Vec<String> = q
                .conflicts_of(&e.name)
                .iter()
                .map(|(n, _)| format!("@{n}"))
                .collect();
            let mut text = format!(
                "Merge {} of @{} into {} ({} behind): it applies cleanly.",
                plural(e.ahead, "commit"),
                e.name,
                q.lead_branch,
                e.behind
            );
            if e.uncommitted > 0 {
                text.push_str(&format!(
                    " {} stay out.",
                    plural(e.uncommitted, "uncommitted file")
                ));
            }
            if !others.is_empty() {
                text.push_str(&format!(
                    " {} overlap{} it: after this merge, expect {} with {}.",
                    others.join(", "),
                    if others.len() == 1 { "s" } else { "" },
                    if others.len() == 1 {
                        "a conflict"
                    } else {
                        "conflicts"
                    },
                    q.lead_branch
                ));
            }
            (text, Style::default().add_modifier(Modifier::BOLD))
        };
        let mut out = wrap_line(&Line::from(Span::styled(text, style)), 0, width as u16);
        out.truncate(4);
        out
    }
}
