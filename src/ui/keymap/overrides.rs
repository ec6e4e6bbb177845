//! The config file's keys over the default table: each `[keys.<context>]` entry
//! `<action> = "key"` (or a list of keys) replaces the keys of that row. Names, keys and
//! conflicts are checked; an error names the entry (its index) and says why in one line.

use super::{Action, Context, KeySpec, Keymap};

/// One `[keys.<context>] <action> = [...]` entry of the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOverride {
    pub context: String,
    pub action: String,
    pub keys: Vec<String>,
}

fn list(names: impl Iterator<Item = &'static str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

impl Keymap {
    /// The keymap with `overrides` applied; an error is (index of the entry, why).
    pub fn with_overrides(mut self, overrides: &[KeyOverride]) -> Result<Keymap, (usize, String)> {
        // Which entry last set each row's keys.
        let mut touched: Vec<Option<usize>> = vec![None; self.rows.len()];
        for (i, o) in overrides.iter().enumerate() {
            let contexts = || Context::ALL.iter().filter(|c| **c != Context::Tasks);
            let Some(context) = contexts().find(|c| c.name() == o.context).copied() else {
                let why = if o.context == Context::Tasks.name() {
                    "the task list's key is global.toggle-tasks".to_string()
                } else {
                    format!(
                        "unknown keys section `{}`: one of {}",
                        o.context,
                        list(contexts().map(|c| c.name()))
                    )
                };
                return Err((i, why));
            };
            let Some(row) = self
                .rows
                .iter()
                .position(|r| r.context == context && r.action.name() == o.action)
            else {
                return Err((
                    i,
                    format!(
                        "no action `{}` in [keys.{}]: one of {}",
                        o.action,
                        context.name(),
                        list(self.in_context(context).map(|r| r.action.name()))
                    ),
                ));
            };
            if o.keys.is_empty() {
                return Err((i, "give at least one key".to_string()));
            }
            let mut keys = Vec::new();
            for text in &o.keys {
                let key = KeySpec::parse(text).map_err(|e| (i, e))?;
                if context == Context::Global && key.types_text() {
                    return Err((
                        i,
                        format!(
                            "a key of [keys.global] needs ctrl or alt: `{}` would never be typed",
                            key.label()
                        ),
                    ));
                }
                keys.push(key);
            }
            self.rows[row].keys = keys;
            touched[row] = Some(i);
        }
        // The task list's row is the global toggle, for help.
        let toggle: Vec<KeySpec> = self
            .in_context(Context::Global)
            .find(|r| r.action == Action::ToggleTasks)
            .map(|r| r.keys.clone())
            .unwrap_or_default();
        for row in self.rows.iter_mut().filter(|r| r.context == Context::Tasks) {
            row.keys = toggle.clone();
        }
        if let Some((a, b, key)) = self.conflicts() {
            let i = touched[a].max(touched[b]).unwrap_or(0);
            let name = |r: usize| {
                format!(
                    "{}.{}",
                    self.rows[r].context.name(),
                    self.rows[r].action.name()
                )
            };
            return Err((
                i,
                format!(
                    "`{}` is bound twice: {} and {}",
                    key.label(),
                    name(a),
                    name(b)
                ),
            ));
        }
        Ok(self)
    }

    /// Two rows whose keys clash (the same key twice in a context, or a global key that a
    /// context also uses, which would never reach it): their indices and the key.
    pub fn conflicts(&self) -> Option<(usize, usize, KeySpec)> {
        let rows = &self.rows;
        for (a, ra) in rows.iter().enumerate() {
            if ra.context == Context::Tasks {
                continue;
            }
            for (b, rb) in rows.iter().enumerate().skip(a + 1) {
                let clash = rb.context != Context::Tasks
                    && (ra.context == rb.context
                        || ra.context == Context::Global
                        || rb.context == Context::Global);
                if !clash {
                    continue;
                }
                if let Some(key) = ra.keys.iter().find(|k| rb.keys.contains(k)) {
                    return Some((a, b, *key));
                }
            }
        }
        None
    }
}
