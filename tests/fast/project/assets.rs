//! `assets/`: the README's three pictures exist, are SVG made by the screenshot script, and
//! the README shows them, as it shows the web view's PNG at a phone's size; the script is there
//! and executable; the demo's task graph and the example config are the files the binary embeds
//! (the config's text is checked against `teamlead config init` in `cli_config.rs`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_readme_shows_the_three_pictures() {
    let readme = read(&root().join("README.md"));
    for picture in ["lead.svg", "teams.svg", "permission.svg"] {
        let svg = read(&root().join("assets").join(picture));
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{picture}"
        );
        assert!(svg.trim_end().ends_with("</svg>"), "{picture}");
        assert!(svg.contains("<text"), "{picture} shows text");
        assert!(
            readme.contains(&format!("](assets/{picture})")),
            "README.md shows assets/{picture}"
        );
    }
    let teams = read(&root().join("assets/teams.svg"));
    assert!(
        teams.contains("Team demo"),
        "the teams dialog is on the picture"
    );
    let permission = read(&root().join("assets/permission.svg"));
    assert!(
        permission.contains("needs permission"),
        "the permission dialog is on it"
    );
}

/// The web view's picture: a PNG of a phone's viewport (390×844 at twice the pixels), small
/// enough for the repository, shown by the README, made by the ignored browser test.
#[test]
fn the_readme_shows_the_web_view_at_a_phones_size() {
    let png = std::fs::read(root().join("assets/web-phone.png")).expect("assets/web-phone.png");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let dim = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!(
        (dim(16), dim(20)),
        (780, 1688),
        "390×844 at twice the pixels"
    );
    assert!(png.len() < 300 * 1024, "{} bytes", png.len());
    let readme = read(&root().join("README.md"));
    assert!(
        readme.contains("src=\"assets/web-phone.png\""),
        "README.md shows it"
    );
    assert!(
        readme.contains("server::web_screenshot::web_phone_screenshot")
            && root().join("tests/slow/server/web_screenshot.rs").exists(),
        "the README says how it is made"
    );
}

#[test]
fn the_screenshot_script_is_there_and_uses_a_private_tmux_server() {
    let path = root().join("assets/make-screenshots.sh");
    let mode = std::fs::metadata(&path)
        .expect("the script")
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, "executable");
    let script = read(&path);
    assert!(script.contains("tmux -L \"$socket\""), "a private server");
    assert!(
        script.contains("-f /dev/null"),
        "no tmux config of the user's"
    );
    assert!(script.contains("capture-pane -e -p"));
    assert!(root().join("examples/ansi_svg.rs").exists(), "the renderer");
}

#[test]
fn the_embedded_assets_are_the_files() {
    assert_eq!(
        teamlead::config::EXAMPLE,
        read(&root().join("assets/config.example.toml"))
    );
    assert_eq!(
        teamlead::lead::demo::DEMO_TASKS,
        read(&root().join("assets/demo-tasks.toml"))
    );
}
