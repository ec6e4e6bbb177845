//! Tests of the config file: the example parses, errors name the file, line and key, the old
//! JSON file is still read.

use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(Path::new("/c/config.toml"), text.to_string())
}

#[test]
fn the_example_parses_to_the_defaults() {
    let config = parse(EXAMPLE).unwrap();
    assert_eq!(config.backend, None);
    assert!(config.keys.is_empty(), "every key is commented out");
    let llm = config.llm.unwrap_or_default();
    assert_eq!(llm.retry.clone().unwrap_or_default(), FileRetry::default());
    assert_eq!(
        FileSettings { retry: None, ..llm },
        FileSettings::default(),
        "every [llm] key is commented out"
    );
}

#[test]
fn settings_and_keys_are_read() {
    let config = parse(
        "backend = \"in-process\"\nworktree = true\ntheme = \"none\"\n\n[keys.teams]\nkill = \"K\"\nup = [\"up\", \"k\"]\n\n[llm]\nmodel = \"opus\"\n",
    )
    .unwrap();
    assert_eq!(
        config.backend,
        Some(BackendRequest::Kind(
            crate::protocol::BackendKind::InProcess
        ))
    );
    assert_eq!(config.worktree, Some(true));
    assert_eq!(config.theme, Some(Theme::None));
    assert_eq!(config.keys.len(), 2);
    let kill = config.keys.iter().find(|k| k.action == "kill").unwrap();
    assert_eq!(
        (kill.context.as_str(), kill.keys.clone()),
        ("teams", vec!["K".to_string()])
    );
    assert_eq!(
        config.key_error(0, "bad").to_string(),
        "/c/config.toml:6: keys.teams.kill: bad"
    );
    assert_eq!(config.llm.unwrap().model.as_deref(), Some("opus"));
}

#[test]
fn errors_name_the_file_line_and_key() {
    let err = |t: &str| parse(t).unwrap_err().to_string();
    let e = err("backend = \"tmux\"\ncolour = \"red\"\n");
    assert!(
        e.starts_with("/c/config.toml:2: colour: unknown field `colour`"),
        "{e}"
    );
    let e = err("# comment\nbackend = \"tmuxx\"\n");
    assert!(
        e.starts_with("/c/config.toml:2: backend: unknown variant `tmuxx`"),
        "{e}"
    );
    let e = err("[llm]\nmodel = \"x\"\napi_key = \"sk-secret\"\n");
    assert!(
        e.starts_with("/c/config.toml:3: llm.api_key: unknown field `api_key`"),
        "{e}"
    );
    assert!(!e.contains("sk-secret"), "{e}");
    let e = err("worktree = yes\n");
    assert!(e.starts_with("/c/config.toml:1: worktree: "), "{e}");
    let e = err("[keys.teams]\nkill = 3\n");
    assert!(e.starts_with("/c/config.toml:2: keys.teams.kill: "), "{e}");
    assert_eq!(e.lines().count(), 1);
}

#[test]
fn the_old_json_file_is_still_read_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("config.json");
    std::fs::write(
        &json,
        r#"{"llm": {"provider": "anthropic", "model": "sonnet"}, "other": 1}"#,
    )
    .unwrap();
    let config = load_legacy(&json).unwrap();
    assert_eq!(config.llm.unwrap().provider.as_deref(), Some("anthropic"));
    let note = config.deprecation.unwrap();
    assert!(
        note.contains("config.json is deprecated") && note.contains("config.toml"),
        "{note}"
    );
    std::fs::write(&json, r#"{"llm": {"api_key": "sk-inline"}}"#).unwrap();
    let err = load_legacy(&json).unwrap_err().to_string();
    assert!(err.contains("unknown field"), "{err}");
    assert!(!err.contains("sk-inline"), "{err}");
    // A missing TOML file beside it: the JSON one is read (unless a file was named).
    std::fs::write(&json, r#"{"llm": {"model": "haiku"}}"#).unwrap();
    let missing = dir.path().join("config.toml");
    let config = Config::load_from(&missing, true).unwrap();
    assert_eq!(config.llm.unwrap().model.as_deref(), Some("haiku"));
    assert!(config.deprecation.is_some());
    let config = Config::load_from(&missing, false).unwrap();
    assert_eq!((config.llm, config.deprecation), (None, None));
    std::fs::write(&missing, "model = \"opus\"\n").unwrap();
    let config = Config::load_from(&missing, true).unwrap();
    assert_eq!(config.model.as_deref(), Some("opus"));
    assert_eq!(config.deprecation, None, "the TOML file wins");
}

#[test]
fn prices_and_the_shutdown_timeout_are_read_and_checked() {
    let config = parse(
        "shutdown-timeout = 12.5\nshutdown-force = true\n\n[prices.\"my-model\"]\ninput = 2.0\noutput = 8.0\ncache-read = 0.2\n",
    )
    .unwrap();
    assert_eq!(
        config.shutdown_timeout,
        Some(std::time::Duration::from_millis(12_500))
    );
    assert_eq!(config.shutdown_force, Some(true));
    let table = crate::protocol::pricing::PriceTable::built_in().with_overrides(&config.prices);
    let price = table.price("my-model-7").unwrap();
    assert_eq!(
        (price.input, price.output, price.cache_read),
        (2.0, 8.0, 0.2)
    );
    assert!(parse("shutdown-timeout = 0\n").is_err());
    assert!(parse("[prices.\"x\"]\ninput = -1.0\noutput = 1.0\n").is_err());
    assert!(
        parse("[prices.\"x\"]\ninput = 1.0\n").is_err(),
        "output is needed"
    );
    assert!(parse("[prices.\"x\"]\ninput = 1.0\noutput = 1.0\ncache = 1\n").is_err());
    assert!(parse("[prices.\"x\"]\ninput = 1.0\noutput = 1.0\ncache-write-1h = -2\n").is_err());
    let config = parse(
        "[prices.\"x\"]\ninput = 1.0\noutput = 1.0\ncache-write-5m = 3\ncache-write-1h = 4\n",
    )
    .unwrap();
    let table = crate::protocol::pricing::PriceTable::built_in().with_overrides(&config.prices);
    let row = table.price("x").unwrap();
    assert_eq!((row.cache_write_5m, row.cache_write_1h), (3.0, 4.0));
}

#[test]
fn budgets_are_dollars_more_than_zero() {
    let config = parse("budget-teammate = 5.0\nbudget-team = 20\n").expect("parses");
    assert_eq!(config.budget_teammate, Some(5_000_000));
    assert_eq!(config.budget_team, Some(20_000_000));
    let e = parse("budget-team = 0\n").unwrap_err().to_string();
    assert!(
        e.contains("budget-team = 0: give dollars, more than 0"),
        "{e}"
    );
    assert!(parse("budget-teammate = -1.5\n").is_err());
}

#[test]
fn resuming_after_a_limit_and_its_cut_off() {
    let config = parse("resume-after-limit = true\nresume-until = \"02:00\"\n").expect("parses");
    assert_eq!(config.resume_after_limit, Some(true));
    assert_eq!(
        config.resume_until,
        chrono::NaiveTime::from_hms_opt(2, 0, 0)
    );
    let e = parse("resume-until = \"2am\"\n").unwrap_err().to_string();
    assert!(
        e.contains("resume-until = \"2am\": give a clock time as HH:MM"),
        "{e}"
    );
    // The example's lines, uncommented, are what they say.
    let uncommented: String = EXAMPLE
        .lines()
        .filter(|l| l.starts_with("# resume-"))
        .map(|l| format!("{}\n", &l[2..]))
        .collect();
    let config = parse(&uncommented).expect("the example's lines parse");
    assert_eq!(config.resume_after_limit, Some(true));
    assert!(config.resume_until.is_some());
}

#[test]
fn the_server_idle_limit_is_a_duration_or_off() {
    let hours = |h: u64| Some(std::time::Duration::from_secs(h * 3600));
    assert_eq!(parse("").unwrap().server_idle_exit, None, "off by default");
    assert_eq!(
        parse("server-idle-exit = \"8h\"\n")
            .unwrap()
            .server_idle_exit,
        hours(8)
    );
    assert_eq!(
        parse("server-idle-exit = \"1h 30m\"\n")
            .unwrap()
            .server_idle_exit,
        Some(std::time::Duration::from_secs(5400))
    );
    assert_eq!(
        parse("server-idle-exit = \"off\"\n")
            .unwrap()
            .server_idle_exit,
        None
    );
    for bad in ["\"0s\"", "\"soon\"", "\"9999 years\"", "8"] {
        let e = parse(&format!("server-idle-exit = {bad}\n"))
            .expect_err(bad)
            .to_string();
        assert!(e.contains("server-idle-exit"), "{e}");
    }
    let e = parse("server-idle-exit = \"8 hours later\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("like \"8h\""), "{e}");
}

#[test]
fn hosts_are_read_and_checked() {
    let config = parse(
        "[hosts.gpu]\ndestination = \"me@box\"\nport = 2222\noptions = [\"ProxyJump=bastion\"]\ndir = \"~/src\"\nhome = \"~/.claude\"\nclaude = \"~/bin/claude\"\nforward-model = true\n\n[hosts.lab]\ndestination = \"lab\"\n",
    )
    .unwrap();
    assert_eq!(
        config.hosts,
        vec![
            HostConfig {
                name: "gpu".into(),
                destination: "me@box".into(),
                port: Some(2222),
                options: vec!["ProxyJump=bastion".into()],
                dir: Some("~/src".into()),
                home: Some("~/.claude".into()),
                claude: Some("~/bin/claude".into()),
                forward_model: true,
            },
            HostConfig {
                name: "lab".into(),
                destination: "lab".into(),
                port: None,
                options: vec![],
                dir: None,
                home: None,
                claude: None,
                forward_model: false,
            },
        ]
    );
    let err = |t: &str| parse(t).unwrap_err().to_string();
    assert_eq!(
        err("\n[hosts.Big]\ndestination = \"x\"\n"),
        "/c/config.toml:2: hosts.Big: `Big` is not a valid host name: use lower-case letters, digits and `-` (at most 64, not starting with `-`)"
    );
    assert_eq!(
        err("[hosts.a]\ndestination = \"x\"\noptions = [\"BatchMode=no\"]\n"),
        "/c/config.toml:3: hosts.a.options: `BatchMode` is set by teamlead itself (one private connection per host)"
    );
    assert!(err("[hosts.a]\nport = 22\n").contains("missing field `destination`"));
}

#[test]
fn push_takes_a_url_a_variable_name_and_a_duration() {
    let push = parse("[push]\nurl = \"https://ntfy.sh/my-team\"\ntoken-env = \"NTFY_TOKEN\"\n")
        .unwrap()
        .push
        .unwrap();
    assert_eq!(push.url, "https://ntfy.sh/my-team");
    assert_eq!(push.token_env.as_deref(), Some("NTFY_TOKEN"));
    assert_eq!(
        push.after,
        std::time::Duration::from_secs(30),
        "30 s by default"
    );
    let push = parse("[push]\nurl = \"http://10.0.0.2/t\"\nafter = \"2m\"\n")
        .unwrap()
        .push
        .unwrap();
    assert_eq!(push.after, std::time::Duration::from_secs(120));
    for (bad, says) in [
        ("[push]\nurl = \"ntfy.sh/x\"\n", "push.url"),
        (
            "[push]\nurl = \"https://x\"\nweb-url = \"x\"\n",
            "push.web-url",
        ),
        (
            "[push]\nurl = \"https://x\"\ntoken-env = \"tk_abc def\"\n",
            "push.token-env",
        ),
        (
            "[push]\nurl = \"https://x\"\nafter = \"soon\"\n",
            "push.after",
        ),
        ("[push]\nurl = \"https://x\"\ntoken = \"secret\"\n", "token"),
    ] {
        let err = parse(bad).unwrap_err().to_string();
        assert!(err.contains(says), "{bad:?}: {err}");
    }
}
