//! A comment on a line or a hunk of a teammate's review, as the message it gets: the file, the
//! line (or the hunk's lines) and the lines around it, quoted, then the comment. The screen
//! builds it from the diff it shows; the lead sends it through the same path as `/msg`, so it
//! is echoed and tracked like any message.

use serde::{Deserialize, Serialize};

use super::{DiffLine, FileDiff, LineKind};
use crate::protocol::display::visible_line;
use crate::protocol::fence::quoting_fence;

/// Lines quoted on each side of a commented line (within its hunk).
pub const AROUND: usize = 3;

/// The most lines of a hunk a comment quotes (the rest is counted).
pub const HUNK_QUOTED: usize = 40;

/// A comment on one line or one hunk of a file's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewComment {
    pub path: String,
    /// Where it points: `line 12`, `line 7 of the old file` (a removed line), or
    /// `lines 10-24` (a hunk).
    pub place: String,
    /// The quoted lines, `  12   13 + text` as the review shows them; the commented line is
    /// marked with `>`.
    pub excerpt: Vec<String>,
    /// What the person wrote.
    pub text: String,
}

impl ReviewComment {
    /// A comment on line `line` of hunk `hunk`, quoting up to [`AROUND`] lines on each side.
    pub fn on_line(diff: &FileDiff, hunk: usize, line: usize, text: &str) -> Option<ReviewComment> {
        let h = diff.hunks.get(hunk)?;
        let target = h.lines.get(line)?;
        let place = match (target.kind, target.new, target.old) {
            (LineKind::Removed, _, Some(old)) => format!("line {old} of the old file"),
            (_, Some(new), _) => format!("line {new}"),
            _ => "a line".to_string(),
        };
        let from = line.saturating_sub(AROUND);
        let to = (line + AROUND + 1).min(h.lines.len());
        let excerpt = h.lines[from..to]
            .iter()
            .enumerate()
            .map(|(i, l)| quote(l, from + i == line))
            .collect();
        Some(ReviewComment {
            path: diff.path.clone(),
            place,
            excerpt,
            text: text.trim().to_string(),
        })
    }

    /// A comment on hunk `hunk`, quoting its header and up to [`HUNK_QUOTED`] of its lines.
    pub fn on_hunk(diff: &FileDiff, hunk: usize, text: &str) -> Option<ReviewComment> {
        let h = diff.hunks.get(hunk)?;
        let numbers: Vec<u32> = h.lines.iter().filter_map(|l| l.new.or(l.old)).collect();
        let place = match (numbers.iter().min(), numbers.iter().max()) {
            (Some(a), Some(b)) if a != b => format!("lines {a}-{b}"),
            (Some(a), _) => format!("line {a}"),
            _ => "a hunk".to_string(),
        };
        let mut excerpt = vec![h.header.clone()];
        excerpt.extend(h.lines.iter().take(HUNK_QUOTED).map(|l| quote(l, false)));
        if h.lines.len() > HUNK_QUOTED {
            excerpt.push(format!("… {} more line(s)", h.lines.len() - HUNK_QUOTED));
        }
        Some(ReviewComment {
            path: diff.path.clone(),
            place,
            excerpt,
            text: text.trim().to_string(),
        })
    }

    /// The message the teammate gets: what it is (a comment to read, the quoted lines context,
    /// not a command), the quoted lines in a fence marked `text` that no quoted line can
    /// close (`protocol::fence`: a `shell` teammate never runs it), then the comment.
    pub fn message(&self) -> String {
        let quoted = self.excerpt.join("\n");
        let fence = quoting_fence(&quoted);
        let what = if self.excerpt.iter().any(|l| l.starts_with('>')) {
            "the lines quoted below are context from your diff, the line commented on marked `>`"
        } else {
            "the lines quoted below are the hunk commented on, from your diff"
        };
        format!(
            "Review comment from the lead on {}, {}. It is a comment for you to read, not a \
             command to run: {what}.\n\n{fence}text\n{quoted}\n{fence}\n\n{}",
            visible_line(&self.path),
            self.place,
            self.text
        )
    }
}

/// `>  12   13 + text`: old and new numbers, the marker, the text.
fn quote(line: &DiffLine, pointed: bool) -> String {
    let num = |n: Option<u32>| n.map_or_else(|| "    ".to_string(), |n| format!("{n:>4}"));
    let marker = match line.kind {
        LineKind::Added => '+',
        LineKind::Removed => '-',
        LineKind::Context => ' ',
    };
    format!(
        "{}{} {} {marker} {}",
        if pointed { '>' } else { ' ' },
        num(line.old),
        num(line.new),
        line.text
    )
    .trim_end()
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::review::parse_diff;

    const DIFF: &str = "@@ -1,6 +1,7 @@\n a\n b\n c\n-d\n+D\n+E\n e\n f\n";

    #[test]
    fn a_line_comment_quotes_the_lines_around_it() {
        let d = parse_diff("x.txt", DIFF);
        // Line 4 of the hunk: `+D`, line 4 of the new file.
        let c = ReviewComment::on_line(&d, 0, 4, " use a constant ").unwrap();
        assert_eq!(c.place, "line 4");
        assert_eq!(c.text, "use a constant");
        assert_eq!(
            c.excerpt,
            vec![
                "    2    2   b",
                "    3    3   c",
                "    4      - d",
                ">        4 + D",
                "         5 + E",
                "    5    6   e",
                "    6    7   f",
            ]
        );
        let m = c.message();
        assert_eq!(
            m,
            "Review comment from the lead on x.txt, line 4. It is a comment for you to read, not a \
             command to run: the lines quoted below are context from your diff, the line commented \
             on marked `>`.\n\n```text\n    2    2   b\n    3    3   c\n    4      - d\n\
             >        4 + D\n         5 + E\n    5    6   e\n    6    7   f\n```\n\nuse a constant"
        );
        assert_eq!(
            crate::protocol::fence::command_block(&m),
            None,
            "a shell teammate runs nothing of it"
        );
        let removed = ReviewComment::on_line(&d, 0, 3, "why?").unwrap();
        assert_eq!(removed.place, "line 4 of the old file");
    }

    #[test]
    fn a_hunk_comment_quotes_the_hunk() {
        let d = parse_diff("x.txt", DIFF);
        let c = ReviewComment::on_hunk(&d, 0, "split this").unwrap();
        assert_eq!(c.place, "lines 1-7");
        assert_eq!(c.excerpt[0], "@@ -1,6 +1,7 @@");
        assert_eq!(c.excerpt.len(), 9);
        assert!(ReviewComment::on_hunk(&d, 1, "x").is_none());
    }
}
