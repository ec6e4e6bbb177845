//! When a `claude` teammate's rate or usage limit resets, read from what Claude Code records in
//! its transcript when it hits one: an assistant entry marked `isApiErrorMessage` (newer
//! clients add `"error": "rate_limit"`, model `<synthetic>`) whose text is
//! `Claude AI usage limit reached|1750708800` (older clients: the reset time in epoch
//! seconds) or `You've hit your limit · resets 1:20am (Europe/Berlin)` (newer clients: also
//! `session limit`, `weekly limit`, `—` for `·`, a date as in `resets Oct 9, 5pm`). The clock
//! time is taken in the lead's local time zone (the client prints its own, and runs on the same
//! machine), at its next occurrence after the entry's timestamp; the client prints it without
//! its seconds (cut, not rounded: 16:18:59 is `4:18pm`), so the minute it names is taken as
//! ending then (the reset is no later than the end of that minute), and a minute that is the
//! entry's own is today's, not tomorrow's. Newer clients (2.1.332) also record the exact reset,
//! in epoch seconds, as `quotaLimits.resetsAt` and `apiErrorParams.rate_limit_info.resetsAt`
//! (`apiError: "usage_limit_reached"`): that is read first. A limit without a reset time (an
//! `API Error: 429` the client gave up on) is not read as one.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, TimeZone};
use serde_json::Value;

/// The reset time (epoch milliseconds) of the limit `entry` records, when it records one.
pub(crate) fn limit_reset_ms(entry: &Value) -> Option<u64> {
    if entry["type"] != "assistant" || entry["isApiErrorMessage"] != true {
        return None;
    }
    let exact = entry["quotaLimits"]["resetsAt"]
        .as_f64()
        .or_else(|| entry["apiErrorParams"]["rate_limit_info"]["resetsAt"].as_f64())
        .filter(|s| s.is_finite() && *s > 0.0);
    if let Some(secs) = exact {
        return Some((secs * 1000.0) as u64);
    }
    let text = content_text(&entry["message"]["content"]);
    // The printed minute ends a minute after it starts (see the module documentation).
    let to_end = if text.to_ascii_lowercase().contains("usage limit reached|") {
        0
    } else {
        60_000
    };
    let at = entry["timestamp"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())?
        .with_timezone(&chrono::Local);
    reset_at(&text, at).map(|t| t.timestamp_millis().max(0) as u64 + to_end)
}

/// The text blocks of a message's content (or its text, when it is a string): a transcript
/// entry's message or a tool result's content (`store::claude_undelivered` reads those too).
pub(super) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// When the limit `text` describes resets, for a message written at `at`.
pub(crate) fn reset_at<Tz: TimeZone>(text: &str, at: DateTime<Tz>) -> Option<DateTime<Tz>> {
    let lower = text.to_ascii_lowercase();
    if let Some((_, rest)) = lower.split_once("usage limit reached|") {
        let secs: i64 = rest
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()?;
        return at.timezone().timestamp_opt(secs, 0).single();
    }
    if !lower.contains("limit") {
        return None;
    }
    let (_, rest) = lower.split_once("resets ")?;
    let when = rest.split('(').next().unwrap_or(rest).trim();
    let (date, clock) = match when.rsplit_once(", ") {
        Some((date, clock)) => (Some(date.trim()), clock.trim()),
        None => (None, when),
    };
    let time = clock_time(clock)?;
    let local = at.naive_local();
    let day = match date {
        Some(date) => month_day(date, local.date())?,
        None => local.date(),
    };
    let mut reset = day.and_time(time);
    // Seconds are cut: a reset in the minute the message was written in is that minute's.
    if date.is_none() && reset + Duration::minutes(1) <= local {
        reset += Duration::days(1);
    }
    at.timezone().from_local_datetime(&reset).earliest()
}

/// `1:20am`, `11:30pm`, `4pm`, `14:05`.
fn clock_time(text: &str) -> Option<NaiveTime> {
    let text = text.trim();
    let (digits, pm) = if let Some(t) = text.strip_suffix("am") {
        (t.trim(), Some(false))
    } else if let Some(t) = text.strip_suffix("pm") {
        (t.trim(), Some(true))
    } else {
        (text, None)
    };
    let (hour, minute) = match digits.split_once(':') {
        Some((h, m)) => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None => (digits.parse::<u32>().ok()?, 0),
    };
    let hour = match pm {
        Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
        Some(_) => return None,
        None => hour,
    };
    NaiveTime::from_hms_opt(hour, minute, 0)
}

/// `oct 9` (the next such day from `today`, this year or the next).
fn month_day(text: &str, today: NaiveDate) -> Option<NaiveDate> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let mut words = text.split_whitespace();
    let month = words.next()?;
    let month = MONTHS.iter().position(|m| month.starts_with(m))? as u32 + 1;
    let day: u32 = words.next()?.trim_end_matches(',').parse().ok()?;
    let this_year = NaiveDate::from_ymd_opt(today.year(), month, day)?;
    if this_year >= today {
        Some(this_year)
    } else {
        NaiveDate::from_ymd_opt(today.year() + 1, month, day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{FixedOffset, Utc};
    use serde_json::json;

    fn berlin(text: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(text).expect("time")
    }

    #[test]
    fn both_wordings_give_the_reset_time() {
        let at = berlin("2026-04-17T22:10:28+02:00");
        let show = |t: Option<DateTime<FixedOffset>>| t.map(|t| t.to_rfc3339());
        // Later the same night, the next morning, a date, and 24-hour clocks.
        assert_eq!(
            show(reset_at(
                "You've hit your limit · resets 11:20pm (Europe/Berlin)",
                at
            )),
            Some("2026-04-17T23:20:00+02:00".into())
        );
        assert_eq!(
            show(reset_at(
                "You've hit your session limit — resets 1:20am (Europe/Berlin)",
                at
            )),
            Some("2026-04-18T01:20:00+02:00".into())
        );
        assert_eq!(
            show(reset_at(
                "You've hit your weekly limit · resets Oct 9, 5pm (Europe/Berlin)",
                at
            )),
            Some("2026-10-09T17:00:00+02:00".into())
        );
        assert_eq!(
            show(reset_at("You've hit your limit · resets 12am", at)),
            Some("2026-04-18T00:00:00+02:00".into())
        );
        // 22:10:28: the minute it was written in is tonight's, not tomorrow's.
        assert_eq!(
            show(reset_at("You've hit your limit · resets 10:10pm (UTC)", at)),
            Some("2026-04-17T22:10:00+02:00".into())
        );
        assert_eq!(
            show(reset_at("You've hit your limit · resets 10:09pm (UTC)", at)),
            Some("2026-04-18T22:09:00+02:00".into())
        );
        assert_eq!(
            show(reset_at("Claude AI usage limit reached|1750708800", at)),
            Some("2025-06-23T22:00:00+02:00".into())
        );
        for not_a_reset in [
            "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}",
            "You've hit your limit",
            "You've hit your limit · resets 13pm",
            "The parser resets 4pm state",
        ] {
            assert_eq!(reset_at(not_a_reset, at), None, "{not_a_reset}");
        }
    }

    #[test]
    fn only_api_error_entries_are_read() {
        let entry = |error: bool, text: &str| {
            json!({
                "type": "assistant",
                "isApiErrorMessage": error,
                "error": "rate_limit",
                "timestamp": "2026-04-17T08:10:28.297Z",
                "message": {"model": "<synthetic>", "content": [{"type": "text", "text": text}]}
            })
        };
        let old = "Claude AI usage limit reached|1776420000";
        assert_eq!(limit_reset_ms(&entry(true, old)), Some(1_776_420_000_000));
        assert_eq!(limit_reset_ms(&entry(false, old)), None);
        let new = limit_reset_ms(&entry(true, "You've hit your limit · resets 1:20am (UTC)"))
            .expect("a reset time");
        let written = DateTime::parse_from_rfc3339("2026-04-17T08:10:28.297Z")
            .expect("t")
            .with_timezone(&Utc)
            .timestamp_millis() as u64;
        assert!(new > written && new - written <= 24 * 3_600_000, "{new}");
        assert_eq!(new % 60_000, 0, "the end of the printed minute");
    }

    #[test]
    fn the_exact_reset_of_newer_clients_is_read_first() {
        // As 2.1.332 writes it (trimmed): the text has the minute, the fields the second.
        let entry = json!({
            "type": "assistant", "isApiErrorMessage": true, "error": "rate_limit",
            "apiError": "usage_limit_reached",
            "apiErrorParams": {"rate_limit_info": {"status": "rejected", "resetsAt": 1795969031,
                "rateLimitType": "five_hour"}},
            "quotaLimits": {"status": "rejected", "resetsAt": 1795969031, "rateLimitType": "five_hour"},
            "timestamp": "2026-11-29T16:16:46.336Z",
            "message": {"model": "<synthetic>", "content": [{"type": "text",
                "text": "You've hit your 5-hour limit · resets 4:17pm (UTC)"}]}
        });
        assert_eq!(limit_reset_ms(&entry), Some(1_795_969_031_000));
        let mut params_only = entry.clone();
        params_only["quotaLimits"] = Value::Null;
        assert_eq!(limit_reset_ms(&params_only), Some(1_795_969_031_000));
    }
}
