//! The iTerm2 backend against a stand-in `it2` (tests/bin/it2) that records its calls and answers
//! like the real CLI: detection, the split chain, run/focus/close, and pruning closed sessions.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use teamlead::backend::detect::{BackendChoice, CapturedEnv, detect};
use teamlead::backend::iterm2::Iterm2Backend;
use teamlead::protocol::BackendRequest;

/// The stand-in `it2` with its own state directory: `bin/it2` is a script that runs
/// tests/bin/it2 with `IT2_STATE` set, so no test changes this process's environment.
struct FakeIt2 {
    dir: tempfile::TempDir,
}

impl FakeIt2 {
    fn new(alive: &[&str]) -> FakeIt2 {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("sessions"),
            format!("{}\n", alive.join("\n")),
        )
        .unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        let stand_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bin/it2");
        let script = format!(
            "#!/bin/sh\nIT2_STATE='{}' exec '{}' \"$@\"\n",
            dir.path().display(),
            stand_in.display()
        );
        fs::write(bin.join("it2"), script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(bin.join("it2"), fs::Permissions::from_mode(0o755)).unwrap();
        FakeIt2 { dir }
    }
    fn bin_dir(&self) -> PathBuf {
        self.dir.path().join("bin")
    }
    fn program(&self) -> PathBuf {
        self.bin_dir().join("it2")
    }
    fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
    fn close(&self, id: &str) {
        let path = self.dir.path().join("sessions");
        let left: Vec<String> = fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| *l != id)
            .map(str::to_string)
            .collect();
        fs::write(path, format!("{}\n", left.join("\n"))).unwrap();
    }
}

#[test]
fn iterm2_split_chain_run_focus_close_and_prune() {
    let fake = FakeIt2::new(&["LEAD-UUID"]);
    let program = fake.program();
    let program = program.to_str().unwrap();
    assert!(Iterm2Backend::is_available(program));
    let backend = Iterm2Backend::new(program, "w0t0p0:LEAD-UUID");

    let first = backend.create_pane().unwrap();
    let second = backend.create_pane().unwrap();
    assert_eq!(
        (first.as_str(), second.as_str()),
        ("SESSION-1", "SESSION-2")
    );
    backend
        .run_command(&second, "cd /w && env teamlead teammate")
        .unwrap();
    backend.focus(&first).unwrap();

    // The user closes the newest pane: the next split fails against it, the backend checks the
    // session list, drops the dead id and splits the one before.
    fake.close("SESSION-2");
    let third = backend.create_pane().unwrap();
    assert_eq!(third, "SESSION-3");
    assert_eq!(backend.sessions(), vec!["SESSION-1", "SESSION-3"]);

    // Every teammate pane closed: the chain falls back to the lead's session.
    fake.close("SESSION-1");
    fake.close("SESSION-3");
    let fourth = backend.create_pane().unwrap();
    assert_eq!(fourth, "SESSION-4");
    backend.kill(&fourth).unwrap();

    assert_eq!(
        fake.calls(),
        vec![
            "session list",
            "session split -v -s LEAD-UUID",
            "session split -s SESSION-1",
            "session run -s SESSION-2 cd /w && env teamlead teammate",
            "session focus SESSION-1",
            "session split -s SESSION-2",
            "session list",
            "session split -s SESSION-1",
            "session split -s SESSION-3",
            "session list",
            "session split -s SESSION-1",
            "session list",
            "session split -v -s LEAD-UUID",
            "session close -f -s SESSION-4",
        ]
    );
}

#[test]
fn detection_order_and_overrides() {
    let fake = FakeIt2::new(&["LEAD-UUID"]);
    let bin_dir = fake.bin_dir();
    let with_it2 = format!("{}:/usr/bin:/bin", bin_dir.display());
    let works = |p: &str| Iterm2Backend::is_available(p);

    let env = |pairs: &[(&str, &str)]| {
        let map: HashMap<&str, &str> = pairs.iter().copied().collect();
        CapturedEnv::from_map(&map)
    };
    // Inside tmux wins.
    let inside = env(&[
        ("TMUX", "/tmp/x,1,0"),
        ("TMUX_PANE", "%3"),
        ("PATH", &with_it2),
    ]);
    assert_eq!(
        detect(&inside, BackendRequest::Auto, &works),
        BackendChoice::TmuxInside {
            lead_pane: "%3".into()
        }
    );
    // iTerm2 with a working it2 next.
    let iterm = env(&[
        ("TERM_PROGRAM", "iTerm.app"),
        ("ITERM_SESSION_ID", "w0t0p0:LEAD-UUID"),
        ("PATH", &with_it2),
    ]);
    assert!(matches!(
        detect(&iterm, BackendRequest::Auto, &works),
        BackendChoice::Iterm2 { .. }
    ));
    // An it2 whose API is off does not count.
    assert_ne!(
        detect(&iterm, BackendRequest::Auto, &|_| false).label(),
        "iterm2"
    );
    // Nothing usable: in-process with a notice.
    let bare = env(&[("PATH", "/nonexistent")]);
    match detect(&bare, BackendRequest::Auto, &works) {
        BackendChoice::InProcess { notice } => assert!(notice.unwrap().contains("in-process")),
        other => panic!("{other:?}"),
    }
    // --backend overrides.
    assert_eq!(
        detect(&inside, BackendRequest::InProcess, &works),
        BackendChoice::InProcess { notice: None }
    );
    assert!("bogus".parse::<BackendRequest>().is_err());
}
