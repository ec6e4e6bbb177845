//! Where teammates are seen, through the session's executor: hide/show (recorded in
//! `hiddenPaneIds`), jump (focus a pane, hand the terminal to a private server, or open an
//! in-process teammate's inline view), and what earlier sessions left behind (`/clean`, and the
//! note at start).

use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::executor::Focus;
use crate::lead::view::LeadEvent;
use crate::store;

impl Controller {
    /// `h` in the teams dialog: hide a visible pane, show a hidden one; `hiddenPaneIds` follows.
    pub fn toggle_hidden(&mut self, name: &str) {
        let Some(pane) = self.team_file.member(name).map(|m| m.tmux_pane_id.clone()) else {
            return self.no_such_teammate(name);
        };
        let hidden = self
            .team_file
            .hidden_pane_ids
            .as_ref()
            .is_some_and(|ids| ids.contains(&pane));
        let (executor, who) = (self.executor.clone(), name.to_string());
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
        let team = self.team.clone();
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

    /// Enter/v in the teams dialog: go to the teammate.
    pub fn jump(&mut self, name: &str) {
        let (executor, who) = (self.executor.clone(), name.to_string());
        self.runtime_job(
            name,
            move |_| async move {
                let focus = executor.focus(&who).await;
                (who, focus)
            },
            |c, (name, focus)| c.jumped(&name, focus),
        );
    }

    /// The executor went to the teammate (or could not): say so, hand the terminal over.
    fn jumped(
        &mut self,
        name: &str,
        focus: Result<Focus, crate::backend::executor::ExecutorError>,
    ) {
        match focus {
            Ok(Focus::Focused) => self.note(format!("Jumped to {name}'s pane.")),
            Ok(Focus::Attach { argv, hint, detach }) => {
                // Outside tmux: the lead's screen steps aside while the user is attached to
                // the private server at that pane, and comes back when they detach.
                self.note(format!(
                    "Attached to {name}'s pane (`{hint}`); detach with {detach} to come back."
                ));
                self.emit(LeadEvent::HandOverTerminal { argv });
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
