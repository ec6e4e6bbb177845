//! The lead's prices on a host: the lead's config file may price models (`[prices."model"]`)
//! that the relay's own build does not, or differently, and a remote `claude` teammate's cost
//! is counted by the relay from its transcript on the host ([`crate::transcripts`]). So the
//! lead sends its config rows as a `prices` body at each connection (capability `prices`); the
//! relay keeps them in the link's directory (`prices.json`, so a relay started again prices the
//! same way before the lead's next body comes) and meters with the built-in table plus them.
//! A row this build cannot read is left out with a warning, never a broken link.

use std::path::Path;

use serde_json::Value;
use teamlead_protocol::pricing::{PriceRow, PriceTable};
use teamlead_protocol::store::atomic::write_atomic;
use teamlead_protocol::store::safe_file::read_regular;
use teamlead_protocol::store::{Result, StoreError};

/// The file in the link's directory.
const FILE: &str = "prices.json";

/// The largest prices file read back.
const MAX_BYTES: u64 = 1 << 20;

/// The lead's config rows as the body's JSON.
pub fn rows_value(table: &PriceTable) -> Value {
    serde_json::to_value(table.config_rows()).unwrap_or(Value::Array(Vec::new()))
}

/// The rows of a `prices` body that this build can read.
pub fn read_rows(value: &Value) -> Vec<PriceRow> {
    let Some(items) = value.as_array() else {
        tracing::warn!("a prices body that is not a list: ignored");
        return Vec::new();
    };
    items
        .iter()
        .filter_map(
            |item| match serde_json::from_value::<PriceRow>(item.clone()) {
                Ok(row) => Some(row),
                Err(e) => {
                    tracing::warn!("a price row this relay cannot read ({e}): left out");
                    None
                }
            },
        )
        .collect()
}

/// The table the relay meters with: the built-in one plus `rows`.
pub fn table(rows: Vec<PriceRow>) -> PriceTable {
    PriceTable::built_in().with_config_rows(rows)
}

/// Keeps the lead's rows in the link's directory.
pub fn save(dir: &Path, value: &Value) -> Result<()> {
    let path = dir.join(FILE);
    let bytes = serde_json::to_vec(value).map_err(|e| StoreError::parse(&path, e))?;
    write_atomic(&path, &bytes)
}

/// The rows kept in the link's directory (none when there are none, or they cannot be read).
pub fn load(dir: &Path) -> Vec<PriceRow> {
    let path = dir.join(FILE);
    match read_regular(&path, MAX_BYTES) {
        Ok(Some(bytes)) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) => read_rows(&value),
            Err(e) => {
                tracing::warn!(
                    "{} cannot be read ({e}): the built-in prices",
                    path.display()
                );
                Vec::new()
            }
        },
        Ok(None) => Vec::new(),
        Err(e) => {
            tracing::warn!(
                "{} cannot be read ({e}): the built-in prices",
                path.display()
            );
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamlead_protocol::pricing::Price;

    fn lead_table() -> PriceTable {
        let price = Price {
            input: 7.0,
            output: 70.0,
            cache_write: None,
            cache_write_1h: None,
            cache_read: None,
        };
        PriceTable::built_in().with_overrides([(&"house-model".to_string(), &price)])
    }

    #[test]
    fn the_leads_rows_price_the_same_on_the_host_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), &rows_value(&lead_table())).unwrap();
        let on_host = table(load(dir.path()));
        let row = on_host.price("house-model").expect("the lead's row");
        assert_eq!((row.input, row.output), (7.0, 70.0));
        assert!(row.from_config);
        assert!(PriceTable::built_in().price("house-model").is_none());
    }

    #[test]
    fn a_row_this_build_cannot_read_is_left_out() {
        let mut value = rows_value(&lead_table());
        value
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"name": "newer", "a-field-from-later": 1}));
        assert_eq!(read_rows(&value).len(), 1);
        assert!(read_rows(&serde_json::json!({"not": "a list"})).is_empty());
    }
}
