#!/usr/bin/env bash
# Installs the `strongroom` command of the given build configuration under a
# prefix: bin/strongroom, share/man/man1/strongroom.1 (swift-argument-parser's
# generate-manual plugin) and bash, zsh and fish completions (the command's own
# --generate-completion-script). `make install` runs it for the release build;
# `make test` runs it for the debug build into a scratch prefix and checks it.
#
# Usage: Scripts/install.sh CONFIGURATION PREFIX
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=${1:?configuration (release or debug)}
prefix=${2:?prefix}
binary=".build/$configuration/strongroom"
[ -x "$binary" ] || { echo "install: $binary is not built; run make build" >&2; exit 1; }

swift package --allow-writing-to-package-directory generate-manual --configuration "$configuration" \
    --authors "Strongroom contributors" >/dev/null
manual=.build/plugins/GenerateManual/outputs/StrongroomCLI/strongroom.1
completions=$(mktemp -d)
trap 'rm -rf "$completions"' EXIT
for shell in bash zsh fish; do
    "$binary" --generate-completion-script "$shell" >"$completions/$shell"
done

# sudo (or $SUDO) only when the prefix is not writable, and not as root.
run=""
if ! { mkdir -p "$prefix/share" 2>/dev/null && [ -w "$prefix" ] && [ -w "$prefix/share" ]; }; then
    [ "$(id -u)" = 0 ] || run=${SUDO:-sudo}
fi
$run install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
    "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d"
$run install -m 755 "$binary" "$prefix/bin/strongroom"
$run install -m 644 "$manual" "$prefix/share/man/man1/strongroom.1"
$run install -m 644 "$completions/bash" "$prefix/share/bash-completion/completions/strongroom"
$run install -m 644 "$completions/zsh" "$prefix/share/zsh/site-functions/_strongroom"
$run install -m 644 "$completions/fish" "$prefix/share/fish/vendor_completions.d/strongroom.fish"
echo "installed $prefix/bin/strongroom, its man page (man strongroom) and bash, zsh and fish completions"
