#!/bin/sh
# Install treebox: the three binaries (cargo install), and beside them the man pages
# (so `git treebox --help` and `git help sandbox` open them: man finds
# <root>/share/man from <root>/bin on PATH) and the shell completions.
#
#   sh install.sh            # into ~/.cargo (or $CARGO_INSTALL_ROOT, $CARGO_HOME)
#   sh install.sh --debug    # extra arguments go to `cargo install`
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
"${CARGO:-cargo}" install --locked --path "$here" --root "$root" "$@"

man1="$root/share/man/man1"
mkdir -p "$man1"
cp "$here"/man/man1/*.1 "$man1/"

# bash-completion loads <name> from these dirs on first use of `git-<name>`; git's
# own completion calls `_git_treebox` / `_git_sandbox` for `git treebox …`.
bash_dir="$root/share/bash-completion/completions"
zsh_dir="$root/share/zsh/site-functions"
fish_dir="$root/share/fish/vendor_completions.d"
mkdir -p "$bash_dir" "$zsh_dir" "$fish_dir"
for tool in git-treebox git-sandbox; do
  cp "$here/completions/$tool.bash" "$bash_dir/$tool"
  cp "$here/completions/_$tool" "$zsh_dir/_$tool"
  cp "$here/completions/$tool.fish" "$fish_dir/$tool.fish"
done

echo "installed into $root: bin/, share/man/man1/, share/{bash-completion,zsh,fish}/"
case ":$PATH:" in
  *":$root/bin:"*) ;;
  *) echo "add $root/bin to your PATH: git finds \`git treebox\` there, and man its pages" ;;
esac
