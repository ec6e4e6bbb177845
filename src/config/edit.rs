//! Changes to the config file made by commands (`teamlead hosts add|remove`): the file is
//! edited as a TOML document, so its comments, order and layout stay as the person wrote them;
//! the result must read back as a valid config before it replaces the file (written beside it,
//! then renamed, mode 0600).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use super::{Config, ConfigError, HostConfig};

/// The file's text as a document (a missing file is an empty one); the file must be valid now.
fn document(path: &Path) -> Result<toml_edit::DocumentMut, ConfigError> {
    let text = super::read(path)?.unwrap_or_default();
    Config::parse(path, text.clone())?;
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| ConfigError::read(path, e.to_string()))
}

/// Writes `doc` to `path` once it reads back as a valid config.
fn write(path: &Path, doc: &toml_edit::DocumentMut) -> Result<(), ConfigError> {
    let text = doc.to_string();
    Config::parse(path, text.clone())?;
    let fail = |e: std::io::Error| ConfigError::read(path, format!("cannot write: {e}"));
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(fail)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(fail(e));
    }
    Ok(())
}

/// Adds `[hosts.NAME]` to the file at `path`; a host of that name already there is an error.
pub fn add_host(path: &Path, host: &HostConfig) -> Result<(), ConfigError> {
    use toml_edit::{Array, Item, Table, value};
    let mut doc = document(path)?;
    let hosts = doc
        .entry("hosts")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| ConfigError::read(path, "`hosts` is not a table".to_string()))?;
    if hosts.contains_key(&host.name) {
        return Err(ConfigError::read(
            path,
            format!(
                "a host `{}` is already there (`teamlead hosts remove {}` first)",
                host.name, host.name
            ),
        ));
    }
    let mut table = Table::new();
    table.insert("destination", value(host.destination.as_str()));
    if let Some(port) = host.port {
        table.insert("port", value(i64::from(port)));
    }
    if !host.options.is_empty() {
        let options: Array = host.options.iter().map(String::as_str).collect();
        table.insert("options", value(options));
    }
    if let Some(dir) = &host.dir {
        table.insert("dir", value(dir.as_str()));
    }
    if let Some(home) = &host.home {
        table.insert("home", value(home.as_str()));
    }
    if let Some(claude) = &host.claude {
        table.insert("claude", value(claude.as_str()));
    }
    if host.forward_model {
        table.insert("forward-model", value(true));
    }
    hosts.insert(&host.name, Item::Table(table));
    write(path, &doc)
}

/// Removes `[hosts.NAME]` from the file at `path`; `false` when there was none.
pub fn remove_host(path: &Path, name: &str) -> Result<bool, ConfigError> {
    let mut doc = document(path)?;
    let Some(hosts) = doc.get_mut("hosts").and_then(|h| h.as_table_like_mut()) else {
        return Ok(false);
    };
    if hosts.remove(name).is_none() {
        return Ok(false);
    }
    if hosts.is_empty() {
        doc.remove("hosts");
    }
    write(path, &doc)?;
    Ok(true)
}
