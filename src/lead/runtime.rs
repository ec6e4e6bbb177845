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

/// How long a thread of the blocking pool that has nothing to do stays (tokio's default is
/// 10 s). A burst (a hundred spawns, a hundred teammates answering at once) starts up to
/// [`BLOCKING_THREADS`] threads, each with its stack pages and its share of an arena touched;
/// they leave a second after the burst instead of ten, so an idle lead holds what its idle
/// teammates need, not what the last burst did. A new burst starts threads again (tens of
/// microseconds each).
pub const BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(1);

/// The most malloc arenas of a teamlead process (glibc's default is eight per core, one per
/// thread as threads come): the lead allocates little at once, and each arena a pool thread
/// made stayed resident.
pub const MALLOC_ARENAS: i32 = 4;

/// A multi-threaded runtime with the bounded blocking pool (the arenas are limited once, at
/// the process's start: [`limit_malloc_arenas`]).
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .on_thread_stop(return_free_memory)
        .enable_all()
        .build()
}

/// A thread of the runtime ends: a blocking thread whose burst is over (the workers end only
/// with the runtime). The heap the burst freed goes back to the system (glibc keeps freed
/// memory in its arenas otherwise, and a burst's jobs freed most of what they took); it runs
/// on the ending thread, never on the loop.
fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
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
