//! The config file with the real binary: `config path|show|init`, the example `init` writes is
//! `assets/config.example.toml`, and a bad file is one error naming the file, line and key —
//! for `config show` and for the lead session alike.

use crate::cli_common;

use std::path::Path;

use cli_common::TestHome;

fn run(t: &TestHome, args: &[&str]) -> (Option<i32>, String, String) {
    let out = t.cmd().args(args).output().expect("run teamlead");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn example() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/config.example.toml"),
    )
    .expect("assets/config.example.toml")
}

#[test]
fn init_writes_the_example_once_and_path_and_show_say_what_is_in_force() {
    let t = TestHome::empty();
    let path = t.config().display().to_string();
    assert_eq!(
        run(&t, &["config", "path"]),
        (Some(0), format!("{path}\n"), String::new())
    );
    let (code, out, _) = run(&t, &["config", "show"]);
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with(&format!("# {path} does not exist: the defaults")),
        "{out}"
    );
    assert!(out.contains("kill = \"x\""), "{out}");

    assert_eq!(
        run(&t, &["config", "init"]),
        (Some(0), format!("wrote {path}\n"), String::new())
    );
    assert_eq!(
        std::fs::read_to_string(t.config()).unwrap(),
        example(),
        "init writes the example"
    );
    std::fs::write(t.config(), example() + "\nbackend = \"tmux\"\n").ok();
    // Refuses to overwrite.
    std::fs::write(t.config(), "theme = \"none\"\n").unwrap();
    let (code, out, err) = run(&t, &["config", "init"]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert_eq!(
        err,
        format!(
            "error: {path} already exists: not overwritten (`teamlead config show` prints what it sets)\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(t.config()).unwrap(),
        "theme = \"none\"\n"
    );
    let (_, out, _) = run(&t, &["config", "show"]);
    assert!(out.starts_with(&format!("# read from {path}\n")), "{out}");
    assert!(out.contains("theme = \"none\""), "{out}");
}

#[test]
fn a_bad_config_is_one_error_with_file_line_and_key() {
    let cases = [
        (
            "backend = \"tmux\"\ncolour = \"red\"\n",
            "2: colour: unknown field `colour`",
        ),
        (
            "\n\nbackend = \"ghostty\"\n",
            "3: backend: unknown variant `ghostty`",
        ),
        (
            "[keys.teams]\nkil = \"x\"\n",
            "2: keys.teams.kil: no action `kil` in [keys.teams]",
        ),
        (
            "[keys.teams]\nkill = \"ctrl+nope\"\n",
            "2: keys.teams.kill: `ctrl+nope` is not a key",
        ),
        (
            "[keys.teams]\nkill = \"j\"\n",
            "2: keys.teams.kill: `j` is bound twice: teams.down and teams.kill",
        ),
        (
            "[keys.global]\nnext-waiting = \"n\"\n",
            "2: keys.global.next-waiting: a key of [keys.global] needs ctrl or alt",
        ),
        (
            "[llm]\napi_key = \"sk-secret\"\n",
            "2: llm.api_key: unknown field `api_key`",
        ),
    ];
    for (text, expected) in cases {
        let t = TestHome::empty();
        std::fs::write(t.config(), text).unwrap();
        let prefix = format!("error: {}:{expected}", t.config().display());
        for args in [
            &["config", "show"][..],
            &["--backend", "in-process"][..],
            &["demo"][..],
        ] {
            let (code, out, err) = run(&t, args);
            assert_eq!(code, Some(1), "{args:?} with {text:?}: {err}");
            assert_eq!(out, "");
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(
                err.starts_with(&prefix),
                "{args:?} with {text:?}:\n{err}\nexpected {prefix}"
            );
            assert!(!err.contains("sk-secret"), "{err}");
        }
        assert!(!t.home().join("teams").exists(), "nothing was started");
    }
}

/// `teamlead prices MODEL`: the row a name takes and why, the config file's rows first, and a
/// model without a price is a clear error.
#[test]
fn prices_say_which_row_a_model_takes() {
    let t = crate::cli_common::TestHome::empty();
    let run = |args: &[&str]| t.cmd().arg("prices").args(args).output().unwrap();
    let out = run(&["claude-opus-4-20250514"]);
    assert!(out.status.success(), "{out:?}");
    insta::assert_snapshot!(
        "prices_dated_id",
        String::from_utf8_lossy(&out.stdout).into_owned()
    );
    let out = run(&["fable-5-2"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fable-5-2 has no price"), "{err}");
    std::fs::write(
        t.config(),
        "[prices.\"fable-5-2\"]\ninput = 1.0\noutput = 2.0\n",
    )
    .unwrap();
    let out = run(&["fable-5-2"]);
    assert!(out.status.success(), "{out:?}");
    insta::assert_snapshot!(
        "prices_config_row",
        String::from_utf8_lossy(&out.stdout).into_owned()
    );
    let all = String::from_utf8_lossy(&run(&[]).stdout).into_owned();
    assert!(all.starts_with("Prices in force"), "{all}");
    assert!(
        all.contains("fable-5-2 (config file)") || all.contains("(config file): fable-5-2"),
        "{all}"
    );
    assert!(
        all.contains("Claude Haiku 5.5 (built in): claude-haiku-5-5"),
        "{all}"
    );
}

/// The web view's `web-allow` comes from the config file when no flag says: `config show`
/// prints the list in force, and a wrong word is one error naming the key and the file
/// (before anything is started).
#[test]
fn web_allow_comes_from_the_config_file() {
    let t = TestHome::empty();
    let (_, shown, _) = run(&t, &["config", "show"]);
    assert!(
        shown.contains("web-allow = \"read,answer,message\""),
        "{shown}"
    );
    std::fs::create_dir_all(t.config().parent().unwrap()).unwrap();
    std::fs::write(t.config(), "web-allow = \"read,answer,steer\"\n").unwrap();
    let (_, shown, _) = run(&t, &["config", "show"]);
    assert!(
        shown.contains("web-allow = \"read,answer,steer\""),
        "{shown}"
    );
    std::fs::write(t.config(), "web-allow = \"read,frob\"\n").unwrap();
    let (code, _, err) = run(&t, &["web", "nosuchteam"]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("web-allow = \"read,frob\" in ") && err.contains("`frob` is not one of"),
        "{err}"
    );
    // The flag wins over the file.
    let (code, _, err) = run(&t, &["web", "nosuchteam", "--allow", "read,frob2"]);
    assert_ne!(code, Some(0));
    assert!(err.contains("--allow: `frob2` is not one of"), "{err}");
}
