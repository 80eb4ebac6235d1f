#!/usr/bin/env bash
# Builds Flame's Debian package with Tauri's bundler: the app (`/usr/bin/flame-desktop`, its desktop
# entry and icons) and the `flame` command line (`/usr/bin/flame`). Called by `make package`, after
# `make setup` and `make ui`. The package is made from the root `tauri.conf.json`, the config the
# app itself is compiled with, so the two cannot disagree.
#
# `scripts/package.sh --binaries` only builds the two programs the package ships, in
# target/package/dist/: `make bench` measures the app's size there.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'package: %s\n' "$*"; }
die() { printf 'package: %s\n' "$*" >&2; exit 1; }

# A target directory of its own: `make test` and `make bench` build elsewhere with other feature
# sets, so neither rebuilds what the other compiled.
export CARGO_TARGET_DIR="$PWD/target/package"
# The programs are built with the `dist` profile (the root Cargo.toml: the release build made
# small, with whole-program optimisation). The Tauri CLI's `bundle` takes no profile and reads the
# release folder, so that folder is the bundler's input: the dist binaries are copied into it, at
# the paths `bundle.linux.deb.files` names in tauri.conf.json, and nothing else builds there.
dist="$CARGO_TARGET_DIR/dist"
release="$CARGO_TARGET_DIR/release"
deb_dir="$release/bundle/deb"

say "building the programs (flame-desktop, flame) with the dist profile in target/package"
"${CARGO:-cargo}" build --profile dist --locked -p flame-desktop -p flame-cli
[ "${1:-}" = "--binaries" ] && exit 0

# The package's version is the config's, the programs' is the workspace's: they must be the same.
config_version=$(node -p 'JSON.parse(require("fs").readFileSync("tauri.conf.json", "utf8")).version')
cli_version=$("$dist/flame" --version)
[ "$cli_version" = "flame $config_version" ] \
  || die "'flame --version' says '$cli_version' but tauri.conf.json's version is $config_version"

# Bundling again is only needed when something the package is made of is newer than it.
deb="$deb_dir/Flame_${config_version}_$(dpkg --print-architecture).deb"
inputs=("$dist/flame-desktop" "$dist/flame" tauri.conf.json icons scripts/package.sh)
if [ -f "$deb" ] && [ -z "$(find "${inputs[@]}" -newer "$deb" -print -quit)" ]; then
  say "$deb is up to date"
else
  mkdir -p "$release"
  cp "$dist/flame-desktop" "$dist/flame" "$release/"
  # The Tauri CLI takes the folder holding tauri.conf.json for the app crate, so it is given a copy
  # beside src-tauri/Cargo.toml for the few seconds it bundles, with the root config's relative
  # paths rebased onto src-tauri/ (the CLI resolves them from there). Nothing else reads the copy:
  # cargo builds read the root config (src-tauri/build.rs), and tidy checks the copy is gone.
  staged=src-tauri/tauri.conf.json
  trap 'rm -f "$staged"' EXIT
  node --input-type=module - "$staged" <<'JS'
import { readFileSync, writeFileSync } from "node:fs";
const config = JSON.parse(readFileSync("tauri.conf.json", "utf8"));
const rebase = (path) => (path.startsWith("/") ? path : `../${path}`);
const bundle = config.bundle;
// Other path-valued settings would need rebasing too; refuse them rather than bundle wrong files.
for (const key of ["resources", "externalBin", "licenseFile", "fileAssociations"]) {
  if (key in bundle) throw new Error(`scripts/package.sh does not rebase bundle.${key} yet`);
}
config.build.frontendDist = rebase(config.build.frontendDist);
bundle.icon = bundle.icon.map(rebase);
const files = bundle.linux?.deb?.files ?? {};
for (const target of Object.keys(files)) files[target] = rebase(files[target]);
writeFileSync(process.argv[2], JSON.stringify(config, null, 2) + "\n");
JS
  rm -f "$deb_dir"/*.deb
  say "bundling the .deb with the Tauri CLI (@tauri-apps/cli from package-lock.json)"
  (cd src-tauri && ../node_modules/.bin/tauri bundle --bundles deb --ci)
  # The bundler writes flame-desktop back after packing a patched copy, so the binary ends newer
  # than the .deb; dating the .deb now keeps the next run from bundling again for nothing.
  touch -c "$deb"
  rm -f "$staged"
  trap - EXIT
fi
[ -f "$deb" ] || die "the Tauri bundler made no $deb"

# What a person installing the package needs, checked in the package itself (the bundler writes
# the archive's paths without a leading "./"; dpkg-deb lists them as they are).
contents=$(dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./||')
for path in usr/bin/flame-desktop usr/bin/flame usr/share/applications/Flame.desktop \
  usr/share/icons/hicolor/32x32/apps/flame-desktop.png \
  usr/share/icons/hicolor/128x128/apps/flame-desktop.png; do
  grep -qxF "$path" <<<"$contents" || die "$deb lacks /$path"
done
# The package ships the dist builds: the bundler writes the bundle type into the app's binary in
# place, which keeps its size, so each program in the package is as large as its dist build.
for program in flame-desktop flame; do
  packed=$(dpkg-deb -c "$deb" | awk -v path="usr/bin/$program" '{p=$NF; sub(/^\.\//, "", p)} p == path {print $3}')
  built=$(stat -c %s "$dist/$program")
  [ "$packed" = "$built" ] \
    || die "/usr/bin/$program in $deb has $packed bytes, its dist build $built: not the dist build"
done
desktop=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*usr/share/applications/Flame.desktop')
for line in "Exec=flame-desktop" "Icon=flame-desktop" "Name=Flame" "Type=Application"; do
  grep -qxF "$line" <<<"$desktop" || die "the desktop entry in $deb lacks the line $line"
done
say "$deb ($(du -h "$deb" | cut -f1)): $(dpkg-deb -f "$deb" Package Version Depends | paste -sd' ')"
