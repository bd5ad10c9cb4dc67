#!/usr/bin/env bash
# What `make install` lays down, checked from the debug build in a scratch
# prefix (run by `make test`): the command runs, the man page renders and
# names every subcommand, and each completion script loads in its shell.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
bash Scripts/install.sh debug "$prefix" >/dev/null

fail() { echo "check-install: $*" >&2; exit 1; }
"$prefix/bin/strongroom" --help >/dev/null || fail "the installed command does not run"
page="$prefix/share/man/man1/strongroom.1"
[ -s "$page" ] || fail "no man page at $page"
# Each subcommand has its own entry (".It Em backup"), not just a mention.
for command in keygen status sql migrate verify baseline rekey backup import export fields; do
    grep -q "^\.It Em $command\$" "$page" || fail "the man page has no entry for $command"
done
if command -v man >/dev/null; then
    rendered=$(MANPATH="$prefix/share/man" man -P cat strongroom 2>/dev/null) || fail "man strongroom does not render the page"
    grep -q "^ *backup  *Copy a live database" <<<"$rendered" || fail "man strongroom does not show the backup entry"
fi
bash_completion="$prefix/share/bash-completion/completions/strongroom"
bash -c "source '$bash_completion' && complete -p strongroom" >/dev/null || fail "the bash completion does not load"
grep -q "#compdef strongroom" "$prefix/share/zsh/site-functions/_strongroom" || fail "no zsh completion"
grep -q "complete -c 'strongroom'" "$prefix/share/fish/vendor_completions.d/strongroom.fish" || fail "no fish completion"
echo "make install: command, man page and completions check out (scratch prefix, debug build)"
