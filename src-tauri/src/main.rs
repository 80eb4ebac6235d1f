//! The desktop app's entry point: it fixes glibc's mmap threshold, so the large blocks of big
//! replies (the 100k-frame outline) go back to the system when freed instead of staying in the
//! heap, and withdraws the keys from the process environment before any other thread starts.

// Keep a release build on Windows from opening a console window beside the app.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    return_large_blocks_to_the_system();
    // Before any other thread starts: the keys are read from this copy, and no command the agent
    // runs can read them from this process (see `Environment::withdraw_secrets`).
    let withdrawn = flame_workspace::Environment::withdraw_secrets();
    flame_desktop::run(withdrawn);
}

/// Fixes glibc's mmap threshold at its default of 128 KiB.
///
/// glibc raises the threshold to the size of every large block freed, up to 32 MiB, so after
/// the window's first big replies (the 100k-frame outline is about 10 MB of JSON) later blocks
/// of that size come from the heap, and the heap keeps them resident once freed. Fixing the
/// threshold keeps every large block in a mapping of its own, returned to the system when it is
/// freed: 46 MiB less resident in the shell with the 100k-frame tree open (issue 19).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn return_large_blocks_to_the_system() {
    // SAFETY: `mallopt` only changes the allocator's parameters and takes plain integers; it is
    // called first thing in `main`, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_blocks_to_the_system() {}
