//! "Always" means exactly what it says: the rules proposed for a Bash command (by a teamlead
//! teammate's gate and by the lead's dialog) never allow a command the person did not see.
//! A corpus of benign and hostile commands (`tests/fixtures/shell-corpus/`), the two reported
//! cases through the real gate, teammates' unsafe suggestions, and property tests.

use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use teamlead::agent::gate::rules::SessionRules;
use teamlead::agent::gate::{PermissionGate, ToolUse, Verdict};
use teamlead::protocol::PermissionMode;
use teamlead::protocol::permission::{PermissionRule, PermissionUpdate, fallback_update};

fn corpus(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/shell-corpus")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.replace("<NL>", "\n")
                .replace("<TAB>", "\t")
                .replace("<CR>", "\r")
        })
        .collect()
}

fn bash(command: &str) -> ToolUse {
    ToolUse::Bash {
        command: command.to_string(),
        description: String::new(),
    }
}

/// The rules the lead's dialog would add for `command` when the person chooses "always".
fn lead_rules(command: &str) -> SessionRules {
    let mut rules = SessionRules::default();
    let updates: Vec<PermissionUpdate> = fallback_update("Bash", &json!({ "command": command }))
        .into_iter()
        .collect();
    rules.apply(&updates, Path::new("/w"));
    rules
}

/// A teammate's gate after the person accepted its suggestion for `command`.
fn gate_after_always(command: &str) -> PermissionGate {
    let mut gate = PermissionGate::new(PermissionMode::Default, "/w");
    let request = gate.request("builder", &bash(command));
    gate.apply_updates(&request.suggestions());
    gate
}

#[test]
fn the_corpus_is_large_enough() {
    let (benign, hostile) = (corpus("benign.txt"), corpus("hostile.txt"));
    assert!(benign.len() + hostile.len() >= 300);
    assert!(benign.len() >= 150 && hostile.len() >= 150);
}

#[test]
fn no_rule_proposed_for_a_benign_command_allows_a_hostile_one() {
    let hostile = corpus("hostile.txt");
    let mut failures = Vec::new();
    for benign in corpus("benign.txt") {
        let lead = lead_rules(&benign);
        let gate = gate_after_always(&benign);
        for h in &hostile {
            if *h == benign {
                continue;
            }
            if lead.allows_bash(h) || gate.check(&bash(h)) == Verdict::Allow {
                failures.push(format!(
                    "{:?} (rules {:?}) allows {h:?}",
                    benign, lead.allow
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} hostile commands allowed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_rule_proposed_for_a_benign_command_allows_it() {
    for benign in corpus("benign.txt") {
        let gate = gate_after_always(&benign);
        let offered = !gate.rules().allow.is_empty();
        assert_eq!(
            offered,
            gate.check(&bash(&benign)) == Verdict::Allow,
            "{benign:?}: {:?}",
            gate.rules().allow
        );
        assert_eq!(lead_rules(&benign).allow, gate.rules().allow, "{benign:?}");
    }
}

#[test]
fn the_reported_cases_through_the_real_gate() {
    let gate = gate_after_always("env X=1 true");
    assert_eq!(gate.check(&bash("env X=1 true")), Verdict::Allow);
    assert_eq!(gate.check(&bash("env rm -f victim")), Verdict::Ask);
    assert!(
        !gate
            .rules()
            .allow
            .iter()
            .any(|r| r.rule_content.as_deref() == Some("env:*"))
    );

    let gate = gate_after_always("echo a > out1");
    assert_eq!(gate.check(&bash("echo a > out1")), Verdict::Allow);
    assert_eq!(gate.check(&bash("echo pwned > other")), Verdict::Ask);
    assert_eq!(gate.check(&bash("echo pwned")), Verdict::Ask);

    // The lead's dialog, for a request without suggestions, offers the same.
    for command in ["env X=1 true", "echo a > out1"] {
        assert_eq!(
            fallback_update("Bash", &json!({ "command": command })),
            Some(PermissionUpdate::allow_session(PermissionRule {
                tool_name: "Bash".into(),
                rule_content: Some(command.into()),
            }))
        );
    }
}

#[test]
fn a_safe_prefix_rule_does_not_match_what_its_words_do_not_show() {
    let mut gate = PermissionGate::new(PermissionMode::Default, "/w");
    gate.apply_updates(&[PermissionUpdate::allow_session(PermissionRule {
        tool_name: "Bash".into(),
        rule_content: Some("git status:*".into()),
    })]);
    assert_eq!(gate.check(&bash("git status --short")), Verdict::Allow);
    for c in [
        "git status; rm -rf ~",
        "git status > /etc/x",
        "git status $(curl evil.example)",
        "git status\nrm x",
        "git status & rm x",
    ] {
        assert_eq!(gate.check(&bash(c)), Verdict::Ask, "{c:?}");
    }
}

#[test]
fn teammates_unsafe_suggestions_are_not_offered() {
    for content in [
        "env:*",
        "sudo:*",
        "bash:*",
        "xargs:*",
        "find:*",
        "python3:*",
        "cd:*",
        "echo:* ",
        "git:*",
    ] {
        let update = PermissionUpdate::allow_session(PermissionRule {
            tool_name: "Bash".into(),
            rule_content: Some(content.into()),
        });
        let safe = content == "echo:* ";
        assert_eq!(update.is_offerable(), safe, "{content}");
    }
    let any = PermissionUpdate::allow_session(PermissionRule {
        tool_name: "Bash".into(),
        rule_content: None,
    });
    assert!(!any.is_offerable());
}

/// Commands the property tests build: a safe-looking command name and plain arguments.
fn plain_command() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "ls",
        "cat",
        "cargo test",
        "cargo build",
        "git status",
        "git diff",
        "echo",
        "grep",
        "make build",
        "./run.sh",
        "mkdir",
        "npm test",
        "wc",
    ]);
    let arg = prop_oneof![
        "[a-zA-Z0-9_.][a-zA-Z0-9_./-]{0,8}",
        "-[a-zA-Z]{1,3}",
        "'[a-z ;&|<>]{0,6}'",
        "\"[a-z ;&|]{0,6}\"",
    ];
    (name, prop::collection::vec(arg, 0..4)).prop_map(|(name, args)| {
        let mut c = name.to_string();
        for a in args {
            c.push(' ');
            c.push_str(&a);
        }
        c
    })
}

/// What could be added to a command to write elsewhere or run something more.
fn addition() -> impl Strategy<Value = (bool, String)> {
    let evil = prop::sample::select(vec!["rm -rf victim", "curl evil.example", "evilcmd x"]);
    let target = prop::sample::select(vec!["other", "/etc/passwd", "../out", "~/.bashrc"]);
    prop_oneof![
        (
            prop::sample::select(vec![">", ">>", "2>", "&>", ">|", "<", "1>"]),
            target.clone()
        )
            .prop_map(|(op, t)| (false, format!(" {op} {t}"))),
        (
            prop::sample::select(vec!["; ", " && ", " || ", " | ", "\n", " & ", ";"]),
            evil.clone()
        )
            .prop_map(|(op, e)| (false, format!("{op}{e}"))),
        evil.clone().prop_map(|e| (false, format!(" $({e})"))),
        evil.clone().prop_map(|e| (false, format!(" `{e}`"))),
        evil.clone().prop_map(|e| (false, format!(" <({e})"))),
        evil.clone().prop_map(|e| (false, format!(" \"$({e})\""))),
        Just((false, " &".to_string())),
        Just((false, " $HOME".to_string())),
        Just((false, " /etc/*".to_string())),
        prop::sample::select(vec!["LD_PRELOAD=/tmp/x.so ", "PATH=/tmp ", "X=1 "])
            .prop_map(|v| (true, v.to_string())),
        prop::sample::select(vec!["env ", "sudo ", "timeout 5 ", "nice ", "command "])
            .prop_map(|v| (true, v.to_string())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_proposed_rule_allows_its_command_and_nothing_added_to_it(
        command in plain_command(),
        (before, added) in addition(),
    ) {
        let gate = gate_after_always(&command);
        prop_assert!(!gate.rules().allow.is_empty(), "no rule for {command:?}");
        prop_assert_eq!(gate.check(&bash(&command)), Verdict::Allow, "{:?}", gate.rules().allow);
        let longer = if before { format!("{added}{command}") } else { format!("{command}{added}") };
        prop_assert_eq!(
            gate.check(&bash(&longer)),
            Verdict::Ask,
            "{:?} allows {:?}",
            gate.rules().allow,
            longer
        );
        prop_assert!(!lead_rules(&command).allows_bash(&longer));
    }

    #[test]
    fn reading_never_panics_and_unreadable_commands_get_no_prefix(command in "\\PC{0,40}") {
        if let Some(PermissionUpdate::AddRules { rules, .. }) =
            fallback_update("Bash", &json!({ "command": command }))
        {
            {
                for r in rules {
                    let c = r.rule_content.unwrap_or_default();
                    prop_assert!(c == command.trim() || c.ends_with(":*"), "{c:?}");
                }
            }
        }
    }
}

/// By hand (`cargo test --test fast agent::shell_rules::timing -- --ignored --nocapture`): the rules
/// proposed for each benign command, and what reading a command and checking it against the
/// rules costs per request.
#[test]
#[ignore]
fn timing() {
    use std::time::Instant;
    use teamlead::protocol::permission::bash::suggested_rule_contents;
    let benign = corpus("benign.txt");
    let hostile = corpus("hostile.txt");
    for c in &benign {
        println!("{c:?}\t{:?}", suggested_rule_contents(c));
    }
    let all: Vec<&String> = benign.iter().chain(hostile.iter()).collect();
    let rounds = 20;
    let start = Instant::now();
    for _ in 0..rounds {
        for c in &all {
            std::hint::black_box(suggested_rule_contents(c));
        }
    }
    let propose = start.elapsed() / (rounds * all.len() as u32);
    let gate = gate_after_always("cargo test -p parser && git status && ls -la | wc -l");
    let start = Instant::now();
    for _ in 0..rounds {
        for c in &all {
            std::hint::black_box(gate.check(&bash(c)));
        }
    }
    let check = start.elapsed() / (rounds * all.len() as u32);
    println!("TIMING propose {propose:?} per command, gate check {check:?} per command (4 rules)");
}
