# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by tests/packaging/*.sh.
# copy_source SRC DEST: the source a package is built from, into the
# existing directory DEST: in a git checkout the tracked files and the
# new ones git does not ignore, as they are in the working tree (no
# build directory); elsewhere everything but build*/.
copy_source() {
	if git -C "$1" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$1" ls-files -z --cached --others --exclude-standard |
			(cd "$1" && xargs -0 cp --parents -t "$2")
	else
		tar -C "$1" --exclude='./build*' -cf - . | tar -C "$2" -xf -
	fi
}
