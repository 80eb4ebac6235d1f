//! The WebKitGTK setting that keeps the window's web process small on Linux.
//!
//! The window is one page that draws nothing that needs the GPU: the flame graph is a 2D canvas,
//! and everything else is text. In WebKit's accelerated compositing mode the web process keeps
//! the page's layers in GL buffers — under Mesa's software renderer, which is what most of these
//! machines have, about 85 MiB of them for this window when it is idle (issue 19, `app.idle_rss`).
//! With hardware acceleration off WebKit paints the page into one shared image the shell shows.

#[cfg(target_os = "linux")]
use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};

/// Turns hardware acceleration off in `window`'s webview. A webview that cannot be reached keeps
/// WebKit's default, which costs memory but works, so a failure is logged rather than returned.
pub(crate) fn paint_without_gpu<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    let applied = window.with_webview(|webview| {
        #[cfg(target_os = "linux")]
        if let Some(settings) = WebViewExt::settings(&webview.inner()) {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = webview;
    });
    if let Err(err) = applied {
        tracing::warn!("could not turn the webview's hardware acceleration off: {err}");
    }
}
