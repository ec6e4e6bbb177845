//! `teamlead prices [MODEL]`: the price table in force — the config file's `[prices]` rows,
//! then the built-in list (`protocol::pricing`) — each row with its rates, tiers, source and
//! date; or, for one model name, the row it takes and how it matched.

use std::fmt::Write as _;

use color_eyre::eyre::{Result, bail};

use super::args::PricesArgs;
use super::output::Out;
use crate::protocol::pricing::{Match, MatchedBy, PriceRow, PriceTable, rate};

pub fn run(args: &PricesArgs) -> Result<()> {
    let table = super::config::prices_in_force();
    let text = match &args.model {
        None => table_text(&table),
        Some(model) => match model_text(&table, model) {
            Some(text) => text,
            None => bail!(
                "{model} has no price: its tokens are counted and left out of every cost, which \
                 says so. Give it one in the config file (`teamlead config path`): \
                 [prices.\"{model}\"] with input and output (`teamlead prices --help`)."
            ),
        },
    };
    Out::new().raw(text)?;
    Ok(())
}

/// The whole table, one block per row.
pub fn table_text(table: &PriceTable) -> String {
    let mut out = String::from(
        "Prices in force, US dollars per million tokens (the config file's rows first):\n",
    );
    for row in table.rows() {
        let _ = write!(out, "\n{}\n", row_text(row));
    }
    if !table.aliases().is_empty() {
        let aliases: Vec<String> = table
            .aliases()
            .iter()
            .map(|(a, m)| format!("{a} → {m}"))
            .collect();
        let _ = writeln!(out, "\nAliases: {}", aliases.join(", "));
    }
    out
}

/// A row: its name and ids, its rates, its tiers, its source and date.
fn row_text(row: &PriceRow) -> String {
    let mut names: Vec<String> = row.models.clone();
    names.extend(
        row.prefixes
            .iter()
            .filter(|p| !row.models.contains(p))
            .map(|p| format!("{p}…")),
    );
    let origin = if row.from_config {
        "config file"
    } else {
        "built in"
    };
    let mut out = format!(
        "{} ({origin}): {}\n  input {} · output {} · cache write 5 min {} · 1 h {} · cache read {}\n",
        row.name,
        names.join(", "),
        rate(row.input),
        rate(row.output),
        rate(row.cache_write_5m),
        rate(row.cache_write_1h),
        rate(row.cache_read),
    );
    if let Some(long) = row.long_context {
        let _ = writeln!(
            out,
            "  a request whose prompt is over {} tokens: input rates × {}, output × {}",
            thousands(long.above),
            long.input,
            long.output
        );
    }
    if let Some(fast) = row.fast {
        let _ = writeln!(
            out,
            "  fast mode: input rates × {}, output × {}",
            fast.input, fast.output
        );
    }
    let checked = if row.checked.is_empty() {
        String::new()
    } else {
        format!(" (checked {})", row.checked)
    };
    let _ = write!(out, "  source: {}{checked}", row.source);
    out
}

/// The row `model` takes and how; `None` when it has none.
pub fn model_text(table: &PriceTable, model: &str) -> Option<String> {
    let Match { row, by, alias } = table.find(model)?;
    let how = match by {
        MatchedBy::Exact => "its exact name".to_string(),
        MatchedBy::Dated(id) => format!("a dated id of {id}"),
        MatchedBy::Prefix(p) => format!("the prefix {p}"),
    };
    let alias = alias
        .map(|(a, to)| format!(" (the alias {a} names {to})"))
        .unwrap_or_default();
    Some(format!(
        "{model} takes this row by {how}{alias}:\n{}\n",
        row_text(row)
    ))
}

/// `100,000`.
fn thousands(n: u64) -> String {
    let mut digits = n.to_string();
    let mut i = digits.len();
    while i > 3 {
        i -= 3;
        digits.insert(i, ',');
    }
    digits
}
