//! A fingerprint of a whole home tree that never follows a link and never opens anything but
//! a regular file: every path with its type, permission bits, content hash (regular files) or
//! link target. Equal fingerprints mean nothing was written, created, removed or re-moded.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The deepest directory level looked at.
const MAX_DEPTH: usize = 32;

/// path → "type mode hash-or-target".
pub type Tree = BTreeMap<PathBuf, String>;

pub fn fingerprint(root: &Path) -> Tree {
    let mut out = Tree::new();
    walk(root, root, 0, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Tree) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let t = meta.file_type();
        let mode = meta.permissions().mode() & 0o7777;
        let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        let what = if t.is_symlink() {
            format!(
                "link -> {}",
                std::fs::read_link(&path).unwrap_or_default().display()
            )
        } else if t.is_dir() {
            if depth < MAX_DEPTH {
                walk(root, &path, depth + 1, out);
            }
            format!("dir {mode:o}")
        } else if t.is_file() {
            let hash = std::fs::read(&path)
                .map(|b| format!("{:x}", Sha256::digest(&b)))
                .unwrap_or_else(|e| format!("unreadable {e}"));
            format!("file {mode:o} {hash}")
        } else if t.is_fifo() {
            format!("fifo {mode:o}")
        } else {
            format!("special {mode:o}")
        };
        out.insert(rel, what);
    }
}

/// The paths that differ, each with what it was and is ("-" for absent).
pub fn changes(before: &Tree, after: &Tree) -> Vec<(PathBuf, String, String)> {
    let mut out = Vec::new();
    for (p, was) in before {
        match after.get(p) {
            Some(now) if now == was => {}
            Some(now) => out.push((p.clone(), was.clone(), now.clone())),
            None => out.push((p.clone(), was.clone(), "-".into())),
        }
    }
    for (p, now) in after {
        if !before.contains_key(p) {
            out.push((p.clone(), "-".into(), now.clone()));
        }
    }
    out
}
