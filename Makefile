# SPDX-License-Identifier: GPL-2.0
#
# psi_mod: top-level Makefile. Kbuild (the file named Kbuild) builds the
# module; this file wraps it and runs the tests.
#
#   make demo    boot a psi=0 Debian kernel in QEMU, load psi_mod, watch it
#   make check   the whole test suite (unit, lint, VM); last line: N passed, N failed
#   make module  build psi_mod.ko (KVER=<kernel release> or KDIR=<build dir>)
#   make install install it for that kernel (modules_install, depmod)
#   make dkms-install / dkms-uninstall   the same through DKMS

# The kernel to build for: the running one if its headers are installed
# (a real machine), else the newest installed Debian 6.1 kernel (the one the
# VM tests boot).
KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else ls -d /lib/modules/6.1.*/build 2>/dev/null | sort -V | tail -n 1 | \
	cut -d/ -f4; fi)
KDIR ?= /lib/modules/$(KVER)/build

# dkms.conf's PACKAGE_VERSION is the one version source.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
DKMS_SRC := /usr/src/psi-mod-$(VERSION)

.PHONY: all module install dkms-install dkms-uninstall version clean deps \
	unit lint vm check demo compare oracle check-debug check-kernels check-all \
	check-system bench deb

all: module

# Install what is missing (Debian 12, as root).
deps:
	tests/deps.sh

# The whole suite; the last line is "check: N passed, N failed".
check: deps
	tests/check.sh $(KDIR)

lint: deps
	tests/check.sh $(KDIR) lint

unit:
	tests/check.sh $(KDIR) unit

vm: deps
	tests/check.sh $(KDIR) vm

# The lanes CI does not run in full (see README.md, "Tests").
compare: deps
	tests/vm/compare.sh

# psi_mod against per-task delays (schedstat, taskstats) that need no
# kernel PSI; wants an otherwise idle host (docs/accuracy.md, "Oracle")
oracle: deps
	tests/vm/oracle.sh

check-debug: deps
	tests/vm/reliability.sh --debug-vm
	tests/vm/reliability.sh --debug

check-kernels: deps
	tests/kernels/run.sh

# A Debian 12 system with systemd booted under QEMU: psi_mod from its .deb,
# loaded at boot, read by node_exporter, Prometheus, atop, htop,
# low-memory-monitor (tests/system/run.sh; also part of make check)
check-system: deps
	tests/check.sh $(KDIR) system

check-all: check check-kernels check-debug compare

bench: deps
	bench/run.sh

deb:
	packaging/build-deb.sh

# Boot a psi=0 Debian kernel in QEMU, load psi_mod, watch /proc/pressure.
demo: deps
	tests/vm/demo.sh

module:
	@test -d "$(KDIR)" || { echo "no kernel build dir at '$(KDIR)': install linux-headers or run 'make deps'"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# Into /lib/modules/<kver>/updates, then depmod, so that modprobe finds it.
install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)

# The sources to /usr/src/psi-mod-<version>; DKMS builds and installs the
# module for every kernel with headers, and again for each new kernel.
dkms-install:
	@command -v dkms >/dev/null || { echo "dkms is not installed: apt-get install dkms"; exit 1; }
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/src $(DKMS_SRC)/include
	install -m 0644 dkms.conf Kbuild $(DKMS_SRC)/
	install -m 0644 src/*.c $(DKMS_SRC)/src/
	install -m 0644 include/*.h $(DKMS_SRC)/include/
	dkms add psi-mod/$(VERSION)
	dkms install psi-mod/$(VERSION) -k $(KVER)

dkms-uninstall:
	-dkms remove psi-mod/$(VERSION) --all
	rm -rf $(DKMS_SRC)

version:
	@echo $(VERSION)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf build tests/unit/bin
