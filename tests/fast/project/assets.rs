//! `assets/`: the README's three pictures exist, are SVG made by the screenshot script, and
//! the README shows them; the script is there and executable; the demo's task graph and the
//! example config are the files the binary embeds (the config's text is checked against
//! `teamlead config init` in `cli_config.rs`).

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
