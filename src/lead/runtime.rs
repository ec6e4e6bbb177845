//! The runtime a lead runs on (`teamlead`, `teamlead serve`, and the benches that measure
//! them), and the process's allocator limits. A burst of work on files (a hundred spawns at
//! once) used to start a thread of tokio's blocking pool per job (up to 512), and glibc gave
//! each new thread an arena of its own that stayed after the thread went: 100 idle in-process
//! teammates cost ~125 KiB each in VmRSS, of which ~13 KiB was theirs. The pool is bounded
//! ([`BLOCKING_THREADS`]: no job on it waits for another job on it; long waits are async
//! jobs), and the arenas are limited ([`MALLOC_ARENAS`]): docs/DESIGN.md, "Memory".

/// The most threads of the blocking pool (tokio's default is 512). Blocking jobs are short
/// file, lock, git and pane work, each lane one job at a time; a wait for something the loop
/// must see first (a plan verdict's turn end) is an async job, so a full pool only queues.
pub const BLOCKING_THREADS: usize = 64;

/// The most malloc arenas of a teamlead process (glibc's default is eight per core, one per
/// thread as threads come): the lead allocates little at once, and each arena a pool thread
/// made stayed resident.
pub const MALLOC_ARENAS: i32 = 4;

/// A multi-threaded runtime with the bounded blocking pool (the arenas are limited once, at
/// the process's start: [`limit_malloc_arenas`]).
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
}

/// Limits this process's malloc arenas to [`MALLOC_ARENAS`] (glibc only; elsewhere nothing).
/// Called before the process starts its threads.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; M_ARENA_MAX takes any positive value.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
    }
}
