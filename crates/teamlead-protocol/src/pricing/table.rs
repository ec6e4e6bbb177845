//! The price table in force: the config file's `[prices."model"]` rows, then the built-in rows
//! of `prices.toml`. A model name takes a row by, in order: its exact id, a dated id of it
//! (`claude-opus-4-20250514`, `claude-opus-4-1@20250805`, `claude-3-5-sonnet-latest`), the
//! longest prefix a row lists. A config row is tried before every built-in one (its key is both
//! an exact name and a prefix); Claude Code's aliases (`opus`, `sonnet[1m]`, `opusplan`…) name
//! the model the data file says, and a `[1m]` suffix is ignored.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::{Price, Rates, Tokens};

/// The embedded price list.
const PRICES_TOML: &str = include_str!("prices.toml");

/// A tier's multipliers of the base rates: `input` for every kind of input token (cache writes
/// and reads too), `output` for output tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Multiplier {
    pub input: f64,
    pub output: f64,
}

/// The long-context tier: a request whose prompt is over `above` tokens pays the multiplied
/// rates on every token.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongContext {
    pub above: u64,
    pub input: f64,
    pub output: f64,
}

/// One row of the price table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PriceRow {
    pub name: String,
    /// Exact model ids (dated ids of them match too).
    #[serde(default)]
    pub models: Vec<String>,
    #[serde(default)]
    pub prefixes: Vec<String>,
    pub input: f64,
    pub output: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
    #[serde(default)]
    pub long_context: Option<LongContext>,
    #[serde(default)]
    pub fast: Option<Multiplier>,
    pub source: String,
    #[serde(default)]
    pub checked: String,
    /// Whether it comes from the config file.
    #[serde(skip)]
    pub from_config: bool,
}

impl PriceRow {
    pub fn rates(&self) -> Rates {
        Rates {
            input: self.input,
            output: self.output,
            cache_write_5m: self.cache_write_5m,
            cache_write_1h: self.cache_write_1h,
            cache_read: self.cache_read,
        }
    }

    /// A config file's `[prices."key"]` as a row.
    fn from_price(key: &str, price: &Price) -> PriceRow {
        let r = price.rates();
        PriceRow {
            name: key.to_string(),
            models: vec![key.to_string()],
            prefixes: vec![key.to_string()],
            input: r.input,
            output: r.output,
            cache_write_5m: r.cache_write_5m,
            cache_write_1h: r.cache_write_1h,
            cache_read: r.cache_read,
            long_context: None,
            fast: None,
            source: format!("config file [prices.\"{key}\"]"),
            checked: String::new(),
            from_config: true,
        }
    }

    /// What one API message's tokens cost, in micro-dollars (not rounded): its long-context
    /// tier when its prompt is over the threshold, its fast-mode rate when `fast`.
    pub(crate) fn message_micros(&self, tokens: &Tokens, fast: bool) -> f64 {
        let (mut m_in, mut m_out) = (1.0, 1.0);
        if let Some(long) = self.long_context.filter(|l| tokens.prompt() > l.above) {
            m_in *= long.input;
            m_out *= long.output;
        }
        if let Some(f) = self.fast.filter(|_| fast) {
            m_in *= f.input;
            m_out *= f.output;
        }
        // Per million tokens in dollars = per token in micro-dollars.
        let input = self.input * tokens.input as f64
            + self.cache_write_5m * tokens.cache_write_5m as f64
            + self.cache_write_1h * tokens.cache_write_1h as f64
            + self.cache_read * tokens.cache_read as f64;
        let micros = input * m_in + self.output * tokens.output as f64 * m_out;
        if micros.is_finite() && micros > 0.0 {
            micros
        } else {
            0.0
        }
    }
}

/// How a model name took its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchedBy {
    Exact,
    /// A dated id of one of the row's models.
    Dated(String),
    Prefix(String),
}

/// The row a model name takes, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Match<'a> {
    pub row: &'a PriceRow,
    pub by: MatchedBy,
    /// The alias it was named by, and the model that alias names.
    pub alias: Option<(String, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PriceFile {
    #[serde(default)]
    aliases: BTreeMap<String, String>,
    row: Vec<PriceRow>,
}

/// The built-in list, parsed once (an unreadable list is a bug its tests catch; the session
/// then prices nothing rather than failing).
static BUILT_IN: LazyLock<Result<PriceFile, String>> =
    LazyLock::new(|| toml::from_str(PRICES_TOML).map_err(|e| e.to_string()));

/// Prices: the config file's rows, then the built-in ones.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    overrides: Vec<PriceRow>,
    rows: Vec<PriceRow>,
    aliases: BTreeMap<String, String>,
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::built_in()
    }
}

impl PriceTable {
    /// The built-in table.
    pub fn built_in() -> PriceTable {
        match &*BUILT_IN {
            Ok(file) => PriceTable {
                overrides: Vec::new(),
                rows: file.row.clone(),
                aliases: file.aliases.clone(),
            },
            Err(e) => {
                tracing::error!("the built-in price list cannot be read: {e}");
                PriceTable {
                    overrides: Vec::new(),
                    rows: Vec::new(),
                    aliases: BTreeMap::new(),
                }
            }
        }
    }

    /// Whether the built-in list could be read (the table tests check it).
    #[cfg(test)]
    pub(crate) fn built_in_error() -> Option<String> {
        BUILT_IN.as_ref().err().cloned()
    }

    /// This table with `overrides` (model name or prefix → price) tried before the rest.
    pub fn with_overrides<'a>(
        mut self,
        overrides: impl IntoIterator<Item = (&'a String, &'a Price)>,
    ) -> PriceTable {
        for (key, price) in overrides {
            self.overrides.retain(|r| r.name != *key);
            self.overrides.push(PriceRow::from_price(key, price));
        }
        self
    }

    /// The config file's rows (to send to a host whose relay prices its teammates).
    pub fn config_rows(&self) -> &[PriceRow] {
        &self.overrides
    }

    /// This table with `rows` as the config file's rows (as [`PriceTable::config_rows`] gave
    /// them on another host), tried before the rest.
    pub fn with_config_rows(mut self, rows: Vec<PriceRow>) -> PriceTable {
        self.overrides = rows
            .into_iter()
            .map(|row| PriceRow {
                from_config: true,
                ..row
            })
            .collect();
        self
    }

    /// Every row in force: the config file's first.
    pub fn rows(&self) -> impl Iterator<Item = &PriceRow> {
        self.overrides.iter().chain(self.rows.iter())
    }

    pub fn aliases(&self) -> &BTreeMap<String, String> {
        &self.aliases
    }

    /// The row `model` takes, and how; `None` when no row matches.
    pub fn find(&self, model: &str) -> Option<Match<'_>> {
        let model = model.trim();
        if let Some(m) = find_in(&self.overrides, model) {
            return Some(m);
        }
        let named = self.aliases.get(model);
        let alias = named.map(|to| (model.to_string(), to.clone()));
        let resolved = named.map_or(model, String::as_str);
        let base = resolved.strip_suffix("[1m]").unwrap_or(resolved);
        let found = [&self.overrides, &self.rows]
            .into_iter()
            .find_map(|rows| find_in(rows, base))?;
        Some(Match { alias, ..found })
    }

    /// The row of `model`.
    pub fn price(&self, model: &str) -> Option<&PriceRow> {
        self.find(model).map(|m| m.row)
    }

    /// What one API message cost, in micro-dollars (not rounded); `None` without a price.
    pub(crate) fn message_micros(&self, model: &str, fast: bool, tokens: &Tokens) -> Option<f64> {
        self.price(model).map(|r| r.message_micros(tokens, fast))
    }

    /// What `tokens` of `model` cost at its standard rate, in micro-dollars; `None` for a
    /// model without a price (a total whose requests are not known one by one).
    pub fn cost_micros(&self, model: Option<&str>, tokens: &Tokens) -> Option<u64> {
        self.price(model?)
            .map(|r| r.message_micros(tokens, false).round() as u64)
    }
}

/// The row of `rows` that `model` takes: an exact id, then a dated id, then the longest prefix.
fn find_in<'a>(rows: &'a [PriceRow], model: &str) -> Option<Match<'a>> {
    let hit = |row, by| Match {
        row,
        by,
        alias: None,
    };
    if let Some(row) = rows.iter().find(|r| r.models.iter().any(|m| m == model)) {
        return Some(hit(row, MatchedBy::Exact));
    }
    for row in rows {
        if let Some(id) = row.models.iter().find(|id| is_dated(model, id)) {
            return Some(hit(row, MatchedBy::Dated(id.clone())));
        }
    }
    rows.iter()
        .flat_map(|r| r.prefixes.iter().map(move |p| (r, p)))
        .filter(|(_, p)| !p.is_empty() && model.starts_with(p.as_str()))
        .max_by_key(|(_, p)| p.len())
        .map(|(row, p)| hit(row, MatchedBy::Prefix(p.clone())))
}

/// `claude-opus-4-20250514`, `claude-opus-4-1@20250805` and `claude-3-5-sonnet-latest` are
/// dated ids of `claude-opus-4`, `claude-opus-4-1` and `claude-3-5-sonnet`.
fn is_dated(model: &str, id: &str) -> bool {
    let Some(rest) = model.strip_prefix(id) else {
        return false;
    };
    let Some(date) = rest.strip_prefix('-').or_else(|| rest.strip_prefix('@')) else {
        return false;
    };
    date == "latest" || (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()))
}
