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
            prompt: "review the diff".into(),
        }
    );
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
            target: ShutdownTarget::All
        }
    );
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
