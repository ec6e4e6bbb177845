//! Cheap self-measurements of this process (Linux `/proc/self`), used to check that idle
//! in-process teammates cost little: resident memory, thread count and CPU time.

/// Resident set size in KiB (`VmRSS`), if the platform tells.
pub fn rss_kib() -> Option<u64> {
    status_field("VmRSS:")
}

/// Threads of this process (`Threads`), if the platform tells.
pub fn threads() -> Option<u64> {
    status_field("Threads:")
}

fn status_field(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// User + system CPU time of this process, in clock ticks (`/proc/self/stat` fields 14, 15).
pub fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): utime is field 14 → index 11, stime index 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`).
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}
