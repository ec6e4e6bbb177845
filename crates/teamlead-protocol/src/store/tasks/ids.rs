//! Task ids (PROTOCOL.md 5): the `.highwatermark` (the highest id ever used, decimal text) and
//! the next id, `max(largest integer task file name, high-water mark) + 1`, with checked
//! arithmetic. A high-water mark that cannot be read as a non-negative decimal number (garbage,
//! binary, negative, beyond `u64`, a directory, a FIFO…) is an error and is never rewritten;
//! an id at `u64::MAX` means ids are exhausted. Ids are never reused and never wrap.

use std::path::PathBuf;

use super::TaskList;
use crate::store::atomic::{Parsed, read_parsed_limited, write_atomic};
use crate::store::error::{Result, StoreError};
use crate::store::safe_file::MAX_SMALL_FILE_BYTES;

/// A short excerpt of untrusted text for a message (at most 24 characters).
fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(24).collect();
    if text.chars().count() > 24 {
        out.push('…');
    }
    out
}

/// Parses the text of a `.highwatermark`: optional surrounding whitespace around decimal
/// digits that fit a `u64`.
pub fn parse_highwatermark(bytes: &[u8]) -> std::result::Result<u64, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| "binary data, not the highest task id as a decimal number".to_string())?;
    let digits = text.trim();
    if digits.is_empty() {
        return Err("empty, not the highest task id as a decimal number".into());
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "`{}` is not the highest task id as a non-negative decimal number",
            excerpt(digits)
        ));
    }
    digits.parse::<u64>().map_err(|_| {
        format!(
            "`{}` is larger than the largest possible task id {}",
            excerpt(digits),
            u64::MAX
        )
    })
}

/// What a task file name says about ids: `Some(n)` for `<digits>.json`, where digits beyond
/// `u64` saturate to `u64::MAX` (such a name exhausts the ids rather than being ignored).
fn id_of_file_name(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".json")?;
    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(stem.parse::<u64>().unwrap_or(u64::MAX))
}

impl TaskList {
    pub(super) fn highwatermark_path(&self) -> PathBuf {
        self.dir.join(".highwatermark")
    }

    /// The high-water mark; 0 when there is no `.highwatermark`. Torn reads are retried; a
    /// file that still does not parse, or is not a regular file, is an error.
    pub fn highwatermark(&self) -> Result<u64> {
        let path = self.highwatermark_path();
        self.home.check_inside(&path)?;
        match read_parsed_limited(&path, MAX_SMALL_FILE_BYTES, parse_highwatermark)? {
            Parsed::Missing => Ok(0),
            Parsed::Ok(n) => Ok(n),
            Parsed::Invalid { detail, .. } => Err(StoreError::parse(
                &path,
                format!("{detail}; it was left as it is"),
            )),
        }
    }

    /// Raises the high-water mark to `to` (never lowers it).
    pub(super) fn raise_highwatermark(&self, to: u64) -> Result<()> {
        if to > self.highwatermark()? {
            write_atomic(&self.highwatermark_path(), to.to_string().as_bytes())?;
        }
        Ok(())
    }

    /// The largest integer task file name (`<n>.json`), 0 when there is none.
    fn largest_file_id(&self) -> Result<u64> {
        Ok(self
            .file_names()?
            .iter()
            .filter_map(|n| id_of_file_name(n))
            .max()
            .unwrap_or(0))
    }

    /// The id a new task gets: one more than both the largest task file name and the
    /// high-water mark; [`StoreError::TaskIdsExhausted`] when that would pass `u64::MAX`.
    /// Call under the list lock.
    pub(super) fn next_id(&self) -> Result<u64> {
        let highest = self.largest_file_id()?.max(self.highwatermark()?);
        highest
            .checked_add(1)
            .ok_or_else(|| StoreError::TaskIdsExhausted {
                dir: self.dir.clone(),
                highest: highest.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highwatermark_text() {
        assert_eq!(parse_highwatermark(b"5"), Ok(5));
        assert_eq!(parse_highwatermark(b" 12\n"), Ok(12));
        assert_eq!(parse_highwatermark(b"18446744073709551615"), Ok(u64::MAX));
        for bad in [
            &b""[..],
            b"  ",
            b"-1",
            b"+1",
            b"1.5",
            b"abc",
            b"1 2",
            b"\x00\xff\xfe",
            b"18446744073709551616",
        ] {
            assert!(parse_highwatermark(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn file_names() {
        assert_eq!(id_of_file_name("7.json"), Some(7));
        assert_eq!(id_of_file_name("007.json"), Some(7));
        assert_eq!(
            id_of_file_name("99999999999999999999999.json"),
            Some(u64::MAX)
        );
        assert_eq!(id_of_file_name("+7.json"), None);
        assert_eq!(id_of_file_name("a.json"), None);
        assert_eq!(id_of_file_name(".json"), None);
    }
}
