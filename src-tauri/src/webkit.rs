//! WebKitGTK settings for the window's webview that keep the app's memory down on Linux.
//!
//! The window is one page that never navigates and draws nothing that needs the GPU (the flame
//! graph is a 2D canvas), so WebKit's browser defaults only cost memory here:
//! - Hardware acceleration off: in accelerated compositing mode the web process keeps its layers
//!   in GL buffers (under Mesa's software renderer, about 60 MB of them for this window), where
//!   without it WebKit paints the page once into one image the shell shows.
//! - The `DocumentViewer` cache model: no page cache and the smallest memory caches, which a
//!   browser sizes for pages visited again.

#[cfg(target_os = "linux")]
use webkit2gtk::{CacheModel, HardwareAccelerationPolicy, SettingsExt, WebContextExt, WebViewExt};

/// Applies the settings to `window`'s webview. A window whose webview cannot be reached keeps
/// WebKit's defaults, which only cost memory, so a failure is logged rather than returned.
pub(crate) fn keep_memory_down<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    let applied = window.with_webview(|webview| {
        #[cfg(target_os = "linux")]
        {
            let view = webview.inner();
            if let Some(context) = view.context() {
                context.set_cache_model(CacheModel::DocumentViewer);
            }
            if let Some(settings) = WebViewExt::settings(&view) {
                settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
                settings.set_enable_page_cache(false);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = webview;
    });
    if let Err(err) = applied {
        tracing::warn!("could not set the webview's memory settings: {err}");
    }
}
