//! Where teammates are seen, through the session's executor: hide/show (recorded in
//! `hiddenPaneIds`), jump (focus a pane, hand the terminal to a private server, or open an
//! in-process teammate's inline view; each time saying how to come back to the lead before the
//! keyboard goes elsewhere), and what earlier sessions left behind (`/clean`, and the note at
//! start).

use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::executor::Focus;
use crate::lead::contract::{HandOver, LeadEvent};
use crate::protocol::BackendKind;
use crate::store;

/// The keys that bring the focus back to the lead's pane after a jump inside the user's own
/// multiplexer (their defaults), where the lead's pane stays on screen beside the teammate's.
fn focus_way_back(kind: BackendKind) -> Option<&'static str> {
    match kind {
        BackendKind::Tmux => Some("ctrl+b ; (tmux's last pane)"),
        BackendKind::Zellij => Some("alt+← (Zellij's move focus)"),
        _ => None,
    }
}

/// `tmux … attach …` that also puts the way back in the status line of the team's private
/// server (`-g`: the server is the team's own), where it stays while the user is attached.
fn tmux_showing_way_back(mut argv: Vec<String>, detach: &str) -> Vec<String> {
    let status = format!("#[reverse] {detach}: back to the lead #[default]");
    argv.extend([";", "set-option", "-g", "status-right"].map(str::to_string));
    argv.push(status);
    argv
}

impl Controller {
    /// `h` in the teams dialog: hide a visible pane, show a hidden one; `hiddenPaneIds` follows.
    pub fn toggle_hidden(&mut self, name: &str) {
        let Some(pane) = self
            .cache
            .file()
            .member(name)
            .map(|m| m.tmux_pane_id.clone())
        else {
            return self.no_such_teammate(name);
        };
        let hidden = self
            .cache
            .file()
            .hidden_pane_ids
            .as_ref()
            .is_some_and(|ids| ids.contains(&pane));
        let (executor, who) = (self.given.executor().clone(), name.to_string());
        let name = name.to_string();
        self.runtime_job(
            &name.clone(),
            move |_| async move {
                if hidden {
                    executor.show(&who).await
                } else {
                    executor.hide(&who).await
                }
            },
            move |c, result| {
                if let Err(e) = result {
                    return c.note(format!(
                        "Could not {} {name}: {e}",
                        if hidden { "show" } else { "hide" }
                    ));
                }
                c.record_hidden(&name, pane, hidden);
            },
        );
    }

    /// Records a pane hidden or shown in `hiddenPaneIds` (in the team lane), then tells it.
    fn record_hidden(&mut self, name: &str, pane: String, hidden: bool) {
        let team = self.given.team().to_string();
        let told = if hidden {
            format!("{name}'s pane is back.")
        } else {
            format!("{name}'s pane is hidden (h again to bring it back).")
        };
        self.store.submit(
            Lane::Team,
            move |home| {
                store::team::edit_team(home, &team, |file| {
                    let ids = file.hidden_pane_ids.get_or_insert_with(Vec::new);
                    ids.retain(|p| p != &pane);
                    if !hidden {
                        ids.push(pane.clone());
                    }
                    Ok(())
                })
            },
            move |c, edited| {
                if let Err(e) = edited {
                    c.note(format!("Could not record the hidden pane: {e}"));
                }
                c.reload_team();
                c.note(told);
            },
        );
    }

    /// Enter/v in the teams dialog: go to the teammate, saying how to come back before the
    /// keyboard is somewhere else.
    pub fn jump(&mut self, name: &str) {
        let (executor, who) = (self.given.executor().clone(), name.to_string());
        self.runtime_job(
            name,
            move |_| async move {
                let focus = executor.focus(&who).await;
                (who, focus)
            },
            |c, (name, focus)| c.jumped(&name, focus),
        );
    }

    /// The executor went to the teammate (or could not): say so, and how to come back; hand
    /// the terminal over.
    fn jumped(
        &mut self,
        name: &str,
        focus: Result<Focus, crate::backend::executor::ExecutorError>,
    ) {
        match focus {
            Ok(Focus::Focused) => self.note(match focus_way_back(self.given.kind()) {
                Some(back) => format!("Jumped to {name}'s pane: {back} comes back to the lead."),
                None => format!("Jumped to {name}'s pane."),
            }),
            Ok(Focus::Attach { argv, hint, detach }) => {
                // Outside a multiplexer: the lead's screen steps aside while the user is
                // attached to the private server at that pane, and comes back when they
                // detach. The way back is said before (the screen prints it, and asks for Enter
                // where the program cannot show it) and, in tmux, all along in its status line.
                let back = format!("detach with {detach} to come back to the lead");
                self.note(format!(
                    "{name}'s pane is in the team's own session (`{hint}`): {back}."
                ));
                // A remote teammate's `ssh -t … tmux attach` shows the way back itself.
                let local_tmux = argv.first().is_some_and(|p| p == "tmux");
                let (argv, shown_inside) = match self.given.kind() {
                    BackendKind::Tmux if local_tmux => (tmux_showing_way_back(argv, &detach), true),
                    _ => (argv, false),
                };
                self.emit(LeadEvent::HandOverTerminal(HandOver {
                    argv,
                    back: format!("{name}'s pane: {back}."),
                    shown_inside,
                }));
            }
            Ok(Focus::InlineView) => self.note(format!(
                "{name} is in-process: use Shift+↓ to open its view."
            )),
            Err(e) => self.note(format!("Could not jump to {name}: {e}")),
        }
    }

    /// `/clean`: removes what dead sessions left behind (never this session's team) and the
    /// leftovers of dead writers (temp files, lock markers, their locks); the search and the
    /// removal run in the background, the notes come when they are done.
    pub fn clean_orphans(&mut self) {
        use crate::backend::orphans;
        self.store.submit(
            Lane::Leftovers,
            |home| {
                let mut done: Vec<String> = orphans::find(home)
                    .into_iter()
                    .map(|orphan| match orphans::remove(home, &orphan) {
                        Ok(()) => format!("Removed: {orphan}."),
                        Err(e) => format!("Could not remove {orphan}: {e}"),
                    })
                    .collect();
                // Temp files, lock markers and dead locks of writers that are gone, as
                // `teamlead clean` removes them.
                for swept in crate::store::leftovers::sweep(home, false) {
                    let path = swept.path.strip_prefix(&home.root).unwrap_or(&swept.path);
                    let what = format!("{} ({})", path.display(), swept.kind.describe());
                    done.push(match swept.result {
                        Ok(()) => format!("Removed: {what}."),
                        Err(e) => format!("Could not remove {what}: {e}"),
                    });
                }
                done
            },
            |c, done| {
                if done.is_empty() {
                    return c.note("Nothing to clean.");
                }
                for line in done {
                    c.note(line);
                }
            },
        );
    }

    /// At start (after adopting the team): what earlier sessions left behind, found off the loop.
    pub async fn note_orphans(&mut self) {
        let found = self
            .store
            .read(crate::backend::orphans::find)
            .await
            .unwrap_or_default();
        if !found.is_empty() {
            let list: Vec<String> = found.iter().take(5).map(|o| o.to_string()).collect();
            self.note(format!(
                "Found {} thing(s) left behind by earlier sessions: {}{}. /clean removes them.",
                found.len(),
                list.join("; "),
                if found.len() > 5 { "; …" } else { "" }
            ));
        }
    }
}
