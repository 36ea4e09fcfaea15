# Helpers shared by tests/kernels/run.sh and dkms.sh (sourced after
# tests/vm/lib.sh, with $top, $here, $out set and pass/fail defined).

# The installed Debian 6.1 kernel (what the VM suites boot): no fetch.
env_of() {	# kernel -> sets KVER KDIR IMAGE MODDIR CC
	if [ "$1" = 6.1 ]; then
		KVER=$(KVER= find_kver 2>/dev/null) || return 1
		KDIR=/lib/modules/$KVER/build IMAGE=/boot/vmlinuz-$KVER
		MODDIR=/lib/modules/$KVER CC=gcc
		[ -d "$KDIR" ] && [ -f "$IMAGE" ]
	else
		# shellcheck disable=SC1090
		. "$out/$1/env"
	fi
}

