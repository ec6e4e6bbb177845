//! Tests of the composer language.

use super::*;

fn slash(text: &str) -> SlashCommand {
    match parse_input(text) {
        Ok(Input::Slash(c)) => c,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn spawn_with_flags_and_quoted_prompt() {
    assert_eq!(
        slash("/spawn builder --plan --mode acceptEdits \"build and test the parser\""),
        SlashCommand::Spawn {
            name: "builder".into(),
            plan_mode_required: true,
            mode: Some(PermissionMode::AcceptEdits),
            claude: false,
            worktree: false,
            host: None,
            prompt: "build and test the parser".into(),
        }
    );
    assert_eq!(
        slash("/spawn Tester run the --quick tests"),
        SlashCommand::Spawn {
            name: "Tester".into(),
            plan_mode_required: false,
            mode: None,
            claude: false,
            worktree: false,
            host: None,
            prompt: "run the --quick tests".into(),
        }
    );
    assert_eq!(
        slash("/spawn reviewer --agent claude --worktree review the diff"),
        SlashCommand::Spawn {
            name: "reviewer".into(),
            plan_mode_required: false,
            mode: None,
            claude: true,
            worktree: true,
            host: None,
            prompt: "review the diff".into(),
        }
    );
    assert_eq!(
        slash("/spawn builder --host gpu-box build it"),
        SlashCommand::Spawn {
            name: "builder".into(),
            plan_mode_required: false,
            mode: None,
            claude: false,
            worktree: false,
            host: Some("gpu-box".into()),
            prompt: "build it".into(),
        }
    );
    assert!(parse_input("/spawn builder --host").is_err());
    assert!(parse_input("/spawn builder --host Bad/Host go").is_err());
    assert!(parse_input("/spawn x --agent gpt go").is_err());
    assert!(parse_input("/spawn builder").is_err());
    assert!(parse_input("/spawn builder --mode yolo go").is_err());
    assert!(parse_input("/spawn builder \"unclosed").is_err());
}

#[test]
fn task_commands() {
    assert_eq!(
        slash("/task add count the lines --blocked-by 1,#2 --command \"wc -l *.txt\""),
        SlashCommand::TaskAdd {
            subject: "count the lines".into(),
            description: String::new(),
            blocked_by: vec!["1".into(), "2".into()],
            command: Some("wc -l *.txt".into()),
        }
    );
    assert_eq!(slash("/task list"), SlashCommand::TaskList);
    assert_eq!(
        slash("/task assign #3 @builder"),
        SlashCommand::TaskAssign {
            id: "3".into(),
            name: "builder".into()
        }
    );
    assert!(matches!(
        parse_input("/task add --blocked-by x y"),
        Err(CommandError::Invalid(_))
    ));
    assert!(matches!(
        parse_input("/task frob"),
        Err(CommandError::Unknown(_))
    ));
}

#[test]
fn task_edits_and_flags() {
    // The description is a flag, not part of the subject.
    assert_eq!(
        slash("/task add sub --description d"),
        SlashCommand::TaskAdd {
            subject: "sub".into(),
            description: "d".into(),
            blocked_by: vec![],
            command: None,
        }
    );
    assert_eq!(
        slash("/task add \"two words\" -d \"the details\""),
        SlashCommand::TaskAdd {
            subject: "two words".into(),
            description: "the details".into(),
            blocked_by: vec![],
            command: None,
        }
    );
    let err = parse_input("/task add sub --descripton d").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown option `--descripton` for /task add (use --description D, --blocked-by 1,2 or --command CMD)"
    );
    for (text, change) in [
        ("/task done 2", TaskChange::Done),
        ("/task reset #2", TaskChange::Reset),
        ("/task unassign 2", TaskChange::Unassign),
    ] {
        assert_eq!(
            slash(text),
            SlashCommand::TaskSet {
                id: "2".into(),
                change
            },
            "{text}"
        );
    }
    assert_eq!(
        parse_input("/task reset").unwrap_err().to_string(),
        "usage: /task reset ID"
    );
    assert_eq!(
        parse_input("/task done 2 --force").unwrap_err().to_string(),
        "unknown option `--force` for /task done (it takes a task ID only)"
    );
    assert_eq!(
        parse_input("/task unassign x").unwrap_err().to_string(),
        "`x` is not a task id (usage: /task unassign ID)"
    );
    assert_eq!(
        slash("/task edit 3 --subject \"new name\" --description \"\""),
        SlashCommand::TaskEdit {
            id: "3".into(),
            subject: Some("new name".into()),
            description: Some(String::new()),
        }
    );
    assert_eq!(
        slash("/task edit 3 -d more"),
        SlashCommand::TaskEdit {
            id: "3".into(),
            subject: None,
            description: Some("more".into()),
        }
    );
    assert_eq!(
        parse_input("/task edit 3").unwrap_err().to_string(),
        "nothing to change (usage: /task edit ID [--subject S] [--description D])"
    );
    assert_eq!(
        parse_input("/task edit 3 --owner x")
            .unwrap_err()
            .to_string(),
        "unknown option `--owner` for /task edit (use --subject S or --description D)"
    );
    assert!(parse_input("/task edit 3 --subject new name").is_err());
}

#[test]
fn messages_and_team_commands() {
    assert_eq!(
        slash("/msg @builder please  rerun\nthe tests"),
        SlashCommand::Msg {
            to: "builder".into(),
            text: "please  rerun\nthe tests".into()
        }
    );
    assert_eq!(
        slash("/broadcast stop"),
        SlashCommand::Broadcast {
            text: "stop".into()
        }
    );
    assert_eq!(
        slash("/shutdown all"),
        SlashCommand::Shutdown {
            target: ShutdownTarget::All,
            force: false
        }
    );
    assert_eq!(
        slash("/shutdown @builder --force"),
        SlashCommand::Shutdown {
            target: ShutdownTarget::One("builder".into()),
            force: true
        }
    );
    assert!(parse_input("/shutdown builder --now").is_err());
    assert_eq!(
        slash("/mode builder plan"),
        SlashCommand::Mode {
            name: "builder".into(),
            mode: PermissionMode::Plan,
            force: false
        }
    );
    assert_eq!(
        slash("/mode @builder bypassPermissions --force"),
        SlashCommand::Mode {
            name: "builder".into(),
            mode: PermissionMode::BypassPermissions,
            force: true
        }
    );
    assert_eq!(slash("/team delete"), SlashCommand::TeamDelete);
    assert_eq!(slash("/quit"), SlashCommand::Quit);
    assert_eq!(
        parse_input("/frobnicate"),
        Err(CommandError::Unknown("/frobnicate".into()))
    );
    assert_eq!(
        parse_input("/kill").unwrap_err().to_string(),
        "usage: /kill NAME"
    );
}

#[test]
fn mentions_and_plain_text() {
    assert_eq!(
        parse_input("@builder run it again").unwrap(),
        Input::Mention {
            to: "builder".into(),
            text: "run it again".into()
        }
    );
    assert_eq!(
        parse_input("hello team").unwrap(),
        Input::Plain("hello team".into())
    );
    assert_eq!(parse_input("   ").unwrap(), Input::Empty);
    assert!(help_text().contains("/spawn NAME"));
}

#[test]
fn the_table_is_the_one_source_of_the_parser_help_and_completion() {
    use super::table::{COMMANDS, Reader, ctl_lines, find};
    let help = help_text();
    let completion: Vec<&str> = slash_commands().iter().map(|(name, _)| *name).collect();
    let ctl = ctl_lines();
    for command in COMMANDS {
        assert!(
            help.contains(&command.help_line()),
            "{} in /help",
            command.name
        );
        assert!(
            completion.contains(&command.name),
            "{} completes",
            command.name
        );
        assert!(
            ctl.contains(command.usage),
            "{} in ctl --help",
            command.name
        );
        for spelling in std::iter::once(command.name).chain(command.aliases.iter().copied()) {
            let (found, _) = find(&spelling[1..]).expect(spelling);
            assert_eq!(found.name, command.name, "{spelling} finds its own entry");
            if let Reader::Bare(bare) = &command.read {
                assert_eq!(parse_input(spelling), Ok(Input::Slash(bare.clone())));
            }
        }
    }
    // A word after a command that takes none is refused, never ignored.
    assert_eq!(
        parse_input("/clean --all").unwrap_err().to_string(),
        "usage: /clean"
    );
    assert_eq!(
        parse_input("/team frob"),
        Err(CommandError::Unknown("/team frob".into()))
    );
    assert_eq!(parse_input("/TASK Add x").map(|_| ()), Ok(()));
}

#[test]
fn limits_commands() {
    let limits = |text: &str| match slash(text) {
        SlashCommand::Limits(c) => c,
        other => panic!("{text}: {other:?}"),
    };
    assert_eq!(limits("/limits"), LimitsCommand::Show);
    assert_eq!(limits("/limits resume on"), LimitsCommand::Resume(true));
    assert_eq!(limits("/limits resume off"), LimitsCommand::Resume(false));
    assert_eq!(limits("/limits resume now"), LimitsCommand::ResumeNow);
    assert_eq!(
        limits("/limits resume-until 02:00"),
        LimitsCommand::Until(chrono::NaiveTime::from_hms_opt(2, 0, 0))
    );
    assert_eq!(
        limits("/limits resume-until off"),
        LimitsCommand::Until(None)
    );
    for wrong in [
        "/limits resume",
        "/limits resume maybe",
        "/limits resume-until 2am",
        "/limits resume on now",
        "/limits stop",
    ] {
        assert_eq!(
            parse_input(wrong).unwrap_err().to_string(),
            "usage: /limits [resume on|off|now | resume-until HH:MM|off]",
            "{wrong}"
        );
    }
}
