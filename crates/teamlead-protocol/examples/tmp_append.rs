use std::time::Instant;
use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{Home, inbox};
fn main() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let home = Home::new(dir.path());
    let mut v = Vec::new();
    for n in 0..400 {
        let t = Instant::now();
        inbox::append(
            &home,
            "t",
            "alice",
            &InboxEntry::new("team-lead", format!("ping-{n}")),
        )
        .unwrap();
        if n >= 100 {
            v.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "append p50 {:.2} p90 {:.2} p99 {:.2} ms",
        v[150], v[270], v[297]
    );
}
