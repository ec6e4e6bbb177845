//! `teamlead hosts add|remove|list` with the real binary, no host needed: the config file
//! gets `[hosts.NAME]` (its comments kept), names and destinations are checked, a bad entry
//! is one error naming the file, line and key, and `remove` takes the table out again.

use crate::cli_common::TestHome;

fn run(t: &TestHome, args: &[&str]) -> (Option<i32>, String, String) {
    let out = t.cmd().args(args).output().expect("run teamlead");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn add_writes_a_table_and_remove_takes_it_out_keeping_the_rest() {
    let t = TestHome::empty();
    std::fs::write(t.config(), "# my settings\ntheme = \"none\"\n").unwrap();
    let (code, out, err) = run(
        &t,
        &[
            "hosts",
            "add",
            "gpu",
            "me@buildbox",
            "--port",
            "2222",
            "--dir",
            "~/src/app",
            "-o",
            "ProxyJump=bastion",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("added host gpu (me@buildbox:2222) to "),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(t.config()).unwrap(),
        "# my settings\ntheme = \"none\"\n\n[hosts.gpu]\ndestination = \"me@buildbox\"\nport = 2222\noptions = [\"ProxyJump=bastion\"]\ndir = \"~/src/app\"\n"
    );
    let (_, shown, _) = run(&t, &["config", "show"]);
    assert!(
        shown.contains("\n[hosts.gpu]\ndestination = \"me@buildbox\"\nport = 2222\noptions = [\"ProxyJump=bastion\"]\ndir = \"~/src/app\"\n"),
        "{shown}"
    );
    let (code, _, err) = run(&t, &["hosts", "add", "gpu", "other"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("a host `gpu` is already there"), "{err}");

    let (code, out, err) = run(&t, &["hosts", "remove", "gpu"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("removed host gpu from "), "{out}");
    assert_eq!(
        std::fs::read_to_string(t.config()).unwrap(),
        "# my settings\ntheme = \"none\"\n"
    );
    let (code, _, err) = run(&t, &["hosts", "remove", "gpu"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("error: no host `gpu` in "), "{err}");
}

#[test]
fn add_refuses_bad_names_destinations_and_options_writing_nothing() {
    let t = TestHome::empty();
    for (args, said) in [
        (vec!["Gpu", "me@box"], "`Gpu` is not a valid host name"),
        (
            vec!["gpu", "--", "-oProxyCommand=x"],
            "is not an ssh destination",
        ),
        (
            vec!["gpu", "me@box", "-o", "StrictHostKeyChecking=no"],
            "never turns host key checking off",
        ),
        (
            vec!["gpu", "me@box", "-o", "ControlPath=/x"],
            "set by teamlead itself",
        ),
        (
            vec!["gpu", "me@box", "--port", "0"],
            "--port 0 is not a port",
        ),
    ] {
        let mut all = vec!["hosts", "add"];
        all.extend(args.iter().copied());
        let (code, _, err) = run(&t, &all);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(said),
            "{args:?}: {err}"
        );
        assert!(!t.config().exists(), "nothing written for {args:?}");
    }
}

#[test]
fn a_bad_host_entry_names_the_file_line_and_key() {
    let t = TestHome::empty();
    let path = t.config().display().to_string();
    for (text, expected) in [
        (
            "theme = \"none\"\n\n[hosts.gpu]\ndestination = \"me@box\"\nport = 70000\n",
            format!("error: {path}:5: hosts.gpu.port: 70000 is not a port: give 1 to 65535\n"),
        ),
        (
            "[hosts.gpu]\ndestination = \"me@box\"\nuser = \"me\"\n",
            format!(
                "error: {path}:3: hosts.gpu.user: unknown field `user`, expected one of `destination`, `port`, `options`, `dir`, `home`, `claude`, `forward-model`\n"
            ),
        ),
        (
            "[hosts.gpu]\ndestination = \"me @box\"\n",
            format!(
                "error: {path}:2: hosts.gpu.destination: `me @box` is not an ssh destination: give [user@]host\n"
            ),
        ),
    ] {
        std::fs::write(t.config(), text).unwrap();
        let (code, out, err) = run(&t, &["hosts", "list"]);
        assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
        assert_eq!(err, expected);
    }
}

#[test]
fn list_without_hosts_says_how_to_add_one() {
    let t = TestHome::empty();
    let (code, out, _) = run(&t, &["hosts", "list"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "no hosts: `teamlead hosts add NAME [user@]host` adds one\n"
    );
    let (code, out, _) = run(&t, &["hosts", "list", "--json"]);
    assert_eq!((code, out.as_str()), (Some(0), "[]\n"));
}
