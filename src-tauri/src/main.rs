//! The desktop app's entry point: it fixes glibc's mmap threshold, so the large blocks of big
//! replies (the 100k-frame outline) go back to the system when freed instead of staying in the
//! heap, withdraws the keys from the process environment before any other thread starts, and
//! tells GTK to leave OpenGL alone.

// Keep a release build on Windows from opening a console window beside the app.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    return_large_blocks_to_the_system();
    // Before any other thread starts: the keys are read from this copy, and no command the agent
    // runs can read them from this process (see `Environment::withdraw_secrets`).
    let withdrawn = flame_workspace::Environment::withdraw_secrets();
    // After the environment the agent's commands get was taken, so that they get the person's.
    leave_gl_alone();
    flame_desktop::run(withdrawn);
}

/// Sets `GDK_GL=disable` unless the person set `GDK_GL` themselves.
///
/// GTK opens OpenGL (GLX) with the display to choose the window's visual, which loads Mesa's
/// driver and, with it, LLVM. Nothing in the shell draws with GL: the window shows the web
/// view, which paints without the GPU (`webkit.rs`). Without it the app's processes hold about
/// 6 MiB less when idle (`app.idle_rss`), WebKit's web process most of it.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn leave_gl_alone() {
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: called from `main` before any other thread exists, so nothing reads the
        // environment while it changes.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
}

#[cfg(not(target_os = "linux"))]
fn leave_gl_alone() {}

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
