//! `teamlead config path|show|init`, and the config file as the session uses it: its defaults
//! under the command line's flags, its `[keys]` turned into the UI's keymap, its `theme` into
//! the UI's colours. Every problem is one error naming the file, the line and the key.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

use color_eyre::eyre::{Result, WrapErr, bail, eyre};

use super::args::{ConfigArgs, ConfigCommand, ThemeChoice};
use crate::config::{self, Config, Theme};
use crate::ui::colors::ColorMode;
use crate::ui::keymap::{Context, KeyOverride, Keymap, Row};

/// The config file of this process, its deprecation note (the old JSON file) on stderr.
pub fn load() -> Result<Config> {
    let config = Config::load()?;
    if let Some(note) = &config.deprecation {
        tracing::warn!("{note}");
        let _ = writeln!(std::io::stderr(), "teamlead: {note}");
    }
    Ok(config)
}

/// The prices in force: the built-in table under the config file's `[prices]` (a config file
/// that cannot be read is said on stderr, and the built-in table used).
pub fn prices_in_force() -> std::sync::Arc<crate::protocol::pricing::PriceTable> {
    let table = crate::protocol::pricing::PriceTable::built_in();
    match Config::load() {
        Ok(config) => std::sync::Arc::new(table.with_overrides(&config.prices)),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "teamlead: {e}; the built-in prices are used"
            );
            std::sync::Arc::new(table)
        }
    }
}

/// The keymap with the file's `[keys]`.
pub fn keymap(config: &Config) -> Result<Keymap> {
    let overrides: Vec<KeyOverride> = config
        .keys
        .iter()
        .map(|k| KeyOverride {
            context: k.context.clone(),
            action: k.action.clone(),
            keys: k.keys.clone(),
        })
        .collect();
    Keymap::default()
        .with_overrides(&overrides)
        .map_err(|(index, why)| eyre!(config.key_error(index, &why)))
}

/// The colours: the flag, else the file's `theme`, else the environment.
pub fn colors(flag: Option<ThemeChoice>, config: &Config) -> ColorMode {
    let theme = flag.map(ThemeChoice::theme).or(config.theme);
    match theme {
        Some(Theme::Full) => ColorMode::Full,
        Some(Theme::Basic) => ColorMode::Basic,
        Some(Theme::None) => ColorMode::None,
        Some(Theme::Auto) | None => ColorMode::from_process(),
    }
}

/// `teamlead config …`.
pub fn run(args: &ConfigArgs) -> Result<()> {
    let path = config::path().ok_or_else(|| eyre!("no config directory: set TEAMLEAD_CONFIG"))?;
    let mut out = super::output::Out::new();
    match args.command {
        ConfigCommand::Path => out.raw(format!("{}\n", path.display()))?,
        ConfigCommand::Show => {
            let config = load()?;
            let keymap = keymap(&config)?;
            out.raw(show(&config, &keymap))?;
        }
        ConfigCommand::Init => {
            if let Some(dir) = path.parent() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)
                    .wrap_err_with(|| format!("cannot create {}", dir.display()))?;
            }
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            let mut file = match file {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    bail!(
                        "{} already exists: not overwritten (`teamlead config show` prints what it sets)",
                        path.display()
                    )
                }
                Err(e) => {
                    return Err(e).wrap_err_with(|| format!("cannot create {}", path.display()));
                }
            };
            file.write_all(config::EXAMPLE.as_bytes())
                .wrap_err_with(|| format!("cannot write {}", path.display()))?;
            out.raw(format!("wrote {}\n", path.display()))?;
        }
    }
    Ok(())
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// `"x"` or `["↑", "k"]`.
fn keys_value(row: &Row) -> String {
    let keys: Vec<String> = row.keys.iter().map(|k| quoted(&k.label())).collect();
    if keys.len() == 1 {
        keys[0].clone()
    } else {
        format!("[{}]", keys.join(", "))
    }
}

/// The `[keys.*]` tables of a keymap, one line per action (`prefix` before each, `# ` in the
/// example), with its description.
pub fn keys_block(keymap: &Keymap, prefix: &str) -> String {
    let mut out = String::new();
    for context in Context::ALL.into_iter().filter(|c| *c != Context::Tasks) {
        out.push_str(&format!("\n[keys.{}]\n", context.name()));
        for row in keymap.rows().iter().filter(|r| r.context == context) {
            let line = format!("{prefix}{} = {}", row.action.name(), keys_value(row));
            out.push_str(&format!("{line:<40} # {}\n", row.what));
        }
    }
    out
}

/// What is in force, as a config file.
fn show(config: &Config, keymap: &Keymap) -> String {
    let from = match &config.path {
        Some(p) if !config.text.is_empty() || config.deprecation.is_some() => {
            format!("# read from {}", p.display())
        }
        Some(p) => format!("# {} does not exist: the defaults", p.display()),
        None => "# no config file: the defaults".to_string(),
    };
    let opt = |v: Option<String>, default: &str| v.unwrap_or_else(|| quoted(default));
    let name = |key: &str, v: Option<String>| match v {
        Some(m) => format!("{key} = {}\n", quoted(&m)),
        None => format!("# {key} is not set\n"),
    };
    let debug = |d: String| quoted(&kebab(&d));
    let mut out = format!("{from}\n");
    out.push_str(&format!(
        "backend = {}\n",
        opt(config.backend.map(|b| quoted(b.as_str())), "auto")
    ));
    out.push_str(&format!(
        "agent = {}\n",
        opt(config.agent.map(|b| debug(format!("{b:?}"))), "builtin")
    ));
    out.push_str(&format!(
        "engine = {}\n",
        opt(config.engine.map(|b| debug(format!("{b:?}"))), "shell")
    ));
    out.push_str(&name("model", config.model.clone()));
    out.push_str(&name("lead-model", config.lead_model.clone()));
    out.push_str(&format!(
        "worktree = {}\n",
        config.worktree.unwrap_or(false)
    ));
    out.push_str(&format!(
        "theme = {}\n",
        opt(config.theme.map(|b| debug(format!("{b:?}"))), "auto")
    ));
    out.push_str(&format!(
        "server-idle-exit = {}\n",
        quoted(
            &config
                .server_idle_exit
                .map(|d| humantime::format_duration(d).to_string())
                .unwrap_or_else(|| "off".to_string())
        )
    ));
    out.push_str(&format!(
        "web-allow = {}\n",
        quoted(
            config
                .web_allow
                .as_deref()
                .unwrap_or(crate::web::DEFAULT_ALLOW)
        )
    ));
    out.push_str(&keys_block(keymap, ""));
    for host in &config.hosts {
        out.push_str(&format!(
            "\n[hosts.{}]\ndestination = {}\n",
            host.name,
            quoted(&host.destination)
        ));
        if let Some(port) = host.port {
            out.push_str(&format!("port = {port}\n"));
        }
        if !host.options.is_empty() {
            let options: Vec<String> = host.options.iter().map(|o| quoted(o)).collect();
            out.push_str(&format!("options = [{}]\n", options.join(", ")));
        }
        for (key, value) in [("dir", &host.dir), ("home", &host.home)] {
            if let Some(value) = value {
                out.push_str(&format!("{key} = {}\n", quoted(value)));
            }
        }
    }
    if let Some(llm) = &config.llm {
        out.push_str("\n[llm]\n");
        let mut line = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                out.push_str(&format!("{k} = {v}\n"));
            }
        };
        line("provider", llm.provider.as_deref().map(quoted));
        line("base_url", llm.base_url.as_deref().map(quoted));
        line("model", llm.model.as_deref().map(quoted));
        line("api_key_env", llm.api_key_env.as_deref().map(quoted));
        line("max_tokens", llm.max_tokens.map(|v| v.to_string()));
        line("context_tokens", llm.context_tokens.map(|v| v.to_string()));
        line("keep_exchanges", llm.keep_exchanges.map(|v| v.to_string()));
        line("prompt_caching", llm.prompt_caching.map(|v| v.to_string()));
        if let Some(retry) = &llm.retry {
            out.push_str("\n[llm.retry]\n");
            for (k, v) in [
                ("max_attempts", retry.max_attempts.map(u64::from)),
                ("base_delay_ms", retry.base_delay_ms),
                ("max_delay_ms", retry.max_delay_ms),
            ] {
                if let Some(v) = v {
                    out.push_str(&format!("{k} = {v}\n"));
                }
            }
        }
    }
    out
}

/// `InProcess` → `in-process`.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_lists_every_key_with_its_default() {
        let block = keys_block(&Keymap::default(), "# ");
        assert!(
            config::EXAMPLE.contains(&block),
            "assets/config.example.toml must hold this block:\n{block}"
        );
    }

    #[test]
    fn show_prints_a_config_that_reads_back() {
        let config = Config::parse(
            std::path::Path::new("/c/config.toml"),
            "backend = \"in-process\"\n[keys.teams]\nkill = \"K\"\n[llm]\nmodel = \"opus\"\n[llm.retry]\nmax_attempts = 2\n".to_string(),
        )
        .unwrap();
        let map = keymap(&config).unwrap();
        let text = show(&config, &map);
        assert!(text.contains("backend = \"in-process\""), "{text}");
        assert!(text.contains("kill = \"K\""), "{text}");
        let back = Config::parse(std::path::Path::new("/c/shown.toml"), text.clone()).unwrap();
        assert_eq!(back.backend, config.backend);
        assert_eq!(keymap(&back).unwrap(), map, "{text}");
        assert_eq!(back.llm, config.llm);
    }
}
