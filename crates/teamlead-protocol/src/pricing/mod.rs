//! What model tokens cost. The built-in price list is one data file in the source
//! (`prices.toml`, embedded): a row per model family with its rates (input, output, 5-minute and
//! 1-hour cache writes, cache reads), its long-context tier and fast-mode multipliers, and where
//! its figures come from. The config file's `[prices."model"]` tables come before it
//! (`table::PriceTable`). Every API message is priced on its own, by its own model and tier
//! (`Ledger`): a session that switched models, or a request over a long-context threshold, is
//! priced as it was billed. A model no row matches has no price: its tokens show, its cost does
//! not, and totals say what they leave out. Costs are kept in micro-dollars.

mod ledger;
mod table;
#[cfg(test)]
mod tests;

pub use ledger::{Ledger, ModelUsage};
pub use table::{LongContext, Match, MatchedBy, Multiplier, PriceRow, PriceTable};

use serde::Deserialize;

/// A price of the config file (`[prices."model"]`), in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Writes to the prompt cache with a 5-minute life (default 1.25 × input).
    #[serde(default, alias = "cache-write-5m")]
    pub cache_write: Option<f64>,
    /// Writes to the prompt cache with a 1-hour life (default 2 × input).
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
    /// Reads from the prompt cache (default 0.1 × input).
    #[serde(default)]
    pub cache_read: Option<f64>,
}

impl Price {
    /// Its rates, the defaults filled in.
    pub fn rates(&self) -> Rates {
        Rates {
            input: self.input,
            output: self.output,
            cache_write_5m: self.cache_write.unwrap_or(self.input * 1.25),
            cache_write_1h: self.cache_write_1h.unwrap_or(self.input * 2.0),
            cache_read: self.cache_read.unwrap_or(self.input * 0.1),
        }
    }

    /// Every figure it gives (to check that none is negative or not a number).
    pub fn figures(&self) -> [Option<f64>; 5] {
        [
            Some(self.input),
            Some(self.output),
            self.cache_write,
            self.cache_write_1h,
            self.cache_read,
        ]
    }
}

/// Dollars per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
}

/// Tokens by kind: `input` without the cache's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    pub cache_read: u64,
}

impl Tokens {
    /// The prompt's size: input, cache writes and cache reads (what a long-context tier is
    /// chosen by).
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_write_5m + self.cache_write_1h + self.cache_read
    }

    pub fn total(&self) -> u64 {
        self.prompt() + self.output
    }

    pub fn add(&mut self, other: &Tokens) {
        self.input += other.input;
        self.output += other.output;
        self.cache_write_5m += other.cache_write_5m;
        self.cache_write_1h += other.cache_write_1h;
        self.cache_read += other.cache_read;
    }

    pub fn sub(&mut self, other: &Tokens) {
        self.input = self.input.saturating_sub(other.input);
        self.output = self.output.saturating_sub(other.output);
        self.cache_write_5m = self.cache_write_5m.saturating_sub(other.cache_write_5m);
        self.cache_write_1h = self.cache_write_1h.saturating_sub(other.cache_write_1h);
        self.cache_read = self.cache_read.saturating_sub(other.cache_read);
    }
}

/// `$0.42`, `$12.34`, `$1,234` (under a cent: `<$0.01`).
pub fn dollars(micros: u64) -> String {
    let cents = (micros + 5_000) / 10_000;
    if micros > 0 && cents == 0 {
        return "<$0.01".to_string();
    }
    if cents >= 100_000 {
        let whole = (cents + 50) / 100;
        let mut digits = whole.to_string();
        let mut i = digits.len();
        while i > 3 {
            i -= 3;
            digits.insert(i, ',');
        }
        return format!("${digits}");
    }
    format!("${}.{:02}", cents / 100, cents % 100)
}

/// What a total leaves out: `2 teammates not priced (model fable-5-2)`; `unpriced` holds
/// each unpriced teammate's unpriced models. `None` when nothing is left out.
pub fn unpriced_note(unpriced: &[&[String]]) -> Option<String> {
    let who: Vec<&&[String]> = unpriced.iter().filter(|m| !m.is_empty()).collect();
    if who.is_empty() {
        return None;
    }
    let mut models: Vec<&str> = who
        .iter()
        .flat_map(|m| m.iter().map(String::as_str))
        .collect();
    models.sort_unstable();
    models.dedup();
    let n = who.len();
    Some(format!(
        "{n} {} not priced ({} {})",
        if n == 1 { "teammate" } else { "teammates" },
        if models.len() == 1 { "model" } else { "models" },
        models.join(", ")
    ))
}

/// A rate per million tokens as the price list writes it: `$4`, `$0.20`, `$0.125`.
pub fn rate(dollars: f64) -> String {
    let cents = (dollars * 100.0).round();
    if (dollars * 100.0 - cents).abs() < 1e-9 {
        if cents % 100.0 == 0.0 {
            format!("${}", cents / 100.0)
        } else {
            format!("${dollars:.2}")
        }
    } else {
        let text = format!("{dollars:.4}");
        format!("${}", text.trim_end_matches('0'))
    }
}
