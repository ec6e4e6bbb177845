//! Control sequences in what a team's files say: members, inbox messages (a frame's fields
//! looked into) and tasks whose text holds control characters, escape sequences, bidi or
//! invisible characters are each one [`ProblemKind::ControlSequences`]. Printers show such
//! text escaped (`protocol::display`); this says that it was there.

use std::path::Path;

use super::{Problem, ProblemKind, TeamAudit};
use crate::display::{controls_in, controls_in_message, field_list as fields, message_kind};

/// Adds a problem for every member, message and task that carries control sequences.
pub(super) fn control_problems(config: &Path, tasks_dir: &Path, audit: &mut TeamAudit) {
    let mut found = Vec::new();
    if let Some(file) = &audit.team_file {
        for m in &file.members {
            // An unsafe name is already an `unsafe-name` problem.
            let carried: Vec<String> = controls_in(m).into_iter().filter(|f| f != "name").collect();
            if !carried.is_empty() {
                found.push(Problem::new(
                    ProblemKind::ControlSequences,
                    config,
                    format!(
                        "member `{}` carries control sequences in {} (shown escaped)",
                        m.name,
                        fields(&carried)
                    ),
                ));
            }
        }
    }
    for inbox in &audit.inboxes {
        for (i, entry) in inbox.entries.iter().flatten().enumerate() {
            let carried = controls_in_message(entry);
            if !carried.is_empty() {
                found.push(Problem::new(
                    ProblemKind::ControlSequences,
                    &inbox.path,
                    format!(
                        "message {} ({}) from `{}` carries control sequences in {} (shown escaped)",
                        i + 1,
                        message_kind(entry),
                        entry.from,
                        fields(&carried)
                    ),
                ));
            }
        }
    }
    for task in &audit.tasks {
        let carried = controls_in(task);
        if !carried.is_empty() {
            found.push(Problem::new(
                ProblemKind::ControlSequences,
                tasks_dir.join(format!("{}.json", task.id)),
                format!(
                    "task #{} carries control sequences in {} (shown escaped)",
                    task.id,
                    fields(&carried)
                ),
            ));
        }
    }
    audit.problems.extend(found);
}
