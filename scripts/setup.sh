#!/usr/bin/env bash
# Installs what Flame needs on a Debian 12 machine, and only what is missing, so a second run
# takes about a second. Called by `make setup`, `make run` and `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

# Debian packages: the toolchain for the C parts of crates, WebKitGTK and GTK for the window,
# Xvfb to run it without a desktop, WebKitWebDriver for the end-to-end tests, git, which
# keeps the workspace checkpoints (flame-checkpoint runs the git program), and bubblewrap, the
# sandbox the agent's commands run in (flame-workspace runs bwrap).
PACKAGES=(
  build-essential pkg-config libssl-dev libdbus-1-dev git bubblewrap
  libwebkit2gtk-4.1-dev libgtk-3-dev libsoup-3.0-dev libjavascriptcoregtk-4.1-dev librsvg2-dev
  xvfb xauth webkit2gtk-driver
)

missing=()
for package in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Rust: the pinned toolchain comes from rustup, which Debian does not ship in a usable version.
command -v cargo >/dev/null \
  || die "cargo is missing: install Rust with rustup (https://rustup.rs), then run make again"
toolchain=$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)
rustc --version >/dev/null 2>&1 \
  || die "the Rust toolchain $toolchain (rust-toolchain.toml) is missing: rustup toolchain install $toolchain"

# Node: Vite needs Node 20.19 or newer; Debian 12's own nodejs is 18.
command -v node >/dev/null || die "node is missing: install Node.js 20.19 or newer"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || die "node $(node --version) is too old: Flame's UI build needs Node.js 20.19 or newer"

# npm packages, exactly as package-lock.json says, whenever the lock file changed.
if [ ! -f node_modules/.flame-installed ] || [ package-lock.json -nt node_modules/.flame-installed ]; then
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund
  touch node_modules/.flame-installed
fi

# tauri-driver bridges WebDriver to WebKitWebDriver for the end-to-end tests.
driver="${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver"
if [ ! -x "$driver" ]; then
  say "installing tauri-driver"
  cargo install tauri-driver --locked --version '^2'
fi
