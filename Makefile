# SPDX-License-Identifier: GPL-2.0
#
# make            build kweb.ko for KDIR (default: the running kernel)
# make run        boot a guest serving examples/www on http://127.0.0.1:8080/
# make check      everything: lint, both kernels, KUnit, integration tests
# make quick      the fast loop: stock 6.12 integration tests only
# make lint       checkpatch, sparse (C=2) and W=1 against both kernels,
#                 man pages (scripts/man-check.py)
# make ynl-regen  regenerate uapi/linux/kweb.h, kmod/nl_gen.[ch] from uapi/kweb.yaml
# make kwebctl    build userctl/kwebctl (libmnl)
# make deb        Debian packages kweb-dkms and kweb-tools in build/deb/
# make bench      kweb against nginx in a 2-vCPU guest (KERNEL=6.12 or 6.1;
#                 KVM=1 to use KVM; BENCH_ARGS="--rounds 7" to bench/guest.py)
# make bench-smoke  the same, one short round (make check runs it too)
# make soak       10 minutes of everything at once on the debug kernel
#                 (SOAK_ARGS="--kernel 6.12 --minutes 2" for a quicker loop)
# make tls-judge  testssl.sh and Chromium against kweb's HTTPS and nginx's,
#                 side by side (docs/tls.md)

KDIR ?= /lib/modules/$(shell uname -r)/build
BUILD ?= $(CURDIR)/build/$(notdir $(realpath $(KDIR)))

all: modules

# Kbuild before 6.13 writes objects next to their sources, so each kernel
# gets its own copy of the tree under build/.
modules:
	@mkdir -p $(BUILD)
	@rsync -a --delete-excluded --include='*/' --include='Kbuild' \
		--include='*.[ch]' --exclude='*' \
		Kbuild $(wildcard kmod kunit uapi) $(BUILD)/
	$(MAKE) -C $(KDIR) M=$(BUILD) $(if $(W),W=$(W)) $(if $(C),C=$(C)) modules
	@echo "built $(BUILD)/kweb.ko"

run:
	scripts/run.sh

check:
	scripts/check.sh

quick:
	scripts/check.sh --quick

lint:
	scripts/lint.sh

ynl-regen:
	scripts/ynl-regen.sh

kwebctl:
	$(MAKE) -C userctl

deb:
	scripts/deb.sh

KERNEL ?= 6.12
bench:
	scripts/bench.sh --kernel $(KERNEL) $(if $(filter 1,$(KVM)),--kvm) \
		$(if $(BENCH_ARGS),-- $(BENCH_ARGS))

bench-smoke:
	scripts/bench.sh --kernel $(KERNEL) --smoke $(if $(filter 1,$(KVM)),--kvm)

soak:
	scripts/soak.sh $(SOAK_ARGS)

tls-judge:
	scripts/tls-judge.sh

clean:
	rm -rf build
	$(MAKE) -C userctl clean

.PHONY: all modules run check quick lint ynl-regen kwebctl deb bench bench-smoke soak tls-judge clean
