#!/bin/sh
# on_own_disk.sh SIZE MODE FOLDER AFTER COMMAND...
#
# Runs COMMAND with FOLDER on a disk of its own, as a user's store on a small or read-only
# disk is: a tmpfs of SIZE (as mount's `size=` takes it), mounted over FOLDER in a private
# mount namespace and holding a copy of FOLDER's files; read-only when MODE is `ro`. When
# COMMAND ends, the disk's files are copied to AFTER (for the test to look at) and the mount
# goes with the namespace: nothing of it is left on the machine, whatever happens. Exits
# with COMMAND's status (90-92: the disk could not be made).
#
# As root this needs nothing more; another user is mapped to root in a user namespace.
set -u
if [ -z "${ON_OWN_DISK_INSIDE:-}" ]; then
    export ON_OWN_DISK_INSIDE=1
    if [ "$(id -u)" = 0 ]; then
        exec unshare --mount --propagation private "$0" "$@"
    fi
    exec unshare --user --map-root-user --mount --propagation private "$0" "$@"
fi
size=$1 mode=$2 folder=$3 after=$4
shift 4
saved=$(mktemp -d) || exit 90
cp -a "$folder/." "$saved/" || exit 90
mount -t tmpfs -o "size=$size" tmpfs "$folder" || exit 90
cp -a "$saved/." "$folder/" || exit 91
rm -rf "$saved"
if [ "$mode" = ro ]; then
    mount -o remount,ro "$folder" || exit 92
fi
"$@"
status=$?
mkdir -p "$after" && cp -a "$folder/." "$after/"
exit "$status"
