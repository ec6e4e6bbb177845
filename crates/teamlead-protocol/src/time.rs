//! Timestamps as the protocol writes them: epoch milliseconds for `createdAt`/`joinedAt`, and
//! ISO-8601 UTC strings with exactly three decimals for message `timestamp`s.

use chrono::{DateTime, TimeZone, Utc};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    Utc::now().timestamp_millis().max(0) as u64
}

/// The current time as `2026-11-21T04:54:26.955Z`.
pub fn now_iso() -> String {
    iso(Utc::now())
}

/// `14:05`: epoch milliseconds on the local clock (the machine's time zone); `None` for a
/// time chrono cannot represent.
pub fn local_clock(ms: u64) -> Option<String> {
    local_format(ms, "%H:%M")
}

/// `14:05:09`: [`local_clock`] with seconds (times a few seconds apart).
pub fn local_clock_seconds(ms: u64) -> Option<String> {
    local_format(ms, "%H:%M:%S")
}

fn local_format(ms: u64, format: &str) -> Option<String> {
    let t = DateTime::from_timestamp_millis(i64::try_from(ms).ok()?)?;
    Some(t.with_timezone(&chrono::Local).format(format).to_string())
}

/// A time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn iso(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Epoch milliseconds as an ISO string.
pub fn iso_from_ms(ms: u64) -> String {
    match Utc.timestamp_millis_opt(ms as i64).single() {
        Some(t) => iso(t),
        None => iso(Utc::now()),
    }
}

/// Parses an ISO timestamp into epoch milliseconds; `None` when it is not one.
pub fn parse_iso_ms(s: &str) -> Option<u64> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis().max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_has_exactly_three_decimals() {
        let s = iso_from_ms(1_795_236_866_135);
        assert_eq!(s, "2026-11-21T04:54:26.135Z");
        let s = iso_from_ms(1_795_236_866_000);
        assert_eq!(s, "2026-11-21T04:54:26.000Z");
        assert_eq!(parse_iso_ms(&s), Some(1_795_236_866_000));
    }
}
