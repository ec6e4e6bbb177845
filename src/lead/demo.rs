//! The offline demo (`teamlead demo`): a temporary working directory, a team of three
//! in-process `shell` teammates (one must get its plan approved), and a graph of six tasks whose
//! commands do small real work there (make directories, write files, count, sort, checksum,
//! report); teammates and tasks are data, `assets/demo-tasks.toml`, embedded in the binary. Run it with `Lead::start(LeadOptions::new(home, ".").with_demo(plan))`: the tasks
//! are created and the teammates spawned at start; `/quit` removes the team and the directory.
//! [`DemoLeftovers`] removes what else the demo made in a home it was given (the reviewer's
//! plan file, the `teams/`, `tasks/` and `plans/` directories it had to create).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::protocol::PermissionMode;
use crate::store::{self, Home};

/// One teammate of the demo.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoTeammate {
    pub name: String,
    pub prompt: String,
    pub plan_mode_required: bool,
    pub mode: PermissionMode,
}

/// One task of the demo; `blocked_by` holds indices of earlier tasks in [`DemoPlan::tasks`];
/// `owner` is the teammate it is assigned to (so every teammate, the planner included, gets
/// work whatever the timing).
#[derive(Debug, Clone, PartialEq)]
pub struct DemoTask {
    pub subject: String,
    pub description: String,
    pub command: String,
    pub blocked_by: Vec<usize>,
    pub owner: Option<String>,
}

/// Everything the demo needs; dropping it removes its working directory.
#[derive(Debug)]
pub struct DemoPlan {
    /// The team name (free in this home).
    pub team: String,
    pub teammates: Vec<DemoTeammate>,
    pub tasks: Vec<DemoTask>,
    workdir: tempfile::TempDir,
}

impl DemoPlan {
    /// The temporary working directory (removed when the plan is dropped).
    pub fn workdir(&self) -> &Path {
        self.workdir.path()
    }
}

/// The demo's teammates and task graph, as data: `assets/demo-tasks.toml`, embedded.
pub const DEMO_TASKS: &str = include_str!("../../assets/demo-tasks.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DemoFile {
    teammate: Vec<FileTeammate>,
    task: Vec<FileTask>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTeammate {
    name: String,
    prompt: String,
    #[serde(default)]
    plan_mode_required: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTask {
    id: String,
    subject: String,
    description: String,
    command: String,
    #[serde(default)]
    blocked_by: Vec<String>,
    owner: Option<String>,
}

/// What is wrong with a demo file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DemoError {
    #[error("{0}")]
    Toml(String),
    #[error("task `{task}`: `{id}` is not an earlier task")]
    NotEarlier { task: String, id: String },
    #[error("task `{task}`: no teammate `{owner}`")]
    NoOwner { task: String, owner: String },
    /// The file built into the binary (checked by a test: it does not happen).
    #[error("assets/demo-tasks.toml: {0}")]
    BuiltIn(Box<DemoError>),
}

/// Reads a demo file: teammates, and tasks whose `blocked_by` ids name earlier tasks and
/// whose owners are teammates of the file.
pub fn parse_demo(text: &str) -> Result<(Vec<DemoTeammate>, Vec<DemoTask>), DemoError> {
    let file: DemoFile =
        toml::from_str(text).map_err(|e| DemoError::Toml(e.message().to_string()))?;
    let teammates: Vec<DemoTeammate> = file
        .teammate
        .into_iter()
        .map(|t| DemoTeammate {
            name: t.name,
            prompt: t.prompt,
            plan_mode_required: t.plan_mode_required,
            mode: PermissionMode::Default,
        })
        .collect();
    let mut tasks = Vec::new();
    for (i, t) in file.task.iter().enumerate() {
        let blocked_by = t
            .blocked_by
            .iter()
            .map(|id| {
                file.task[..i]
                    .iter()
                    .position(|earlier| &earlier.id == id)
                    .ok_or_else(|| DemoError::NotEarlier {
                        task: t.id.clone(),
                        id: id.clone(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(owner) = &t.owner
            && !teammates.iter().any(|m| &m.name == owner)
        {
            return Err(DemoError::NoOwner {
                task: t.id.clone(),
                owner: owner.clone(),
            });
        }
        tasks.push(DemoTask {
            subject: t.subject.clone(),
            description: t.description.clone(),
            command: t.command.clone(),
            blocked_by,
            owner: t.owner.clone(),
        });
    }
    Ok((teammates, tasks))
}

fn embedded() -> Result<(Vec<DemoTeammate>, Vec<DemoTask>), DemoError> {
    // Checked by `the_embedded_graph_reads` below: it does not fail in a built binary.
    parse_demo(DEMO_TASKS).map_err(|e| DemoError::BuiltIn(Box::new(e)))
}

/// The six tasks: one that lays out the files, three that work on them in parallel, a checksum
/// of the results, and a report; two for each teammate.
pub fn demo_tasks() -> Result<Vec<DemoTask>, DemoError> {
    Ok(embedded()?.1)
}

/// The three teammates: two in `default` mode (each Bash command is asked for), one that must
/// get its plan approved first.
pub fn demo_teammates() -> Result<Vec<DemoTeammate>, DemoError> {
    Ok(embedded()?.0)
}

/// A free team name for the demo in `home`: `demo`, else `demo-2`, `demo-3`, …
fn free_team_name(home: &Home) -> String {
    let mut n = 1;
    loop {
        let name = if n == 1 {
            "demo".to_string()
        } else {
            format!("demo-{n}")
        };
        let taken =
            home.config_path(&name).is_ok_and(|p| p.exists()) && store::is_lead_alive(home, &name);
        if !taken {
            return name;
        }
        n += 1;
    }
}

/// Prepares the demo: a temporary working directory, the team of three, the task graph.
pub fn setup_demo(home: &Home) -> std::io::Result<DemoPlan> {
    let (teammates, tasks) =
        embedded().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let workdir = tempfile::Builder::new()
        .prefix("teamlead-demo-")
        .tempdir()?;
    Ok(DemoPlan {
        team: free_team_name(home),
        teammates,
        tasks,
        workdir,
    })
}

/// What the demo may leave in a home it did not create: its plan files and the top
/// directories that did not exist before it ran. Dropping it removes them (directories only
/// when empty, so nothing of anyone else's is touched).
#[derive(Debug)]
pub struct DemoLeftovers {
    plans_dir: PathBuf,
    /// `<team>-<member>-` of every demo teammate: the prefix of its plan files.
    plan_prefixes: Vec<String>,
    /// Directories of the home the demo created (removed when empty), deepest last.
    new_dirs: Vec<PathBuf>,
}

impl DemoLeftovers {
    /// Notes what exists in `home` before the demo `plan` runs.
    pub fn before(home: &Home, plan: &DemoPlan) -> DemoLeftovers {
        let mut new_dirs: Vec<PathBuf> = [home.teams_dir(), home.tasks_root(), home.plans_dir()]
            .into_iter()
            .filter(|d| std::fs::symlink_metadata(d).is_err())
            .collect();
        if std::fs::symlink_metadata(&home.root).is_err() {
            new_dirs.push(home.root.clone());
        }
        DemoLeftovers {
            plans_dir: home.plans_dir(),
            plan_prefixes: plan
                .teammates
                .iter()
                .map(|t| format!("{}-{}-", plan.team, t.name))
                .collect(),
            new_dirs,
        }
    }

    /// Removes the demo's plan files and the directories it created that are now empty.
    pub fn remove(&self) {
        if let Ok(entries) = std::fs::read_dir(&self.plans_dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours =
                    name.ends_with(".md") && self.plan_prefixes.iter().any(|p| name.starts_with(p));
                if ours && entry.file_type().is_ok_and(|t| t.is_file()) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        for dir in &self.new_dirs {
            // Only empty directories go: whatever someone else put there stays.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

impl Drop for DemoLeftovers {
    fn drop(&mut self) {
        self.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_graph_only_points_backwards() {
        let tasks = demo_tasks().unwrap();
        assert_eq!(tasks.len(), 6);
        for (i, t) in tasks.iter().enumerate() {
            assert!(t.blocked_by.iter().all(|b| *b < i), "task {i}");
        }
        assert_eq!(
            demo_teammates()
                .unwrap()
                .iter()
                .filter(|t| t.plan_mode_required)
                .count(),
            1
        );
    }

    #[test]
    fn the_embedded_graph_reads_and_bad_graphs_do_not() {
        let (teammates, tasks) = parse_demo(DEMO_TASKS).unwrap();
        assert_eq!(teammates.len(), 3);
        assert_eq!(tasks[4].blocked_by, vec![1, 2, 3]);
        assert_eq!(tasks[0].owner.as_deref(), Some("builder"));
        let bad = "[[teammate]]\nname = \"a\"\nprompt = \"p\"\n[[task]]\nid = \"x\"\nsubject = \"s\"\ndescription = \"d\"\ncommand = \"true\"\nblocked_by = [\"y\"]\n";
        assert!(
            parse_demo(bad)
                .unwrap_err()
                .to_string()
                .contains("`y` is not an earlier task")
        );
        let bad = bad.replace("blocked_by = [\"y\"]", "owner = \"b\"");
        assert!(
            parse_demo(&bad)
                .unwrap_err()
                .to_string()
                .contains("no teammate `b`")
        );
    }

    #[test]
    fn the_commands_do_real_work() {
        let dir = tempfile::tempdir().unwrap();
        for t in demo_tasks().unwrap() {
            let status = std::process::Command::new("sh")
                .arg("-c")
                .arg(&t.command)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                status.status.success(),
                "{}: {}",
                t.subject,
                String::from_utf8_lossy(&status.stderr)
            );
        }
        let report = std::fs::read_to_string(dir.path().join("out/REPORT.md")).unwrap();
        assert!(report.contains("apple\nbanana\ncherry\nfig\npear"));
        assert!(report.contains("## Checksums"));
    }

    #[test]
    fn setup_makes_a_directory_that_goes_away() {
        let home = tempfile::tempdir().unwrap();
        let plan = setup_demo(&Home::new(home.path())).unwrap();
        let dir = plan.workdir().to_path_buf();
        assert!(dir.is_dir());
        assert_eq!(plan.team, "demo");
        drop(plan);
        assert!(!dir.exists());
    }

    #[test]
    fn leftovers_go_and_what_was_there_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path().join("home"));
        std::fs::create_dir_all(home.tasks_root().join("other")).unwrap();
        let plan = setup_demo(&home).unwrap();
        let leftovers = DemoLeftovers::before(&home, &plan);
        std::fs::create_dir_all(home.plans_dir()).unwrap();
        std::fs::create_dir_all(home.teams_dir()).unwrap();
        let ours = home.plan_path(&plan.team, "reviewer", 1).unwrap();
        std::fs::write(&ours, "# plan").unwrap();
        let theirs = home.plans_dir().join("other-alpha-1.md");
        std::fs::write(&theirs, "# plan").unwrap();
        drop(leftovers);
        assert!(!ours.exists());
        assert!(theirs.exists(), "another team's plan stays");
        assert!(
            !home.teams_dir().exists(),
            "made by the demo, empty: removed"
        );
        assert!(
            home.tasks_root().join("other").exists(),
            "there before: kept"
        );
    }
}
