//! The programs the tests run, found on PATH by one helper that also holds them to the list
//! `.ci/run` installs from (its `PROGRAMS` list): a test that needs a program nobody listed fails
//! at once, on every machine, instead of only on a fresh one where it was never installed.

use std::path::{Path, PathBuf};

/// The list `.ci/run` installs from (the lines between `<<'LIST'` and `LIST`), as (program,
/// install) pairs.
pub fn listed() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run");
    let text = std::fs::read_to_string(&path).expect("read .ci/run");
    text.lines()
        .skip_while(|line| !line.contains("<<'LIST'"))
        .skip(1)
        .take_while(|line| line.trim() != "LIST")
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?.to_string(), words.next()?.to_string()))
        })
        .collect()
}

/// Where `program` is on PATH. Panics with what to do when it is not in `.ci/run`'s list
/// (list it there, so .ci/run installs it) or not installed (run .ci/run).
pub fn required(program: &str) -> PathBuf {
    let Some((_, install)) = listed().into_iter().find(|(name, _)| name == program) else {
        panic!(
            "this test runs `{program}`, which .ci/run's PROGRAMS list does not name: add it there \
             (with its Debian package or crate) so that .ci/run installs it on a fresh machine"
        );
    };
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "this test needs `{program}` on PATH ({install}): run .ci/run, which installs it"
            )
        })
}
