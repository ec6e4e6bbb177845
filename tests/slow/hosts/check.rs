//! `teamlead hosts check` and `hosts install` against real test hosts (network namespaces
//! running sshd): each problem is one clear line and a non-zero exit, and nothing is written
//! on the host; a host set up right and given teamlead by `hosts install` passes.

use crate::cli_common::snapshot;
use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};

/// `hosts check h` on `host`: (exit code, stdout), and the host's HOME unchanged.
fn check_writes_nothing(lead: &TestLead, host: &TestHost) -> (i32, String) {
    let before = snapshot(host.home());
    let out = lead.cmd().args(["hosts", "check", "h"]).output().unwrap();
    assert_eq!(
        snapshot(host.home()),
        before,
        "hosts check wrote on the host"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("stdout:\n{stdout}stderr:\n{stderr}");
    (out.status.code().unwrap_or(-1), stdout)
}

fn failures(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.starts_with("FAIL")).collect()
}

#[test]
fn no_teamlead_on_the_host_is_one_line_and_fails() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("h", &host);
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 1);
    assert_eq!(
        failures(&stdout),
        ["FAIL  no teamlead on the host: run `teamlead hosts install h`"]
    );
    assert!(stdout.contains("ok    tmux: tmux"), "{stdout}");
}

#[test]
fn no_tmux_on_the_host_is_one_line_and_fails() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup { tmux: false });
    lead.trust(&host);
    lead.add_host("h", &host);
    // A teamlead of this version there: only tmux is missing.
    host.give_teamlead();
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 1);
    let failed = failures(&stdout);
    assert_eq!(failed.len(), 1, "{stdout}");
    assert!(failed[0].starts_with("FAIL  no tmux on the host: install it there"));
}

#[test]
fn a_key_the_host_refuses_is_auth_failed() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.know(&host); // the host's key is known, the lead's key is not authorized there
    lead.add_host("h", &host);
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 1);
    let failed = failures(&stdout);
    assert_eq!(failed.len(), 1, "{stdout}");
    assert!(
        failed[0].starts_with(&format!("FAIL  auth failed for {}", host.destination())),
        "{stdout}"
    );
}

#[test]
fn an_unknown_host_key_is_never_accepted() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    host.authorize(&lead.public_key); // the lead may log in, but has never seen the host's key
    lead.add_host("h", &host);
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 1);
    let failed = failures(&stdout);
    assert_eq!(failed.len(), 1, "{stdout}");
    assert!(
        failed[0].starts_with(&format!(
            "FAIL  host key unknown for {}: run `ssh {}` once yourself",
            host.destination(),
            host.destination()
        )),
        "{stdout}"
    );
    assert!(
        !host.sshd_log().contains("Accepted publickey"),
        "nobody logged in: {}",
        host.sshd_log()
    );
}

#[test]
fn a_wrong_teamlead_version_says_to_install() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("h", &host);
    let bin = host.home().join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let old = bin.join("teamlead");
    std::fs::write(&old, "#!/bin/sh\necho 'teamlead 0.0.1'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 1);
    let failed = failures(&stdout);
    assert_eq!(failed.len(), 1, "{stdout}");
    assert!(
        failed[0].starts_with("FAIL  wrong teamlead version on the host: 0.0.1 at ")
            && failed[0].ends_with("run `teamlead hosts install h`"),
        "{stdout}"
    );
}

#[test]
fn install_then_check_passes() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("h", &host);
    let out = lead
        .cmd()
        .args(["hosts", "install", "h"])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        said.starts_with(&format!("installed teamlead {}", env!("CARGO_PKG_VERSION"))),
        "{said}"
    );
    let installed = host.home().join(".local/bin/teamlead");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_teamlead")).unwrap(),
        "this very binary is on the host"
    );
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 0, "{stdout}");
    assert!(failures(&stdout).is_empty(), "{stdout}");
    assert!(stdout.ends_with("host h is ready\n"), "{stdout}");
}

#[test]
fn an_unreachable_host_is_one_line_and_fails() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("h", &host);
    host.set_link(false);
    let started = std::time::Instant::now();
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(code, 1);
    let failed = failures(&stdout);
    assert_eq!(failed.len(), 1, "{stdout}");
    assert!(
        failed[0].starts_with(&format!("FAIL  host unreachable: {}: ", host.destination())),
        "{stdout}"
    );
}

#[test]
fn a_missing_working_directory_is_one_line_and_fails() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.cmd()
        .args([
            "hosts",
            "add",
            "h",
            &host.destination(),
            "--dir",
            "~/src/app",
        ])
        .assert()
        .success();
    host.give_teamlead();
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 1);
    assert_eq!(
        failures(&stdout),
        [
            "FAIL  dir ~/src/app does not exist on the host: make it there, or change `dir` of [hosts.h]"
        ]
    );
    std::fs::create_dir_all(host.home().join("src/app")).unwrap();
    let (code, stdout) = check_writes_nothing(&lead, &host);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("ok    dir: ~/src/app\n"), "{stdout}");
}
