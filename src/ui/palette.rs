//! How domain values look on screen: palette color names to ratatui colors, the lead's mode
//! line, teammate status text and the small shared styles.

use ratatui::style::{Color, Modifier, Style};

use crate::lead::contract::TeammateStatus;
use crate::protocol::PermissionMode;
use crate::protocol::color::Color as PaletteColor;

/// The ratatui color of a palette name (`purple → Magenta`, `orange → 208`, `pink → 205`);
/// unknown or missing names get the terminal's default foreground.
pub fn teammate_color(name: Option<&str>) -> Color {
    match name.and_then(PaletteColor::parse) {
        Some(PaletteColor::Red) => Color::Red,
        Some(PaletteColor::Blue) => Color::Blue,
        Some(PaletteColor::Green) => Color::Green,
        Some(PaletteColor::Yellow) => Color::Yellow,
        Some(PaletteColor::Purple) => Color::Magenta,
        Some(PaletteColor::Orange) => Color::Indexed(208),
        Some(PaletteColor::Pink) => Color::Indexed(205),
        Some(PaletteColor::Cyan) => Color::Cyan,
        None => Color::Reset,
    }
}

/// The style of a teammate's name: its color, bold.
pub fn name_style(color: Option<&str>) -> Style {
    Style::default()
        .fg(teammate_color(color))
        .add_modifier(Modifier::BOLD)
}

/// Dimmed text (frames, system notes, hints).
pub fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

/// The footer's left text for a mode, as Claude Code words it, with the key that cycles it
/// (`default mode · shift+tab to cycle`).
pub fn mode_line(mode: PermissionMode, cycle_key: &str) -> String {
    format!("{} · {cycle_key} to cycle", mode_label(mode))
}

/// The short form of [`mode_line`] for narrow footers.
pub fn mode_label(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default mode",
        PermissionMode::AcceptEdits => "⏵⏵ accept edits on",
        PermissionMode::Plan => "⏸ plan mode on",
        PermissionMode::BypassPermissions => "⏵⏵ bypass permissions on",
        PermissionMode::Auto => "⏵⏵ auto mode on",
    }
}

/// The color of a mode's footer text.
pub fn mode_style(mode: PermissionMode) -> Style {
    match mode {
        PermissionMode::Default => dim(),
        PermissionMode::AcceptEdits => Style::default().fg(Color::Magenta),
        PermissionMode::Plan => Style::default().fg(Color::Cyan),
        PermissionMode::BypassPermissions => Style::default().fg(Color::Red),
        PermissionMode::Auto => Style::default().fg(Color::Yellow),
    }
}

/// `working`, `waiting for approval`, `waiting in its pane: <its client's prompt>`, `idle for
/// 12s`, `shutting down (42s)`, `gone`, or how it
/// stopped (`exited (127: claude not found)`, `crashed (…)`, `closed`).
pub fn status_text(status: &TeammateStatus, now_ms: u64) -> String {
    match status {
        TeammateStatus::Working => "working".to_string(),
        TeammateStatus::WaitingForApproval => "waiting for approval".to_string(),
        TeammateStatus::OnClientPrompt { title, .. } => format!("waiting in its pane: {title}"),
        TeammateStatus::Idle { since_ms } => {
            format!(
                "idle for {}",
                short_duration(now_ms.saturating_sub(*since_ms))
            )
        }
        TeammateStatus::ShuttingDown { since_ms } => format!(
            "shutting down ({})",
            short_duration(now_ms.saturating_sub(*since_ms))
        ),
        TeammateStatus::Gone => "gone".to_string(),
        TeammateStatus::Unreachable { since_ms, .. } => format!(
            "unreachable ({})",
            short_duration(now_ms.saturating_sub(*since_ms))
        ),
        TeammateStatus::Stopped { how } => how.clone(),
    }
}

/// ` · rate-limited until 14:05` (local time) while a teammate's rate or usage limit holds.
pub fn rate_limit_text(until_ms: Option<u64>, now_ms: u64) -> Option<String> {
    let until = until_ms.filter(|u| *u > now_ms)?;
    let at = crate::protocol::time::local_clock(until)?;
    Some(format!(" · rate-limited until {at}"))
}

/// `parked · resumes 16:18:05` (local time) while a teammate is parked at a usage limit, or
/// `parked · past the cut-off` when it does not resume by itself.
pub fn parked_text(parked: Option<&crate::lead::contract::ParkedView>) -> Option<String> {
    let parked = parked?;
    let mut text = match parked.resume_at_ms {
        Some(at) => format!(
            "parked · resumes {}",
            crate::protocol::time::local_clock_seconds(at)?
        ),
        None => "parked · past the cut-off".to_string(),
    };
    if parked.held > 0 {
        text.push_str(&format!(" · {} held", parked.held));
    }
    Some(text)
}

/// The color of a status.
pub fn status_style(status: &TeammateStatus) -> Style {
    match status {
        TeammateStatus::Working => Style::default().fg(Color::Green),
        TeammateStatus::WaitingForApproval | TeammateStatus::OnClientPrompt { .. } => {
            Style::default().fg(Color::Yellow)
        }
        TeammateStatus::Idle { .. } => dim(),
        TeammateStatus::ShuttingDown { .. } => Style::default().fg(Color::Red),
        TeammateStatus::Gone => dim().add_modifier(Modifier::CROSSED_OUT),
        TeammateStatus::Unreachable { .. } => Style::default().fg(Color::Magenta),
        TeammateStatus::Stopped { .. } => Style::default().fg(Color::Red),
    }
}

/// `12s`, `3m`, `2h`, `4d`.
pub fn short_duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_names_map_to_terminal_colors() {
        assert_eq!(teammate_color(Some("purple")), Color::Magenta);
        assert_eq!(teammate_color(Some("orange")), Color::Indexed(208));
        assert_eq!(teammate_color(Some("pink")), Color::Indexed(205));
        assert_eq!(teammate_color(Some("cyan")), Color::Cyan);
        assert_eq!(teammate_color(Some("chartreuse")), Color::Reset);
        assert_eq!(teammate_color(None), Color::Reset);
    }

    #[test]
    fn idle_time_is_short() {
        let idle = TeammateStatus::Idle { since_ms: 1_000 };
        assert_eq!(status_text(&idle, 13_000), "idle for 12s");
        assert_eq!(status_text(&idle, 1_000 + 180_000), "idle for 3m");
        assert_eq!(status_text(&idle, 0), "idle for 0s");
        let stopping = TeammateStatus::ShuttingDown { since_ms: 1_000 };
        assert_eq!(status_text(&stopping, 43_000), "shutting down (42s)");
    }
}
