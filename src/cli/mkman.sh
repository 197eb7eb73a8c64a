#!/bin/sh
# mkman.sh MDSD VERSION > mdsd.1 - the man page of mdsd, made from its help texts
# (`mdsd --help` and `mdsd COMMAND --help`), so that it never disagrees with them.
set -eu
mdsd=$1
version=$2
# roff: escape backslashes, and a leading . or ' on a line.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
printf '.TH MDSD 1 "" "mdsd %s" "User Commands"\n' "$version"
printf '.SH NAME\nmdsd \\- multi-draft speculative decoding: optimal acceptance rates, verifiers, batch tables\n'
printf '.SH SYNOPSIS\n.B mdsd\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n'
printf '.SH DESCRIPTION\n.nf\n'
"$mdsd" --help | esc
printf '.fi\n'
for cmd in $("$mdsd" --help | awk '/^Commands:/ {on = 1; next} on && NF == 0 {on = 0} on {print $1}'); do
    printf '.SH "mdsd %s"\n.nf\n' "$cmd"
    "$mdsd" "$cmd" --help | esc
    printf '.fi\n'
done
printf '.SH SEE ALSO\nThe library: \\fBpkg-config --cflags --libs mdsd\\fR, headers <mdsd/mdsd.h>; the Python package \\fBmdsd\\fR; \\fBmdsd-runner --help\\fR.\n'
